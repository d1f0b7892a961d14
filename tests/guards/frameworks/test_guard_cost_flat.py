"""A framework guard's work per tool call does not grow with the run's history (issue 27
item 3): each framework's bench driver (``bench/frameworks/``) runs a clean session with
the guard, counting inside the guard's own hooks at each step (``bench/guards.py``'s
timers, in counting mode) three things the machine's load cannot move:

* the Python function calls: a guard that re-reads the history through Python code at
  each step makes many more calls late in the run than early;
* the Python lines run: a loop over the history that calls nothing (``for m in
  messages: if m is last: ...``) makes no call, but runs a line an item;
* the peak bytes allocated over what was allocated when the hook was entered
  (tracemalloc, from the middle of a longer run, past the warm-up): a copy of the
  history (``list(messages)``, a slice, ``json.dumps`` or ``repr`` of it) is C code
  that makes one call and runs one line whatever its length, but allocates at least a
  pointer (8 bytes) an item, and the history grows by at least one item a step.

One that reads only what is new does about the same early and late. The checker itself
is tested on toy hooks that do each kind of growing work (and one that does not), so a
pass of the real guards means something. The CPU figures are ``python bench/guards.py``
(bench/RESULTS.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from frameworks import Driver, Session, drivers  # noqa: E402
from guards import operations  # noqa: E402

#: long enough that a history re-read at each step would cost ~15x more in the last tenth
CALLS = 150
#: the bytes are compared from the sixth tenth (past the warm-up of the guard's caches and
#: of the interpreter's free lists, ~700 bytes in the first tenth) to the last: 200 steps
BYTES_CALLS = 500
#: the bytes a hook may allocate more per step of history, sixth tenth to last: half the
#: 8 of the smallest copy of the history (a list holding a pointer an item)
BYTES_PER_STEP = 4

pytestmark = [  # what Inspect leaves behind at the end of an eval, as in test_guard_inspect
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def growth(driver: Driver) -> list[str]:
    """What grows with the history inside ``driver``'s hooks over clean runs (an empty
    list: nothing): Python calls and lines over ``CALLS`` calls, first tenth to last;
    peak bytes over ``BYTES_CALLS`` calls (a run of its own: tracing allocates)."""
    driver.run(Session(3), MaxRepeatConfig.preset("live"))  # imports and caches warm
    got = operations(driver, CALLS, malloc=False)
    assert got["calls"][0] > 0, "the guard's hooks were never called"
    grown = [f"{what} {first:.1f} -> {last:.1f}" for what in ("calls", "lines")
             for first, last in [got[what]] if last > 1.25 * first + 10]
    _, middle, last = operations(driver, BYTES_CALLS, trace=False)["bytes"]
    if last - middle > BYTES_PER_STEP * BYTES_CALLS * 4 // 10:  # 0.4 of the run apart
        grown.append(f"bytes {middle:.0f} -> {last:.0f}")
    return grown


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(drivers()))
def test_guard_work_per_call_is_flat(name: str) -> None:
    driver = drivers()[name]
    if not driver.installed:
        pytest.skip(f"{driver.requires} is not installed")
    assert growth(driver) == []


class _Toy:
    """A toy guard hook over a growing history: ``work`` is what it does at each call."""

    history: list[dict[str, Any]] = []
    work = "none"

    def hook(self, call: dict[str, Any]) -> int:
        h = self.history
        if self.work == "copy":  # one C call, one line, a pointer an item
            return len(list(h)) + len(call)
        if self.work == "dump":
            return len(json.dumps(h))
        if self.work == "walk":  # no call at all, a line an item
            n = 0
            for item in h:
                n += item is call
            return n
        if self.work == "recount":  # a Python call an item
            return sum(1 for item in h if item)
        return len(h[-1]) if h else 0  # what is new only


def _toy(work: str) -> Driver:
    def run(session: Session, config: Any) -> None:
        _Toy.history, _Toy.work = [], work
        toy = _Toy()
        for name, args in session.calls:
            session.step()
            toy.hook({"name": name, "arguments": args})
            _Toy.history.append({"name": name, "arguments": args})
            session.tool(args["path"])
        session.step()

    return Driver("toy", "json", run, lambda: [(_Toy, "hook")])


@pytest.mark.parametrize(("work", "seen"), [("none", []), ("copy", ["bytes"]),
                                            ("dump", ["bytes"]), ("walk", ["lines"]),
                                            ("recount", ["calls", "lines"])])
def test_the_checker_sees_work_that_grows_with_the_history(work: str, seen: list[str]) -> None:
    # a shallow copy makes one call and runs one line at every step: only its bytes grow
    assert [g.split()[0] for g in growth(_toy(work))] == seen
