"""Incremental repeated-run search: the stretches of ``F[i] == F[i-p]`` for every period p,
advanced one pushed step at a time (the batch engine's ``core/search.py`` finds the same
stretches over a whole table at once; both apply ``core/rules.py``).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable

from ..result import Run
from ..rules import Cover, copies, is_primitive, rank, run_end, run_order
from .state import Best, DoneStep, Front, Stretch

__all__ = ["StretchSearch", "make_run", "run_key", "best_rank", "advance", "copy_stretches",
           "close_front"]


def make_run(best: Best) -> Run:
    """The `Run` of a finished stretch."""
    return Run(
        period=best.period,
        occurrences=best.occurrences,
        start_step=best.start,
        end_step=run_end(best.start, best.period, best.occurrences),
        start_event=best.block[0].first,
        end_event=best.end_event,
        pattern=tuple(d.preview for d in best.block),
    )


def run_key(run: Run) -> tuple[int, int, int]:
    """The sort key of ``metadata.runs`` (`rules.run_order`)."""
    return run_order(run.start_step, run.period, run.occurrences)


def best_rank(best: Best) -> tuple[int, int, int]:
    """The rank of a finished stretch (`rules.rank`)."""
    return rank(best.occurrences, best.period, best.start)


def copy_stretches(stretches: list[Stretch]) -> list[Stretch]:
    """Stretch states that a search may change without touching the originals."""
    return [Stretch(s.start, s.length, s.primitive, s.block) for s in stretches]


class StretchSearch:
    """One pass of the stretch search over steps appended to a sequence.

    ``at(i)`` gives step i (only the last 2P before the current one are asked for);
    ``finish`` receives every stretch that ends with at least two copies.
    """

    __slots__ = ("stretches", "at", "finish")

    def __init__(
        self,
        stretches: list[Stretch],
        at: Callable[[int], DoneStep],
        finish: Callable[[Best], None],
    ) -> None:
        self.stretches = stretches
        self.at = at
        self.finish = finish

    def push(self, i: int, step: DoneStep) -> None:
        """Push step i, comparing its key with step i-p for each period p."""
        key = step.key
        at = self.at
        self.push_eq(i, [i >= p and key is not None and at(i - p).key == key
                         for p in range(1, len(self.stretches) + 1)])

    def push_eq(self, i: int, eqs: list[bool]) -> None:
        """Push step i, given for each period p whether it equals step i-p."""
        at = self.at
        for p, st in enumerate(self.stretches, 1):
            if eqs[p - 1]:
                if st.length == 0:
                    st.start = i - p
                st.length += 1
                if st.length == p:
                    # Two copies now: the block is steps start..start+p-1, still at hand.
                    st.block = [at(j) for j in range(st.start, st.start + p)]
                    st.primitive = p == 1 or is_primitive([d.key for d in st.block])
            elif st.length:
                self.close(p, st)

    def close(self, p: int, st: Stretch) -> None:
        """End the stretch of period p (it reaches the step pushed last)."""
        if st.length >= p and st.primitive:
            k = copies(st.length, p)
            end = run_end(st.start, p, k)
            self.finish(Best(k, p, st.start, st.block, self.at(end).last))
        st.start = 0  # as a fresh stretch: a state depends only on what it means
        st.length = 0
        st.block = []
        st.primitive = True


def advance(front: Front, done: DoneStep, period: int, above: int) -> bool:
    """Push a settled step into the front; whether a run above ``above`` was added."""
    window = front.window
    added = False

    def at(i: int) -> DoneStep:
        return window[i - front.settled + len(window)]

    def keep(found: Best) -> None:
        nonlocal added
        if front.best is None or best_rank(found) > best_rank(front.best):
            front.best = found
        if found.occurrences > above:
            run = make_run(found)
            insort(front.runs, run, key=run_key)
            cover = Cover(front.cover_starts, front.cover_ends)
            front.loop_steps += cover.add(run.start_step, run.end_step)
            added = True

    StretchSearch(front.stretches, at, keep).push(front.settled, done)
    window.append(done)
    if len(window) > 2 * period:
        del window[0]
    front.settled += 1
    if done.key is None:
        front.settled_empty += 1
    elif front.first_nonempty is None:
        front.first_nonempty = done
    return added


def close_front(front: Front, open_step: DoneStep | None,
                equals_open: Callable[[DoneStep], bool], above: int
                ) -> tuple[Best | None, list[Run]]:
    """The reported run once ``open_step`` (if any) is pushed and every open stretch
    closed, and the runs above ``above`` that closing them adds (the front is left as it
    is: the search runs on copies). ``equals_open(d)`` says whether the open step's
    fingerprint equals pushed step ``d``'s."""
    tail = [open_step] if open_step is not None else []
    window = front.window
    base = front.settled - len(window)

    def at(i: int) -> DoneStep:
        j = i - base
        return window[j] if j < len(window) else tail[j - len(window)]

    best = front.best
    extra: list[Run] = []

    def finish(found: Best) -> None:
        nonlocal best
        if best is None or best_rank(found) > best_rank(best):
            best = found
        if found.occurrences > above:
            extra.append(make_run(found))

    if tail or any(s.length for s in front.stretches):
        stretches = copy_stretches(front.stretches)
        search = StretchSearch(stretches, at, finish)
        if open_step is not None:
            i = front.settled
            empty = open_step.key is None
            search.push_eq(i, [i >= p and not empty and equals_open(at(i - p))
                               for p in range(1, len(stretches) + 1)])
        for p, s in enumerate(stretches, 1):
            if s.length:
                search.close(p, s)
    if best is None:
        first = front.first_nonempty
        if first is None:
            first = next((d for d in tail if d.key is not None), None)
        if first is not None:
            best = Best(1, 1, first.index, [first], first.last)
    return best, extra
