"""Result building: the `GraderResult` of the events fed so far, from the front and the
open turn's step, without changing either (the open step is searched on copies)."""

from __future__ import annotations

from collections.abc import Callable

from ..config import MaxRepeatConfig
from ..events import Trajectory
from ..grade import build_result, run_rank
from ..result import GraderResult, Run
from ..rules import DEFAULT_MAX_RUNS, Cover, largest
from .search import StretchSearch, best_rank, copy_stretches, make_run, run_key
from .state import Best, DoneStep, Front

__all__ = ["ResultBuilder"]


class ResultBuilder:
    """Assembles results; caches the parts that only change when the front does.

    Call `forget` whenever the front is replaced or a run above ``max`` is added to it.
    """

    __slots__ = ("config", "max_runs", "best_run", "runs_tuple")

    def __init__(self, config: MaxRepeatConfig, max_runs: int = DEFAULT_MAX_RUNS) -> None:
        self.config = config
        self.max_runs = max_runs
        self.best_run: tuple[Best, Run, tuple[str, ...]] | None = None
        self.runs_tuple: tuple[Run, ...] | None = None

    def forget(self) -> None:
        """Drop the cached runs (the front changed): the listed settled runs are chosen
        again from all of them, so this costs O(runs), as copying them did before."""
        self.best_run = None
        self.runs_tuple = None

    def build(
        self,
        front: Front,
        open_step: DoneStep | None,
        equals_open: Callable[[DoneStep], bool],
        *,
        trajectory: Trajectory,
        name: str,
        watched_steps: int,
        watched_calls: int,
    ) -> GraderResult:
        """The result with ``open_step`` (if any) counted as closed; ``equals_open(d)``
        says whether the open step's fingerprint equals pushed step ``d``'s."""
        config = self.config
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
            if found.occurrences > config.max:
                extra.append(make_run(found))

        if tail or any(s.length for s in front.stretches):
            stretches = copy_stretches(front.stretches)
            search = StretchSearch(stretches, at, finish)
            if open_step is not None:
                i = front.settled
                empty = open_step.key is None
                search.push_eq(i, [
                    i >= p and not empty and equals_open(at(i - p))
                    for p in range(1, config.max_cycle_period + 1)
                ])
            for p, s in enumerate(stretches, 1):
                if s.length:
                    search.close(p, s)

        if best is None:
            first = front.first_nonempty
            if first is None:
                first = next((d for d in tail if d.key is not None), None)
            if first is not None:
                best = Best(1, 1, first.index, [first], first.last)
        run: Run | None = None
        tools: tuple[str, ...] = ()
        if best is not None:
            if self.best_run is not None and self.best_run[0] is best:
                _, run, tools = self.best_run
            else:
                run = make_run(best)
                tools = tuple(sorted({n for d in best.block for n in d.tools}))
                self.best_run = (best, run, tools)
        cap = self.max_runs
        if self.runs_tuple is None:
            # The listed settled runs: the largest of all runs are the largest of these
            # and of the runs still growing, so choosing here once is exact.
            self.runs_tuple = tuple(largest(front.runs, run_rank, cap))
        runs = self.runs_tuple
        total = len(front.runs)
        loops = front.loop_steps
        if extra:
            # Runs still growing (a live loop): the settled ones stay as they are.
            extra.sort(key=run_key)
            total += len(extra)
            if not runs or run_key(extra[0]) > run_key(runs[-1]):
                runs = runs + tuple(extra)
            else:
                runs = tuple(sorted([*runs, *extra], key=run_key))
            runs = tuple(largest(runs, run_rank, cap))
            cover = Cover(front.cover_starts, front.cover_ends)
            loops += cover.uncovered((r.start_step, r.end_step) for r in extra)
        return build_result(
            trajectory,
            config,
            name,
            best=run,
            best_tools=tools,
            runs=runs,
            watched_steps=watched_steps,
            watched_calls=watched_calls,
            empty_steps=front.settled_empty + sum(1 for d in tail if d.key is None),
            loop_steps=loops,
            runs_total=total,
        )
