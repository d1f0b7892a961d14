"""Repeated-pattern search (spec §4) over a list of step fingerprint ids.

For each period p, a run is a maximal stretch where ``F[i] == F[i + p]`` holds for every i
in it; a stretch of m such equalities spans m + p steps and holds ``m // p + 1`` complete
copies of its first block. Equalities are computed in C (``map(operator.eq)`` into
``bytes``) and stretches found with a regex over those bytes, so the search costs
O(steps × max_cycle_period) with a small constant. See ``docs/design/cycle-search.md``.
"""

from __future__ import annotations

import operator
import re
from array import array
from collections.abc import Sequence
from itertools import islice
from typing import Any

import msgspec

from . import accel
from .config import MaxRepeatConfig
from .fingerprints import StepTable
from .preview import step_preview
from .result import Run, RunOutcome
from .rules import (
    copies,
    covered_steps,
    is_primitive,
    largest,
    rank,
    run_end,
    run_order,
)
from .steps import MISSING

__all__ = ["Span", "search", "find_runs", "step_view"]


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class Span(msgspec.Struct, frozen=True, order=True):
    """A repeated run by step positions: ``occurrences`` copies of a ``period``-step block."""

    start: int
    period: int
    occurrences: int

    @property
    def end(self) -> int:
        """The last step of the run (inclusive; trailing fragments excluded)."""
        return run_end(self.start, self.period, self.occurrences)


_RUN_PATTERNS: dict[int, re.Pattern[bytes]] = {}


def _packed(ids: Sequence[int]) -> array[int] | None:
    """The ids as int64s for the native `_stretches` (None: pure path, or ids beyond 64
    bits that only the pure path compares)."""
    if accel.native is None:
        return None
    if isinstance(ids, array) and ids.typecode == "q":
        return ids  # the native table's ids are int64s already
    try:
        return array("q", ids)
    except (OverflowError, TypeError):
        return None


def _stretches(ids: Sequence[int], p: int, least: int | None = None,
               packed: array[int] | None = None) -> list[tuple[int, int]]:
    """(start, equalities) of each maximal stretch of period p with at least ``least``
    equalities (default p: two copies); ``packed``: the same ids as int64s, scanned by
    the native extension."""
    native = accel.native
    if packed is not None and native is not None:
        found: list[tuple[int, int]] = native.stretches(packed, p,
                                                         p if least is None else max(least, p))
        return found
    n = len(ids)
    if n < 2 * p:
        return []
    eq = bytes(map(operator.eq, ids, islice(ids, p, None)))
    least = p if least is None else max(least, p)
    pattern = _RUN_PATTERNS.get(least)
    if pattern is None:
        if len(_RUN_PATTERNS) > 256:
            _RUN_PATTERNS.clear()
        pattern = _RUN_PATTERNS[least] = re.compile(b"\x01{%d,}" % least)
    return [(m.start(), m.end() - m.start()) for m in pattern.finditer(eq)]


def search(ids: Sequence[int], max_period: int, above: int, *,
           settled: bool = False) -> tuple[Span | None, list[Span]]:
    """The reported run, and every primitive maximal run with more than ``above`` copies.

    ``ids`` are step fingerprints (negative = empty, equal to nothing). The reported run
    has the most complete copies; ties go to the smaller period, then the earlier start.
    With no non-empty step there is no run. ``settled``: leave out the stretches that
    reach the last step (a monitor's front holds them open: `core.monitor.frombatch`).

    >>> search([0, 0, 0, 0], 2, 3)[0]
    Span(start=0, period=1, occurrences=4)
    >>> search([0, 1, 0, 1, 0], 2, 1)[0]
    Span(start=0, period=2, occurrences=2)
    """
    best: Span | None = None
    for i, v in enumerate(ids):
        if v >= 0:
            best = Span(i, 1, 1)
            break
    if best is None:
        return None, []
    runs: list[Span] = []
    packed = _packed(ids)
    last = len(ids) - 1 if settled else -1
    for p in range(1, max_period + 1):
        # Spans are visited by period, then start, so a tie never displaces the best:
        # only a stretch with more copies than the best so far, or than ``above``, can
        # matter, and the regex skips every shorter one (most of them, on real runs).
        least = p * min(best.occurrences, above)
        for start, m in _stretches(ids, p, least, packed):
            if start + m - 1 + p == last:
                continue  # still open
            k = copies(m, p)
            if p > 1 and not is_primitive(ids[start:start + p]):
                continue
            if rank(k, p, start) > rank(best.occurrences, best.period, best.start):
                best = Span(start, p, k)
            if k > above:
                runs.append(Span(start, p, k))
    runs.sort(key=lambda s: run_order(s.start, s.period, s.occurrences))
    return best, runs


