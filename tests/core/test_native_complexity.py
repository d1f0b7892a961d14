"""The C extension stays easy to change (issue 28): no C function of it is over 80 lines
or has a cyclomatic complexity over 25, measured by lizard (the `test` extra) over every
C file and header of the extension (docs/design/native.md, "Files").

Without lizard the module is skipped, with the reason shown; it never passes unmeasured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

lizard = pytest.importorskip(
    "lizard", reason="lizard is not installed: pip install -e '.[test]' (the C complexity gate)")

MAX_LINES = 80
MAX_CCN = 25

_CORE = Path(__file__).resolve().parents[2] / "src" / "maxrepeat" / "core"
_SOURCES = sorted([*_CORE.glob("*.c"), *_CORE.glob("*.h")])


def _over(path: str, code: str) -> list[str]:
    """The functions of one C source over either limit, as 'name (line): n lines, CCN c'."""
    info = lizard.analyze_file.analyze_source_code(path, code)
    return [f"{f.name} ({path}:{f.start_line}): {f.length} lines, CCN {f.cyclomatic_complexity}"
            for f in info.function_list
            if f.length > MAX_LINES or f.cyclomatic_complexity > MAX_CCN]


def test_the_extension_sources_are_measured() -> None:
    """Every file of the extension is found, and lizard reads the functions of each .c."""
    names = {p.name for p in _SOURCES}
    assert {"_native.c", "_near.c", "_nearnorm.c", "_nearrewrite.c", "_native.h",
            "_walk.h"} <= names, names
    for path in _SOURCES:
        if path.suffix == ".c":
            info = lizard.analyze_file.analyze_source_code(
                str(path), path.read_text(encoding="utf-8"))
            assert len(info.function_list) >= 5, path.name


@pytest.mark.parametrize("path", _SOURCES, ids=lambda p: p.name)
def test_no_c_function_over_80_lines_or_ccn_25(path: Path) -> None:
    assert _over(str(path), path.read_text(encoding="utf-8")) == []


def test_the_gate_sees_a_function_over_either_limit() -> None:
    """The check fails on what it is for: a long function, and a branchy one."""
    long_body = "".join(f"    x += {i};\n" for i in range(MAX_LINES))
    long_fn = f"static int long_fn(int x) {{\n{long_body}    return x;\n}}\n"
    branches = "".join(f"    if (x == {i}) return {i};\n" for i in range(MAX_CCN))
    branchy = f"static int branchy(int x) {{\n{branches}    return -1;\n}}\n"
    fine = "static int fine(int x) {\n    return x > 0 && x < 9;\n}\n"
    over = _over("probe.c", long_fn + branchy + fine)
    assert [o.split(" ")[0] for o in over] == ["long_fn", "branchy"], over
