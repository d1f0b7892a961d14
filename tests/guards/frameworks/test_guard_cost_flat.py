"""A framework guard's work per tool call does not grow with the run's history (issue 27
item 3): each framework's bench driver (``bench/frameworks/``) runs a clean session with
the guard, counting the Python function calls made inside the guard's own hooks at each
step (``bench/guards.py``'s timers, in counting mode). A guard that re-reads the history
at each step makes many more calls late in the run than early; one that reads only what
is new makes about as many. Counted operations, not time, so a loaded machine cannot make
it fail; the CPU figures themselves are ``python bench/guards.py`` (bench/RESULTS.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from maxrepeat import MaxRepeatConfig

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from frameworks import Session, drivers  # noqa: E402
from guards import tenths, timing  # noqa: E402

#: long enough that a history re-read at each step would cost ~15x more in the last tenth
CALLS = 150

pytestmark = [  # what Inspect leaves behind at the end of an eval, as in test_guard_inspect
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(drivers()))
def test_guard_work_per_call_is_flat(name: str) -> None:
    driver = drivers()[name]
    if not driver.installed:
        pytest.skip(f"{driver.requires} is not installed")
    session = Session(CALLS)
    with timing(session, driver.hooks(), count=True):
        driver.run(session, MaxRepeatConfig.preset("live"))
    assert session.executed == CALLS  # a clean run: nothing refused
    first, last = tenths(session.ops[1:1 + CALLS])
    assert first > 0, "the guard's hooks were never called"
    assert last <= 1.25 * first + 10, (name, first, last)
