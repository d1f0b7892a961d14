"""How ``bench/guards.py`` measures a framework guard inside one run: the timers wrapped
around the guard's hooks (CPU, and in counting mode the Python calls, lines and peak
bytes), the full garbage collections taken off, and the bare `StepGuard` stepped
beside the run (the floor at the same moments)."""

from __future__ import annotations

import functools
import gc
import inspect
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from frameworks import Session

from maxrepeat import MaxRepeatConfig

__all__ = ["CONFIG", "Meter", "Floor", "timing"]

CONFIG = MaxRepeatConfig.preset("live")


class Meter:
    """One measured run's state: how deep inside the guard's hooks it is, the list whose
    last figure the CPU goes to (``session.spent``, or the floor's), and what is counted:
    with ``trace`` the Python calls and lines, with ``malloc`` the peak bytes (over the
    tracemalloc base of the hook being run)."""

    def __init__(self, session: Session, trace: bool = False, malloc: bool = False) -> None:
        self.session = session
        self.trace_on = trace
        self.malloc = malloc
        self.depth = 0
        self.inside: list[float] | None = None  # where a collection's time is taken off
        self.collecting = 0.0
        self.base = 0
        self.full: dict[int, int] = {}  # the step: full collections taken off its hooks

    def collector(self, phase: str, info: dict[str, int]) -> None:
        """A collection of the whole heap (generation 2: its cost grows with what the
        framework keeps, the history mostly) that starts inside a hook is not the
        guard's work: taken off its time (and the floor's, the same). The young
        generations' collections are kept: the guard's allocations trigger their share."""
        if self.inside is None or info["generation"] != 2:
            return
        if phase == "start":
            self.collecting = time.thread_time()
            return
        self.inside[-1] -= time.thread_time() - self.collecting
        if self.inside is self.session.spent:
            step = len(self.session.spent) - 1
            self.full[step] = self.full.get(step, 0) + 1

    def trace(self, frame: Any, event: str, arg: Any) -> Any:
        """Counting: each Python call (and generator resumption) inside a hook, then
        each line it runs."""
        if event == "call":
            self.session.ops[-1] += 1
        return self._line

    def _line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.session.lines[-1] += 1
        return self._line

    def enter(self) -> float:
        self.depth += 1
        if self.depth == 1:
            self.inside = self.session.spent
            if self.malloc:
                tracemalloc.reset_peak()
                self.base = tracemalloc.get_traced_memory()[0]
            if self.trace_on:
                sys.settrace(self.trace)
        return time.thread_time()

    def leave(self, start: float) -> None:
        self.depth -= 1
        if not self.depth:
            self.session.spent[-1] += time.thread_time() - start
            self.inside = None
            if self.trace_on:
                sys.settrace(None)
            if self.malloc:
                self.session.bytes[-1] += tracemalloc.get_traced_memory()[1] - self.base


def _timed(meter: Meter, inner: Callable[..., Any]) -> Callable[..., Any]:
    """``inner`` adding its CPU time to the session's current step (once when nested);
    counting, also its Python calls, lines and peak bytes allocated."""
    if inspect.iscoroutinefunction(inner):
        @functools.wraps(inner)
        async def async_hook(*args: Any, **kwargs: Any) -> Any:
            start = meter.enter()
            try:
                return await inner(*args, **kwargs)
            finally:
                meter.leave(start)
        return async_hook

    @functools.wraps(inner)
    def hook(*args: Any, **kwargs: Any) -> Any:
        start = meter.enter()
        try:
            return inner(*args, **kwargs)
        finally:
            meter.leave(start)
    return hook


class Floor:
    """The bare `StepGuard` stepped beside the run: at each of the run's steps (its
    ``session.step()``), one step of the same session fed to a `StepGuard` of its own,
    timed alone. The same moment, heap and load as the guard's hooks, so the guard over
    it, first and last tenth, is what the adapter adds whatever the machine does."""

    def __init__(self, meter: Meter) -> None:
        from maxrepeat.guards._live import StepGuard

        self.meter = meter
        self.guard = StepGuard(CONFIG)
        self.calls = meter.session.calls
        self.spent: list[float] = []

    def __call__(self) -> None:
        from maxrepeat.guards._live import ToolCall

        i = len(self.spent)
        if i >= len(self.calls):
            return
        name, args = self.calls[i]
        self.spent.append(0.0)
        meter, outside = self.meter, self.meter.inside
        meter.inside = self.spent
        start = time.thread_time()
        self.guard.start([ToolCall(f"c{i}", name, args)])
        self.guard.answer(f"c{i}", f"wrote {args['path']}")
        self.guard.finish()
        took = time.thread_time() - start
        self.spent[-1] += took
        meter.inside = outside
        if meter.depth:  # a step asked from inside a hook: not the hook's time
            meter.session.spent[-1] -= took


@contextmanager
def timing(session: Session, hooks: Sequence[tuple[Any, str]], trace: bool = False,
           malloc: bool = False) -> Iterator[Meter]:
    """The guard's hooks timed into ``session.spent`` while inside; with ``trace``, their
    Python calls and lines counted into ``session.ops`` and ``lines``; with ``malloc``,
    their peak bytes into ``session.bytes`` (tracemalloc runs the while)."""
    meter = Meter(session, trace, malloc)
    saved = [(owner, name, owner.__dict__[name]) for owner, name in hooks]
    for owner, name, inner in saved:
        setattr(owner, name, _timed(meter, inner))
    gc.callbacks.append(meter.collector)
    if malloc:
        tracemalloc.start()
    try:
        yield meter
    finally:
        if malloc:
            tracemalloc.stop()
        gc.callbacks.remove(meter.collector)
        for owner, name, inner in saved:
            setattr(owner, name, inner)
