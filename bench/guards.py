"""What a framework guard costs per tool call, early and late in a long run (issue 13,
issue 27 item 3).

Each framework is one driver module under ``bench/frameworks/`` (the interface is in
that package's docstring); this script runs every driver whose framework is installed.
For each, the same clean session of N single-call steps (mostly distinct calls, some
repeated once: under every limit) runs twice, in one process:

* without the guard: the framework's own CPU per step (the floor), from one model request
  to the next, as the mean over the first tenth and over the last tenth of the steps;
* with ``loop_guard(MaxRepeatConfig.preset("live"))``: the CPU spent inside the guard's
  own hooks (the driver names them; each wrapped with a timer) per step, first tenth and
  last tenth, less the garbage collections of the whole heap that start inside a hook
  (their cost grows with the framework's history, not the guard's). A guard whose cost
  does not grow with the history has the two about equal.
  (The difference of two whole runs cannot show this: the frameworks' own steps grow with
  the history, to tens of ms, and their noise hides the guard.)

CPU seconds of this process (``time.process_time``), which other load on the machine
inflates less than wall time; the load average is printed before and after. Also the bare
`StepGuard` (the monitors and the policy, no framework) over the same session.

    python bench/guards.py [--calls 10000] [--only langchain,pydantic-ai,...]

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
        return time.process_time()

    def leave(start: float) -> None:
        depth[0] -= 1
        if not depth[0]:
            session.spent[-1] += time.process_time() - start
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
            collecting[0] = time.process_time()
        else:
            session.spent[-1] -= time.process_time() - collecting[0]

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
    """CPU seconds per step: the floor and the guard, first and last tenth."""
    floor = Session(n)
    gc.collect()
    driver.run(floor, None)
    steps = [b - a for a, b in zip(floor.starts, floor.starts[1:], strict=False)]
    guarded = Session(n)
    gc.collect()
    with timing(guarded, driver.hooks()):
        driver.run(guarded, CONFIG)
    for s in (floor, guarded):
        if s.executed != n:
            raise AssertionError(f"{driver.name}: {s.executed} of {n} calls ran (a clean run)")
    spent = guarded.spent[1:1 + n]  # the steps with a tool call
    f_first, f_last = tenths(steps[:n])
    g_first, g_last = tenths(spent)
    return {"floor_first": f_first, "floor_last": f_last, "first": g_first, "last": g_last}


def bare(n: int) -> tuple[float, float]:
    """CPU seconds per step of `StepGuard` alone (start, answer, finish), by tenths."""
    from maxrepeat.guards._live import StepGuard, ToolCall

    guard = StepGuard(CONFIG)
    spent = []
    for i, (name, args) in enumerate(Session(n).calls):
        start = time.process_time()
        guard.start([ToolCall(f"c{i}", name, args)])
        guard.answer(f"c{i}", f"wrote {args['path']}")
        guard.finish()
        spent.append(time.process_time() - start)
    return tenths(spent)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--only", default="", help="comma-separated driver names")
    opts = parser.parse_args()
    n = opts.calls
    known = drivers()
    names = opts.only.split(",") if opts.only else list(known)
    print(f"load average at start: {os.getloadavg()}; {n} calls a run; "
          f"config {CONFIG.display_name}")
    first, last = bare(n)
    print(f"bare StepGuard: first tenth {_ms(first)}, last tenth {_ms(last)} per call")
    print("| framework | guard, first tenth | guard, last tenth | floor, first tenth "
          "| floor, last tenth |")
    print("|---|---|---|---|---|")
    for name in names:
        driver = known[name]
        if not driver.installed:
            print(f"| {name} | not installed ({driver.requires}) | | | |", flush=True)
            continue
        try:
            driver.run(Session(5), CONFIG)  # warm imports and caches
            r = measure(driver, n)
        except Exception as exc:  # one framework's failure does not hide the others
            print(f"| {name} | failed: {type(exc).__name__}: {exc} | | | |", flush=True)
            continue
        print(f"| {name} | {_ms(r['first'])} | {_ms(r['last'])} | {_ms(r['floor_first'])} "
              f"| {_ms(r['floor_last'])} |", flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
