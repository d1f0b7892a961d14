"""The grading rules of spec §3–4, stated once for both engines.

`grade()` (the batch engine: ``steps.py``, ``search.py``, ``grade.py``) and the live
`Monitor` (``core/monitor/``) encode steps differently — interned ints over a whole table,
or digests pushed one at a time — but every rule that decides a verdict lives here, so
the two cannot drift apart:

* grouping calls into steps (`place_call`),
* when a step's fingerprint is empty (`step_is_empty`),
* when a repeated block counts (`is_primitive`) and how many copies a stretch holds
  (`copies`, `run_end`),
* which run is reported (`rank`), in which order runs are listed (`run_order`) and
  which are listed when there are more than the cap (`largest`),
* how many steps lie in at least one run (`covered_steps`, `Cover`).

Everything here is pure and small; the engines do the bookkeeping.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Sequence
from heapq import nlargest
from typing import Final, Literal, TypeVar

__all__ = [
    "Placement",
    "place_call",
    "step_is_empty",
    "is_primitive",
    "copies",
    "run_end",
    "rank",
    "run_order",
    "DEFAULT_MAX_RUNS",
    "largest",
    "covered_steps",
    "Cover",
]

#: Where a watched call goes (spec §3.2): into the open turn's step (``join``), into a new
#: step that later calls of the same turn may join (``open``), or into a step of its own
#: that no call can join (``alone``: a call outside any turn).
Placement = Literal["join", "open", "alone"]

JOIN: Final = "join"
OPEN: Final = "open"
ALONE: Final = "alone"


def place_call(in_turn: bool, turn_has_step: bool) -> Placement:
    """Where a watched call goes, given whether a turn is open and already has a step.

    The other turn rules are about boundaries: ``turn_start`` closes the open turn's step
    and opens a turn; ``turn_end`` closes it (ignored when no turn is open); a turn
    without watched calls forms no step.

    >>> place_call(False, False), place_call(True, False), place_call(True, True)
    ('alone', 'open', 'join')
    """
    if not in_turn:
        return ALONE
    return JOIN if turn_has_step else OPEN


def step_is_empty(empties: int, calls: int, max_period: int) -> bool:
    """Whether a step's fingerprint is empty (observation mode, spec §3.3).

    ``empties`` of its ``calls`` have a missing or empty observation. With period 1 only a
    step whose calls all lack an observation is empty (otherwise "tool + no observation"
    joins the multiset); with periodic detection any such call empties the step, so
    partial data cannot form a cycle.

    >>> step_is_empty(1, 2, 1), step_is_empty(2, 2, 1), step_is_empty(1, 2, 2)
    (False, True, True)
    """
    return empties > 0 and (empties == calls or max_period > 1)


def is_primitive(block: Sequence[Hashable]) -> bool:
    """Whether a block of step keys is not a repetition of a shorter block.

    A run counts only with a primitive block: ``A A`` repeated is the period-1 run of
    ``A``, never a period-2 run. The keys of a captured block are never empty (each one
    equals the key one period later).

    >>> is_primitive(["a", "b"]), is_primitive(["a", "a"]), is_primitive(["a", "b", "a", "b"])
    (True, False, False)
    """
    p = len(block)
    for q in range(1, p):
        if p % q == 0 and all(block[j] == block[j + q] for j in range(p - q)):
            return False
    return True


def copies(equalities: int, period: int) -> int:
    """Complete copies held by a stretch of ``equalities`` back-to-back ``F[i] == F[i+p]``
    (it spans ``equalities + period`` steps; a trailing fragment does not count).

    >>> copies(4, 2), copies(5, 2)
    (3, 3)
    """
    return equalities // period + 1


def run_end(start: int, period: int, occurrences: int) -> int:
    """The last step of a run (inclusive).

    >>> run_end(2, 2, 3)
    7
    """
    return start + period * occurrences - 1


def rank(occurrences: int, period: int, start: int) -> tuple[int, int, int]:
    """The reported run is the one of greatest rank: most copies, then the smaller period,
    then the earlier start.

    >>> rank(3, 1, 5) > rank(3, 2, 0) > rank(2, 1, 0)
    True
    """
    return (occurrences, -period, -start)


def run_order(start: int, period: int, occurrences: int) -> tuple[int, int, int]:
    """The order of ``metadata.runs``: by start step, then period, then copies.

    >>> sorted([(2, 2, 3), (0, 1, 3)], key=lambda r: run_order(*r))
    [(0, 1, 3), (2, 2, 3)]
    """
    return (start, period, occurrences)


#: How many runs above ``max`` a result lists by default (``metadata.runs``); the total is
#: always given (``runsTotal``). A 1M-step trajectory can hold 100k+ runs: listing them all
#: made one result line 21 MB.
DEFAULT_MAX_RUNS: Final = 100

T = TypeVar("T")


def largest(items: Sequence[T], rank_of: Callable[[T], tuple[int, int, int]],
            limit: int) -> list[T]:
    """The ``limit`` items of greatest `rank` (most occurrences; ties: the smaller period,
    then the earlier start, so the reported run is always among them), kept in the order
    of ``items``; ``limit`` 0 keeps all. ``items`` come in `run_order`, so the listed runs
    do too, whatever the cap.

    >>> runs = [(0, 1, 2), (3, 2, 5), (4, 1, 2), (9, 1, 5)]   # (start, period, occurrences)
    >>> largest(runs, lambda r: rank(r[2], r[1], r[0]), 3)
    [(0, 1, 2), (3, 2, 5), (9, 1, 5)]
    """
    if not limit or len(items) <= limit:
        return list(items)
    keep = nlargest(limit, range(len(items)), key=lambda i: rank_of(items[i]))
    keep.sort()
    return [items[i] for i in keep]


def covered_steps(spans: Iterable[tuple[int, int]]) -> int:
    """How many steps lie in at least one of the inclusive ``(start, end)`` spans.

    Runs of different periods may overlap (``a a a b a b a b``: ``a`` at 0-2 and ``a b`` at
    2-7), and a shared step counts once.

    >>> covered_steps([(0, 2), (2, 7)])
    8
    """
    cover = Cover()
    return sum(cover.add(lo, hi) for lo, hi in spans)


class Cover:
    """Disjoint sorted step intervals that grow one run at a time (the monitor adds each run
    when it ends; `covered_steps` adds them all at once).

    >>> c = Cover()
    >>> c.add(0, 2), c.add(2, 7), c.uncovered([(1, 9)])
    (3, 5, 2)
    """

    __slots__ = ("starts", "ends")

    def __init__(self, starts: list[int] | None = None, ends: list[int] | None = None) -> None:
        self.starts: list[int] = starts if starts is not None else []
        self.ends: list[int] = ends if ends is not None else []

    def add(self, lo: int, hi: int) -> int:
        """Add the steps lo..hi; how many of them were not covered yet."""
        starts, ends = self.starts, self.ends
        i = bisect_left(ends, lo)
        j = i
        before = 0
        while j < len(starts) and starts[j] <= hi:
            lo, hi = min(lo, starts[j]), max(hi, ends[j])
            before += ends[j] - starts[j] + 1
            j += 1
        starts[i:j] = [lo]
        ends[i:j] = [hi]
        return hi - lo + 1 - before

    def uncovered(self, spans: Iterable[tuple[int, int]]) -> int:
        """How many steps of ``spans`` these intervals do not cover (leaves them unchanged)."""
        own = Cover()
        for lo, hi in spans:
            own.add(lo, hi)
        starts, ends = self.starts, self.ends
        extra = 0
        for lo, hi in zip(own.starts, own.ends, strict=True):
            extra += hi - lo + 1
            j = bisect_left(ends, lo)
            while j < len(starts) and starts[j] <= hi:
                extra -= min(hi, ends[j]) - max(lo, starts[j]) + 1
                j += 1
        return extra
