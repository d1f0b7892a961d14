"""House rule: no function in the package rates worse than radon's C (cyclomatic
complexity above 20). The ones still above it are listed by name, so that the list can
only shrink: a new function rated D or worse fails here, and so does a listed one that
has been brought down to C (take it off the list)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import maxrepeat

radon = pytest.importorskip(
    "radon.complexity", reason="radon is not installed (it comes with the test extra)")

PKG = Path(maxrepeat.__file__).parent
#: radon's C ends here: D starts at 21
WORST = 20

#: module (relative to the package) -> names still rated worse than C, each to be split
#: by its module's owner; nothing may be added here.
ALLOWED: dict[str, set[str]] = {}


def _blocks(source: str) -> Iterator[tuple[str, int]]:
    """(name, complexity) of every function, method and class, as ``radon cc`` lists them."""
    todo = list(radon.cc_visit(source))
    while todo:
        block = todo.pop()
        classname = getattr(block, "classname", None)
        yield (f"{classname}.{block.name}" if classname else block.name), block.complexity
        todo.extend(getattr(block, "methods", ()))
        todo.extend(getattr(block, "inner_classes", ()))


def _too_complex() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for file in sorted(PKG.rglob("*.py")):
        rel = file.relative_to(PKG).as_posix()
        names = {name for name, cc in _blocks(file.read_text(encoding="utf-8")) if cc > WORST}
        if names:
            out[rel] = names
    return out


def test_no_function_rates_worse_than_c() -> None:
    found = _too_complex()
    new = {m: sorted(n - ALLOWED.get(m, set())) for m, n in found.items()
           if n - ALLOWED.get(m, set())}
    assert not new, f"rated D or worse by radon (split them; house rule 3): {new}"


def test_the_allow_list_only_names_functions_still_above_c() -> None:
    found = _too_complex()
    stale = {m: sorted(n - found.get(m, set())) for m, n in ALLOWED.items()
             if n - found.get(m, set())}
    assert not stale, f"rated C or better now: take them off ALLOWED: {stale}"


def test_the_count_sees_a_function_rated_d() -> None:
    """The check can fail: a function of 21 branches is found, one of 20 is not."""
    def source(branches: int) -> str:
        body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches - 1))
        return f"def f(x):\n{body}    return -1\n"

    assert dict(_blocks(source(21))) == {"f": 21}
    assert dict(_blocks(source(20))) == {"f": 20}
