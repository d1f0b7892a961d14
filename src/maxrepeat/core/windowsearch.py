"""The repeated-run search (spec §4) over steps that arrive a window at a time.

`core.search` scans a whole table of step fingerprints at once. A trajectory too large to
hold is graded window by window (``engines/windowed.py``), and this class gives exactly
`core.search`'s answer while keeping only what a later window can still need:

* the last ``max_cycle_period`` steps (their keys, event bounds and previews), so that a
  window's first steps are compared with the previous window's last ones;
* for each period p the stretch of equalities ``F[i] == F[i+p]`` that reaches the last
  step (its start and length, and its first block once it has one): runs may be
  arbitrarily long, so the state is carried, never the steps;
* the reported run so far, the ``max_runs`` largest runs above ``max`` (a heap), how many
  there are, and the steps they cover (`rules.Cover`, whose intervals that no later run
  can reach are dropped, their steps counted).

Within a window the stretches are found by the same scan as `core.search` (the native
one when active) over the carried steps and the window's; only stretches that can
matter are listed (``least`` equalities), and the two at the window's edges are measured
by comparing ids directly (at most ``least`` comparisons). See docs/design/streaming.md.

>>> s = WindowSearch(max_period=2, above=2)
>>> s.push([b"a", b"a"], [0, 1], [0, 1], lambda j: ("a", ("a",)))
>>> s.push([b"a", b"b"], [2, 3], [2, 3], lambda j: ("ab"[j], ("ab"[j],)))
>>> out = s.finish()
>>> out.best.occurrences, out.best.start_step, out.best.end_step, out.total, out.covered
(3, 0, 2, 1, 3)
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Sequence
from typing import Final

from ._stepkeys import intern_ids
from ._windowstate import KeptStep, OpenStretch, packed_ids, stretches
from .result import Run, RunOutcome
from .rules import Cover, copies, is_primitive, rank, run_end, run_order

__all__ = ["WindowSearch", "Described"]

#: (preview, distinct tool names sorted) of one step of the current window
Described = tuple[str, tuple[str, ...]]


#: intervals kept in the cover before the finished ones are dropped
_COVER_KEEP: Final = 256


class WindowSearch:
    """`core.search` over steps pushed a window at a time, with a carried state.

    ``push(keys, firsts, lasts, describe)`` adds one window's steps: their keys (None
    for an empty step), the event index of each one's first and last watched call, and
    ``describe(j)`` giving step j's preview and tool names (asked only for the steps a
    run or the carried state needs). ``finish()`` gives the `RunOutcome`: the reported
    run, the listed runs (the ``max_runs`` largest, in `rules.run_order`; 0: all), how
    many runs there are above ``above`` and how many steps they cover.
    """

    def __init__(self, max_period: int, above: int, max_runs: int = 0) -> None:
        self.max_period = max_period
        self.above = above
        self.max_runs = max_runs
        self.steps = 0  # steps pushed so far
        self.empty = 0
        self.tail: list[KeptStep] = []  # the last max_period steps
        self.open = [OpenStretch() for _ in range(max_period)]
        # the reported run so far: (occurrences, period, start, block, end event)
        self.best: tuple[int, int, int, list[KeptStep], int] | None = None
        self.heap: list[tuple[tuple[int, int, int], Run]] = []
        self.total = 0
        self.cover = Cover()
        self.covered = 0

    # --- one window --------------------------------------------------------------------

    def push(self, keys: Sequence[bytes | None], firsts: Sequence[int],
             lasts: Sequence[int], describe: Callable[[int], Described]) -> None:
        """Add one window's steps (see the class)."""
        ext: list[bytes | None] = [s.key for s in self.tail]
        ext.extend(keys)
        self._push(intern_ids(ext), firsts, lasts, describe, keys)

    def push_ids(self, ids: Sequence[int], firsts: Sequence[int], lasts: Sequence[int],
                 describe: Callable[[int], Described]) -> None:
        """`push` by ids rather than keys: ``ids`` number the carried steps (`carried`,
        graded again at the start of the window's table) and then the window's steps;
        equal ids are equal fingerprints, negative ids are empty steps. ``firsts``,
        ``lasts`` and ``describe`` are for the window's steps only."""
        self._push(list(ids), firsts, lasts, describe, None)

    @property
    def carried(self) -> int:
        """How many steps `push_ids` expects before the window's (the last
        ``max_cycle_period`` steps)."""
        return len(self.tail)

    def _push(self, ids: list[int], firsts: Sequence[int], lasts: Sequence[int],
              describe: Callable[[int], Described], keys: Sequence[bytes | None] | None
              ) -> None:
        tail = self.tail
        t = len(tail)
        new = len(ids) - t
        if new <= 0:
            return
        g0 = self.steps - t  # global index of ids[0]
        made: dict[int, KeptStep] = {}

        def info(j: int) -> KeptStep:
            if j < t:
                return tail[j]
            got = made.get(j)
            if got is None:
                w = j - t
                preview, tools = describe(w)
                got = made[j] = KeptStep(keys[w] if keys is not None else None, firsts[w],
                                      lasts[w], preview, tools)
            return got

        if self.best is None:
            for j in range(t, len(ids)):
                if ids[j] >= 0:
                    first = info(j)
                    self.best = (1, 1, g0 + j, [first], first.last)
                    break
        packed = packed_ids(ids)
        n = len(ids)
        for p in range(1, self.max_period + 1):
            jlo = max(0, t - p)
            q = n - p - jlo  # equalities this window adds for period p
            if q <= 0:
                continue
            self._period(p, ids, packed, jlo, q, g0, info)
        self.steps += new
        self.empty += sum(1 for i in ids[t:] if i < 0)
        keep = max(0, n - self.max_period)
        self.tail = [info(j) for j in range(keep, n)]
        self._prune()

    def _period(self, p: int, ids: list[int], packed: array[int] | None, jlo: int, q: int,
                g0: int, info: Callable[[int], KeptStep]) -> None:
        st = self.open[p - 1]
        least = self._least(p)
        found = stretches(ids, packed, p, least, jlo)

        def eq(x: int) -> bool:
            return ids[jlo + x] == ids[jlo + x + p]

        # the stretch at the window's start (it may continue the carried one)
        if found and found[0][0] == 0:
            r = found[0][1]
        else:
            r = 0
            while r < q and r < least and eq(r):
                r += 1
        if r == q:  # every new equality holds: the stretch goes on
            if st.length:
                st.length += q
            else:
                self._start(st, p, jlo, q, g0, info, ids)
            return
        if st.length:
            self._close(p, st.start, st.length + r, st.block, st.primitive, g0, info, ids)
        elif r:
            self._close(p, g0 + jlo, r, None, True, g0, info, ids)
        # the stretch reaching the window's end stays open
        if found and found[-1][0] > 0 and found[-1][0] + found[-1][1] == q:
            s = found.pop()[1]
        else:
            s = 0
            while s < least and q - 1 - s > r and eq(q - 1 - s):
                s += 1
        for start, m in found:
            if start > 0:
                self._close(p, g0 + jlo + start, m, None, True, g0, info, ids)
        st.length = 0
        st.block = []
        st.primitive = True
        if s:
            self._start(st, p, jlo + q - s, s, g0, info, ids)

    def _start(self, st: OpenStretch, p: int, j: int, m: int, g0: int,
               info: Callable[[int], KeptStep], ids: list[int]) -> None:
        st.start = g0 + j
        st.length = m
        st.block = [info(j + i) for i in range(p)]
        st.primitive = p == 1 or is_primitive(ids[j:j + p])

    def _least(self, p: int) -> int:
        """Equalities a stretch of period p needs to matter now: two copies, and either
        more than ``above`` copies or at least as many as the reported run (a tie may
        win on period or start)."""
        b = self.best[0] if self.best is not None else 1
        return max(p, p * min(b - 1, self.above))

    def _close(self, p: int, start: int, m: int, block: list[KeptStep] | None, primitive: bool,
               g0: int, info: Callable[[int], KeptStep], ids: list[int] | None = None) -> None:
        """A finished stretch: global ``start``, ``m`` equalities."""
        if m < p:
            return
        k = copies(m, p)
        b = self.best
        wins = b is None or rank(k, p, start) > rank(b[0], b[1], b[2])
        if not wins and k <= self.above:
            return
        if block is None:
            j = start - g0
            block = [info(j + i) for i in range(p)]
            assert ids is not None
            primitive = p == 1 or is_primitive(ids[j:j + p])
        if not primitive:
            return
        end = run_end(start, p, k)
        end_event = info(end - g0).last
        if wins:
            self.best = (k, p, start, block, end_event)
        if k > self.above:
            self.total += 1
            self.covered += self.cover.add(start, end)
            run = Run(period=p, occurrences=k, start_step=start, end_step=end,
                      start_event=block[0].first, end_event=end_event,
                      pattern=tuple(s.preview for s in block))
            item = (rank(k, p, start), run)
            if not self.max_runs or len(self.heap) < self.max_runs:
                heapq.heappush(self.heap, item)
            elif item[0] > self.heap[0][0]:
                heapq.heapreplace(self.heap, item)

    def _prune(self) -> None:
        """Drop the cover's intervals that no later run can reach (their steps stay
        counted): every later run starts at an open stretch or after the tail's start."""
        cover = self.cover
        if len(cover.starts) <= _COVER_KEEP:
            return
        horizon = self.steps - self.max_period
        for st in self.open:
            if st.length:
                horizon = min(horizon, st.start)
        cut = 0
        while cut < len(cover.ends) and cover.ends[cut] < horizon:
            cut += 1
        del cover.starts[:cut]
        del cover.ends[:cut]

    # --- the end -----------------------------------------------------------------------

    def finish(self) -> RunOutcome:
        """Close the open stretches; the `RunOutcome` of every step pushed."""
        t = len(self.tail)
        g0 = self.steps - t
        tail = self.tail

        def info(j: int) -> KeptStep:
            return tail[j]

        for p, st in enumerate(self.open, 1):
            if st.length:
                self._close(p, st.start, st.length, st.block, st.primitive, g0, info)
                st.length = 0
        best: Run | None = None
        tools: tuple[str, ...] = ()
        if self.best is not None:
            k, p, start, block, end_event = self.best
            best = Run(period=p, occurrences=k, start_step=start,
                       end_step=run_end(start, p, k), start_event=block[0].first,
                       end_event=end_event, pattern=tuple(s.preview for s in block))
            tools = tuple(sorted({name for s in block for name in s.tools}))
        runs = sorted((run for _, run in self.heap),
                      key=lambda r: run_order(r.start_step, r.period, r.occurrences))
        return RunOutcome(best=best, best_tools=tools, runs=tuple(runs), total=self.total,
                          covered=self.covered)
