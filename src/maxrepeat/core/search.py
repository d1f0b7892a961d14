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

import msgspec

from . import accel
from .rules import copies, is_primitive, rank, run_end, run_order

__all__ = ["Span", "search"]


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


def search(ids: Sequence[int], max_period: int, above: int) -> tuple[Span | None, list[Span]]:
    """The reported run, and every primitive maximal run with more than ``above`` copies.

    ``ids`` are step fingerprints (negative = empty, equal to nothing). The reported run
    has the most complete copies; ties go to the smaller period, then the earlier start.
    With no non-empty step there is no run.

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
    for p in range(1, max_period + 1):
        # Spans are visited by period, then start, so a tie never displaces the best:
        # only a stretch with more copies than the best so far, or than ``above``, can
        # matter, and the regex skips every shorter one (most of them, on real runs).
        least = p * min(best.occurrences, above)
        for start, m in _stretches(ids, p, least, packed):
            k = copies(m, p)
            if p > 1 and not is_primitive(ids[start:start + p]):
                continue
            if rank(k, p, start) > rank(best.occurrences, best.period, best.start):
                best = Span(start, p, k)
            if k > above:
                runs.append(Span(start, p, k))
    runs.sort(key=lambda s: run_order(s.start, s.period, s.occurrences))
    return best, runs
