"""The last parity classes of `tools` patterns against V8 (issue 31, R1-R4), each with
V8's own answers (Node 20, V8 11.3) written out; `test_campaign_regexp.py` keeps
checking them against Node itself."""

from __future__ import annotations

import time

import pytest

from maxrepeat.core.toolmatch import PatternSyntaxError, compile_pattern

NAMES = ["", "a", "b", "ab", "a" * 30]


@pytest.mark.parametrize(("pattern", "expected"), [
    ("(?:){99999999999}", [True] * 5),
    ("x|(?:){99999999999}", [True] * 5),
    ("(?:\\b){99999999999}", [False, True, True, True, True]),
    ("(){2147483648}", [True] * 5),
    ("(?:a{0}){99999999999}", [True] * 5),
    ("a{99999999999}", [False] * 5),
    ("a{2147483646}", [False] * 5),
    ("^a{0,2147483647}$", [True, True, False, False, True]),
    ("^a{1,99999999999}b", [False, False, False, True, False]),
])
def test_r1_a_count_of_2_31_or_more_is_v8s_unbounded_count(pattern: str,
                                                            expected: list[bool]) -> None:
    """R1: an atom that matches empty text, repeated 2**31 or more times, matches (V8
    reads such a count as its largest, 2**31 - 1, and each iteration may be empty)."""
    compiled = compile_pattern(pattern)
    assert [compiled.search(n) for n in NAMES] == expected


@pytest.mark.parametrize("pattern", ["(?:a?){99999999999}", "(?:a*){99999999999}",
                                     "(?:|a){99999999999}", "(?:a|){2147483647,}",
                                     "(?:a?){3355443}"])
def test_r2_where_v8_overflows_its_stack_the_answer_is_ecmascripts(pattern: str) -> None:
    """R2, a documented choice: V8 throws RangeError (stack overflow) once a repeat needs
    about 3.3 million empty iterations; ECMAScript says they match, as V8 does below that
    (``(?:a?){3355441}`` is true in Node), so maxrepeat answers true."""
    compiled = compile_pattern(pattern)
    assert [compiled.search(n) for n in NAMES] == [True] * 5


@pytest.mark.parametrize(("pattern", "names", "expected"), [
    ("(?:){1001}", NAMES, [True] * 5),
    ("(?:a|){1001}", NAMES, [True] * 5),
    ("(){2147483647}", NAMES, [True] * 5),
    ("(?=a)" * 2000, ["a" * 30, "b" * 30], [True, False]),
    ("(?<=a)" * 2000, ["a" * 30, "b" * 30], [True, False]),
    ("(a)" + "\\1" * 3000, ["a" * 10_000, "b" * 3000], [True, False]),
    ("^(a|){2}\\1$", ["a", "", "aa", "aaa", "aaaa"], [True, True, True, True, False]),
    ("(a|){3,}\\1", ["", "b"], [True, True]),
])
def test_r3_answers_where_javascript_answers_at_once(pattern: str, names: list[str],
                                                      expected: list[bool]) -> None:
    """R3: these were `UnsafeMatchError` (an error result) on every name."""
    compiled = compile_pattern(pattern)
    start = time.perf_counter()
    assert [compiled.search(n) for n in names] == expected
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize("pattern", ["(" * 5000 + "a" + ")" * 5000,
                                     "(?:" * 2500 + "a" + ")" * 2500,
                                     "(" * 10_000 + "a" + ")" * 10_000,
                                     "(?:a|" * 3000 + "b" + ")" * 3000,
                                     "(?:a" * 3000 + ")*" * 3000])
def test_r4_deep_nesting_compiles_as_in_v8(pattern: str) -> None:
    """R4: V8 compiles 10,000 nested groups; these were "nested too deeply"."""
    compiled = compile_pattern(pattern)
    assert compiled.search("a") != compiled.search("c") or compiled.search("b")


def test_r4_the_bound_is_10_000_nested_groups() -> None:
    """V8 overflows its stack ("Stack overflow", a SyntaxError) at about 12,000 nested
    capturing groups; maxrepeat refuses more than 10,000 nested groups of any kind."""
    with pytest.raises(PatternSyntaxError, match="nested too deeply"):
        compile_pattern("(" * 10_001 + "a" + ")" * 10_001)
    with pytest.raises(PatternSyntaxError, match="nested too deeply"):
        compile_pattern("(?:" * 10_001 + "a" + ")" * 10_001)


@pytest.mark.parametrize(("unit", "canonical"), [
    (0x19B, 0xA7DC), (0x264, 0xA7CB), (0x1C8A, 0x1C89), (0xA7CD, 0xA7CC), (0xA7CF, 0xA7CE),
    (0xA7D3, 0xA7D2), (0xA7D5, 0xA7D4), (0xA7DB, 0xA7DA)])
def test_case_folding_is_unicode_17_whatever_python_has(unit: int, canonical: int) -> None:
    """The 8 BMP code points where Python 3.11's Unicode 14 and Node's ICU (Unicode 17)
    disagree: `(?i)` folds them as V8 does (`/^\\u019b$/i.test("\\ua7dc")` is true)."""
    assert compile_pattern(f"(?i)^{chr(unit)}$").search(chr(canonical))
    assert compile_pattern(f"(?i)^{chr(canonical)}$").search(chr(unit))


def test_the_pinned_case_table_is_nodes() -> None:
    """core/toolmatch/_es_casetable.py is what Node computes (tests/node/case_table.js)."""
    import json
    import shutil
    import subprocess
    from pathlib import Path

    from maxrepeat.core.toolmatch._es_casetable import UNICODE_VERSION, canonical_units

    node = shutil.which("node") or shutil.which("nodejs")
    assert node is not None, "Node.js is needed (bash scripts/test.sh installs it)"
    script = Path(__file__).parents[2] / "node" / "case_table.js"
    found = json.loads(subprocess.run([node, str(script)], capture_output=True, text=True,
                                      check=True, timeout=60).stdout)
    table = canonical_units()
    assert {u: c for u, c in enumerate(table) if u != c} == dict(found["pairs"])
    assert found["unicode"].startswith(UNICODE_VERSION)