def find_runs(events: Sequence[Any], table: StepTable, config: MaxRepeatConfig,
              max_runs: int) -> RunOutcome:
    """The `RunOutcome` of a fingerprinted step table: `search` over its ids (natively
    where the extension is active), the reported run and the ``max_runs`` largest runs
    above ``max`` (0: all) made `Run`s with their previews; the count and the covered
    steps are over all runs.

    >>> from maxrepeat.core.events import trajectory_from_dict
    >>> from maxrepeat.core.fingerprints import build_step_table
    >>> t = trajectory_from_dict({"events": [
    ...     {"type": "tool_call", "data": {"toolName": "ls"}} for _ in range(3)]})
    >>> cfg = MaxRepeatConfig(2, match="name")
    >>> out = find_runs(t.events, build_step_table(t.events, cfg), cfg, 10)
    >>> out.best.occurrences, out.best_tools, out.total, out.covered
    (3, ('ls',), 1, 3)
    """
    span, spans = search(table.ids, config.max_cycle_period, config.max)
    # previews show the results whenever the keys hold them (with_observation too)
    shown = "observation" if config.observes else config.match
    # Only the listed runs get a Run (and its previews); the step count covers them all.
    listed = largest(spans, lambda s: rank(s.occurrences, s.period, s.start), max_runs)
    return RunOutcome(
        best=_run(events, table, span, shown) if span is not None else None,
        best_tools=_tools(events, table, span) if span is not None else (),
        runs=tuple(_run(events, table, s, shown) for s in listed),
        total=len(spans),
        covered=covered_steps((s.start, s.end) for s in spans),
    )


def step_view(events: Sequence[Any], table: StepTable, s: int,
              match: str) -> tuple[str, tuple[str, ...]]:
    """Step ``s``'s preview in ``match`` mode and its distinct tool names, sorted (what a
    run's report shows of a step; `core.windowsearch.Described`)."""
    calls = []
    names = set()
    for i in table.steps[s]:
        data = events[i].data
        cid = data.tool_call_id
        # Only observation previews show results (looking them up builds the table of
        # results, which the other modes skip).
        obs = (table.results.get(cid, MISSING)
               if cid is not None and match == "observation" else MISSING)
        calls.append((data.tool_name, data.arguments, obs))
        names.add(data.tool_name)
    return step_preview(calls, match), tuple(sorted(names))


def _pattern(events: Sequence[Any], table: StepTable, span: Span, match: str) -> tuple[str, ...]:
    return tuple(step_view(events, table, s, match)[0]
                 for s in range(span.start, span.start + span.period))


def _run(events: Sequence[Any], table: StepTable, span: Span, match: str) -> Run:
    return Run(
        period=span.period,
        occurrences=span.occurrences,
        start_step=span.start,
        end_step=span.end,
        start_event=min(table.steps[span.start]),
        end_event=max(table.steps[span.end]),
        pattern=_pattern(events, table, span, match),
    )


def _tools(events: Sequence[Any], table: StepTable, span: Span) -> tuple[str, ...]:
    names = {events[i].data.tool_name for s in range(span.start, span.start + span.period)
             for i in table.steps[s]}
    return tuple(sorted(names))
