"""The monitor's `RunOutcome`: the runs of the events fed so far, from the front and the
open turn's step, without changing either (the open step is searched on copies)."""

from __future__ import annotations

from collections.abc import Callable

from ..config import MaxRepeatConfig
from ..grade import run_rank
from ..result import Run, RunOutcome
from ..rules import DEFAULT_MAX_RUNS, Cover, largest
from .search import close_front, make_run, run_key
from .state import Best, DoneStep, Front

__all__ = ["ResultBuilder"]


class ResultBuilder:
    """Assembles outcomes; caches the parts that only change when the front does.

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

    def outcome(self, front: Front, open_step: DoneStep | None,
                equals_open: Callable[[DoneStep], bool]) -> RunOutcome:
        """The outcome with ``open_step`` (if any) counted as closed; ``equals_open(d)``
        says whether the open step's fingerprint equals pushed step ``d``'s."""
        best, extra = close_front(front, open_step, equals_open, self.config.max)
        run, tools = self._best_run(best)
        runs, total, covered = self._listed(front, extra)
        return RunOutcome(best=run, best_tools=tools, runs=runs, total=total,
                          covered=covered)

    def _best_run(self, best: Best | None) -> tuple[Run | None, tuple[str, ...]]:
        """The reported run and its tool names (cached while the best stays the same)."""
        if best is None:
            return None, ()
        if self.best_run is not None and self.best_run[0] is best:
            return self.best_run[1], self.best_run[2]
        run = make_run(best)
        tools = tuple(sorted({n for d in best.block for n in d.tools}))
        self.best_run = (best, run, tools)
        return run, tools

    def _listed(self, front: Front, extra: list[Run]) -> tuple[tuple[Run, ...], int, int]:
        """(listed runs, runs above ``max``, steps they cover) of the settled runs and
        the runs still growing (``extra``)."""
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
        return runs, total, loops
