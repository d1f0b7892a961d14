"""What a framework guard costs per tool call, early and late in ONE long run (issue 13,
issue 27 item 3).

Each framework is one driver module under ``bench/frameworks/`` (the interface is in
that package's docstring); this script runs every driver whose framework is installed
(AutoGen's and CrewAI's live in venvs of their own: ``.venv-autogen/bin/python
bench/guards.py --only autogen``, ``.venv-crewai/bin/python bench/guards.py --only
crewai``). For each, ONE clean session of N single-call steps (mostly distinct calls,
some repeated once: under every limit) runs with ``loop_guard(MaxRepeatConfig.preset
("live"))``, one guard seeing the whole run, and the bench reports, for the first tenth
and the last tenth of the calls (1,000 each at the default 10,000):

* **guard**: the CPU spent inside the guard's own hooks per tool call (the driver names
  them; each wrapped with a ``time.thread_time`` timer, so the framework's other threads
  are not counted), less the garbage collections of the whole heap (generation 2) that
  start inside a hook: their cost grows with what the framework keeps (its history),
  not with the guard's work; the table counts them (``full collections taken off``);
* **floor beside**: the bare `StepGuard` (the monitors and the policy, no framework) fed
  the same session beside the run, one step at each of the run's steps, timed alone: the
  same moment, heap and machine load as the guard's hooks. ``x floor`` is the guard's
  hooks over it, tenth by tenth: what the framework adapter adds, a ratio the load and
  the framework's growing heap move much less than milliseconds (both figures rise
  together when the machine gets busier during a run, or the heap bigger);
* **framework**: the rest of each step (one model request to the next, CPU of the
  process, less the guard's hooks and the floor): the framework's own cost, which the
  guard does not control, and the wall time of the run;
* the load average before and after; before the runs, the bare `StepGuard` alone (a
  small heap, no framework);
* with ``--ops``, two more runs counting inside the hooks per tool call, first and last
  tenth, what the load cannot move: the Python calls and the Python lines run
  (``sys.settrace``), and the peak bytes allocated over what was allocated when the
  hook was entered (tracemalloc; first, sixth and last tenth). A copy, ``json.dumps`` or
  ``repr`` of the history is C code: one call and one line whatever its length, but its
  bytes grow with it; a Python loop over it that calls nothing shows in the lines.

A guard whose work does not grow with the history has the counts of the two tenths about
equal. Its CPU can still rise over a run on a loaded machine: the floor beside it then
rises as much (issue 27 item 3: the rises of 2026-12-02's table were that, but for the
OpenAI Agents input filter's copy of the input, which only the bytes show).

What runs (each driver's ``surface``, printed with its row): the framework's own agent
loop with a scripted model that answers without reading the history, wherever a
10,000-call run of that loop takes minutes. Where the framework's loop re-sends or
re-copies the whole history at every step (quadratic: tens of minutes to hours at
10,000 calls on 2 shared cores), the driver runs the smallest real surface that calls
the guard as that loop does, with the framework's own message, event and context objects
and the whole history growing in them, and its docstring says which and why.

    nice -n 19 python bench/guards.py [--calls 10000] [--only langchain,pydantic-ai,...] [--ops]

Needs the frameworks' extras, e.g. pip install -e '.[langchain,pydantic-ai,...]'.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frameworks import Driver, Session, drivers
from meter import CONFIG, Floor, timing

__all__ = ["CONFIG", "timing", "tenths", "measure", "operations", "bare"]


def tenths(values: Sequence[float]) -> tuple[float, float]:
    """The mean of the first tenth of ``values`` and of the last tenth."""
    k = max(1, len(values) // 10)
    return sum(values[:k]) / k, sum(values[-k:]) / k


def measure(driver: Driver, n: int) -> dict[str, float]:
    """Seconds per tool call in one guarded run of ``n`` calls, first and last tenth: the
    guard's hooks, the bare `StepGuard` floor stepped beside them, the framework's own
    step; and the full collections taken off the hooks' time."""
    session = Session(n)
    gc.collect()
    wall = time.perf_counter()
    with timing(session, driver.hooks()) as meter:
        floor = session.beside = Floor(meter)
        driver.run(session, CONFIG)
    wall = time.perf_counter() - wall
    if session.executed != n:
        raise AssertionError(f"{driver.name}: {session.executed} of {n} calls ran (a clean run)")
    spent = session.spent[1:1 + n]  # the steps with a tool call
    beside = floor.spent + [0.0] * (n - len(floor.spent))
    steps = [b - a - g - f for a, b, g, f in zip(session.starts, session.starts[1:], spent,
                                                 beside, strict=False)]
    first, last = tenths(spent)
    full = tenths([float(meter.full.get(1 + i, 0)) for i in range(n)])
    return {"first": first, "last": last, "floor_first": tenths(beside)[0],
            "floor_last": tenths(beside)[1], "fw_first": tenths(steps[:n])[0],
            "fw_last": tenths(steps[:n])[1], "wall": wall,
            "full_first": full[0] * max(1, n // 10), "full_last": full[1] * max(1, n // 10)}


def operations(driver: Driver, n: int, trace: bool = True,
               malloc: bool = True) -> dict[str, tuple[float, ...]]:
    """What a second run counts inside the guard's hooks per tool call: with ``trace``
    the Python calls and lines (mean of the first and of the last tenth), with
    ``malloc`` the peak bytes allocated over what was allocated when the hook was
    entered (tracemalloc; the median of the first, the sixth and the last tenth, so one
    resize of a table does not count, and the sixth is past the warm-up of the guard's
    caches and of the interpreter's free lists): what the machine's load cannot move.
    A hook that copies, dumps or walks the history at each call shows in lines or
    bytes even where that work is C code making one call."""
    session = Session(n)
    with timing(session, driver.hooks(), trace, malloc):
        driver.run(session, CONFIG)
    k = max(1, n // 10)
    held = session.bytes[1:1 + n]
    return {"calls": tenths(session.ops[1:1 + n]), "lines": tenths(session.lines[1:1 + n]),
            "bytes": (statistics.median(held[:k]), statistics.median(held[5 * k:6 * k]),
                      statistics.median(held[-k:]))}


def bare(n: int) -> tuple[float, float]:
    """CPU seconds per step of `StepGuard` alone (start, answer, finish), by tenths."""
    from maxrepeat.guards._live import StepGuard, ToolCall

    guard = StepGuard(CONFIG)
    spent = []
    for i, (name, args) in enumerate(Session(n).calls):
        start = time.thread_time()
        guard.start([ToolCall(f"c{i}", name, args)])
        guard.answer(f"c{i}", f"wrote {args['path']}")
        guard.finish()
        spent.append(time.thread_time() - start)
    return tenths(spent)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


HEAD = ("| framework | guard ms, first → last tenth | floor beside ms | x floor, first → last | "
        "full collections taken off | framework's own step ms, first → last | wall s | "
        "load before → after | surface |")


def row(driver: Driver, r: dict[str, float], before: str) -> str:
    """One framework's line of the table."""
    return (f"| {driver.name} | {_ms(r['first'])} → {_ms(r['last'])} | "
            f"{_ms(r['floor_first'])} → {_ms(r['floor_last'])} | "
            f"{r['first'] / r['floor_first']:.2f} → {r['last'] / r['floor_last']:.2f} | "
            f"{r['full_first']:.0f} → {r['full_last']:.0f} | "
            f"{_ms(r['fw_first'])} → {_ms(r['fw_last'])} | {r['wall']:.0f} | "
            f"{before} → {_load()} | {driver.surface} |")


def counted(driver: Driver, n: int) -> str:
    """The line of `operations` figures under a framework's row."""
    got = operations(driver, n, malloc=False)  # (tracing allocates: the bytes apart)
    calls, lines = got["calls"], got["lines"]
    held = operations(driver, n, trace=False)["bytes"]
    return (f"| {driver.name}, counted in the hooks per tool call | Python calls "
            f"{calls[0]:.1f} → {calls[1]:.1f}; lines {lines[0]:.1f} → {lines[1]:.1f}; "
            f"peak bytes {held[0]:.0f} → {held[1]:.0f} → {held[2]:.0f} (first, sixth, last "
            f"tenth) | | | | | | | |")


def one(driver: Driver, n: int, ops: bool) -> None:
    """Measure one framework and print its row (and its counts with ``ops``)."""
    if not driver.installed:
        print(f"| {driver.name} | not installed ({driver.requires}) |" + " |" * 7, flush=True)
        return
    before = _load()
    try:
        driver.run(Session(5), CONFIG)  # warm imports and caches
        print(row(driver, measure(driver, n), before), flush=True)
        if ops:
            print(counted(driver, n), flush=True)
    except Exception as exc:  # one framework's failure does not hide the others
        print(f"| {driver.name} | failed: {type(exc).__name__}: {exc} |" + " |" * 7,
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--only", default="", help="comma-separated driver names")
    parser.add_argument("--ops", action="store_true",
                        help="a second run a framework counting inside the hooks per tool "
                             "call (first → last tenth): Python calls, lines, peak bytes")
    opts = parser.parse_args()
    n = opts.calls
    known = drivers()
    names = opts.only.split(",") if opts.only else list(known)
    print(f"load average at start: {_load()}; {n} calls a run; config "
          f"{CONFIG.display_name}; Python {sys.version.split()[0]}")
    first, last = bare(n)
    print(f"bare StepGuard alone, before the runs: {_ms(first)} → {_ms(last)} ms per call")
    print(HEAD)
    print("|---" * 9 + "|")
    for name in names:
        one(known[name], n, opts.ops)
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    main()
