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
  are not counted), less the garbage collections of the whole heap that start inside a
  hook (their cost grows with the framework's history, not the guard's);
* **floor**: the bare `StepGuard` (the monitors and the policy, no framework) on the same
  session, measured in the same process just before the run; ``x floor`` is the guard's
  hooks over it (what the framework adapter adds, as a ratio the machine's load moves
  less than milliseconds);
* **framework**: the rest of each step (one model request to the next, CPU of the
  process, less the guard's hooks): the framework's own cost, which the guard does not
  control, and the wall time of the run;
* the load average before and after;
* with ``--ops``, a second run counting the Python calls made inside the hooks per tool
  call, first and last tenth: the same work early and late, whatever the load.

A guard whose cost does not grow with the history has the two tenths about equal.

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
import functools
import gc
import inspect
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frameworks import Driver, Session, drivers

from maxrepeat import MaxRepeatConfig

CONFIG = MaxRepeatConfig.preset("live")


def _timed(session: Session, inner: Callable[..., Any], depth: list[int],
           count: bool) -> Callable[..., Any]:
    """``inner`` adding its CPU time to the session's current step (once when nested);
    with ``count``, also the Python function calls made inside it (``session.ops``)."""

    def enter() -> float:
        depth[0] += 1
        if count and depth[0] == 1:
            def profile(frame: Any, event: str, arg: Any) -> None:
                if event == "call":
                    session.ops[-1] += 1
            sys.setprofile(profile)
        return time.thread_time()

    def leave(start: float) -> None:
        depth[0] -= 1
        if not depth[0]:
            session.spent[-1] += time.thread_time() - start
            if count:
                sys.setprofile(None)

    if inspect.iscoroutinefunction(inner):
        @functools.wraps(inner)
        async def async_hook(*args: Any, **kwargs: Any) -> Any:
            start = enter()
            try:
                return await inner(*args, **kwargs)
            finally:
                leave(start)
        return async_hook

    @functools.wraps(inner)
    def hook(*args: Any, **kwargs: Any) -> Any:
        start = enter()
        try:
            return inner(*args, **kwargs)
        finally:
            leave(start)
    return hook


@contextmanager
def timing(session: Session, hooks: Sequence[tuple[Any, str]],
           count: bool = False) -> Iterator[None]:
    """The guard's hooks timed into ``session.spent`` (and their Python calls counted
    into ``session.ops`` with ``count``) while inside."""
    saved = [(owner, name, owner.__dict__[name]) for owner, name in hooks]
    depth = [0]
    collecting = [0.0]

    def collector(phase: str, info: dict[str, int]) -> None:
        # A collection of the whole heap (the framework's history, mostly) that happens
        # to start inside a hook is not the guard's work: taken off its time.
        if not depth[0]:
            return
        if phase == "start":
            collecting[0] = time.thread_time()
        else:
            session.spent[-1] -= time.thread_time() - collecting[0]

    for owner, name, inner in saved:
        setattr(owner, name, _timed(session, inner, depth, count))
    gc.callbacks.append(collector)
    try:
        yield
    finally:
        gc.callbacks.remove(collector)
        for owner, name, inner in saved:
            setattr(owner, name, inner)


def tenths(values: Sequence[float]) -> tuple[float, float]:
    """The mean of the first tenth of ``values`` and of the last tenth."""
    k = max(1, len(values) // 10)
    return sum(values[:k]) / k, sum(values[-k:]) / k


def measure(driver: Driver, n: int) -> dict[str, float]:
    """Seconds per tool call in one guarded run of ``n`` calls, first and last tenth: the
    guard's hooks, the framework's own step, and the bare `StepGuard` floor."""
    floor_first, floor_last = bare(n)
    session = Session(n)
    gc.collect()
    wall = time.perf_counter()
    with timing(session, driver.hooks()):
        driver.run(session, CONFIG)
    wall = time.perf_counter() - wall
    if session.executed != n:
        raise AssertionError(f"{driver.name}: {session.executed} of {n} calls ran (a clean run)")
    spent = session.spent[1:1 + n]  # the steps with a tool call
    steps = [b - a - g for a, b, g in zip(session.starts, session.starts[1:], spent,
                                          strict=False)]
    first, last = tenths(spent)
    f_first, f_last = tenths(steps[:n])
    return {"first": first, "last": last, "floor_first": floor_first,
            "floor_last": floor_last, "fw_first": f_first, "fw_last": f_last, "wall": wall}


def operations(driver: Driver, n: int) -> tuple[float, float]:
    """The Python calls made inside the guard's hooks per tool call, first and last
    tenth of a second run (counted, so the machine's load cannot move them)."""
    session = Session(n)
    with timing(session, driver.hooks(), count=True):
        driver.run(session, CONFIG)
    return tenths(session.ops[1:1 + n])


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


HEAD = ("| framework | guard ms, first → last tenth | x floor, first → last | "
        "framework's own step ms, first → last | wall s | load before → after | surface |")


def row(driver: Driver, r: dict[str, float], before: str) -> str:
    """One framework's line of the table."""
    return (f"| {driver.name} | {_ms(r['first'])} → {_ms(r['last'])} | "
            f"{r['first'] / r['floor_first']:.2f} → {r['last'] / r['floor_last']:.2f} | "
            f"{_ms(r['fw_first'])} → {_ms(r['fw_last'])} | {r['wall']:.0f} | "
            f"{before} → {_load()} | {driver.surface} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--only", default="", help="comma-separated driver names")
    parser.add_argument("--ops", action="store_true",
                        help="a second run a framework counting the Python calls inside "
                             "the hooks per tool call (first → last tenth)")
    opts = parser.parse_args()
    n = opts.calls
    known = drivers()
    names = opts.only.split(",") if opts.only else list(known)
    print(f"load average at start: {_load()}; {n} calls a run; config "
          f"{CONFIG.display_name}; Python {sys.version.split()[0]}")
    first, last = bare(n)
    print(f"bare StepGuard (the floor): {_ms(first)} → {_ms(last)} ms per call")
    print(HEAD)
    print("|---|---|---|---|---|---|---|")
    for name in names:
        driver = known[name]
        if not driver.installed:
            print(f"| {name} | not installed ({driver.requires}) | | | | | |", flush=True)
            continue
        before = _load()
        try:
            driver.run(Session(5), CONFIG)  # warm imports and caches
            r = measure(driver, n)
        except Exception as exc:  # one framework's failure does not hide the others
            print(f"| {name} | failed: {type(exc).__name__}: {exc} | | | | | |", flush=True)
            continue
        print(row(driver, r, before), flush=True)
        if opts.ops:
            first, last = operations(driver, n)
            print(f"| {name}: Python calls in the hooks per tool call | {first:.1f} → "
                  f"{last:.1f} | | | | | |", flush=True)
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    main()
