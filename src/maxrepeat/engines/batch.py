"""The batch engine (an adapter): many inputs graded by worker processes, in input order.

`BatchGrader` plans the units of work (`engines.units`), grades them in a
`ProcessPoolExecutor` with the grading driver (`engines.driver`) and yields `UnitOutcome`
values strictly in input order whatever the number of workers, so reports are
deterministic. At most ``window`` units are in flight at once, so memory stays bounded by
a few units' results however long the batch is. ``jobs=1`` grades in this process. How
one unit is graded (large single documents included) is `engines.unitgrader`.

Hook points (for interruption handling and atomic reports):

- ``BatchGrader.outcomes()`` is a generator the caller consumes; breaking out of it, or
  calling ``close()``, or leaving the ``with`` block, cancels the units not yet started and
  shuts the pool down. ``close(kill=True)`` also terminates running workers at once (the
  thing to do on Ctrl-C); the results already yielded are complete and in order, so a
  partial summary is simply the summary of what was consumed.
- Workers ignore SIGINT (`_workers.init_worker`): Ctrl-C reaches only the parent, which decides
  how to stop; no worker prints a traceback.
- ``on_unit(done, total, trajectories)`` is called in the parent after each unit is
  yielded (the progress bar): bytes of input graded so far, bytes planned (0 when
  unknown: standard input), and trajectories read so far. A unit is an internal cut of
  the work and never shown; ``on_error(message)`` receives the text of each unreadable input or
  record right before its error results, in order.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a pool is made: start-up of one small file stays cheap
    from concurrent.futures import Future, ProcessPoolExecutor

from ..core.config import MaxRepeatConfig
from ..core.result import GraderResult
from ._workers import init_worker, mp_context, release_ipc, work
from .driver import Detail, Graded, Graders
from .unitgrader import UnitOutcome, grade_unit, iter_unit
from .units import (
    CHUNK_BYTES,
    Unit,
    expand_inputs,
    file_size,
    is_large_array,
    is_splittable,
    plan_units,
    unit_bytes,
)

__all__ = ["UnitOutcome", "BatchGrader", "grade_unit", "default_jobs", "release_ipc"]


def default_jobs() -> int:
    """The number of cores this process may run on.

    >>> default_jobs() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class BatchGrader:
    """Grade ``paths`` with ``graders`` (configs, or a `Graders` such as an eval spec's)
    using ``jobs`` worker processes. ``detail``: what a report wants beside each result
    (`Reporter.detail`), made in the workers from the steps grading built.

    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "r.json"), "w") as f:
    ...     _ = f.write(json.dumps({"id": "r", "events": []}))
    >>> with BatchGrader([d], [MaxRepeatConfig(2)], jobs=1) as batch:
    ...     [r.trajectory for r in batch.results()]
    ['r']
    """

    def __init__(
        self,
        paths: Sequence[str],
        graders: Sequence[MaxRepeatConfig] | Graders,
        *,
        fmt: str = "auto",
        detail: Detail | None = None,
        jobs: int | None = None,
        window: int | None = None,
        chunk: int = CHUNK_BYTES,
        on_error: Callable[[str], None] | None = None,
        on_unit: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.graders = graders if isinstance(graders, Graders) else Graders(graders)
        self.detail = detail
        self.fmt = fmt
        self.jobs = default_jobs() if jobs is None or jobs < 1 else jobs
        self.window = window if window is not None else 4 * self.jobs
        self.files = expand_inputs(paths)
        self.chunk = chunk
        self.on_error = on_error
        self.on_unit = on_unit
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[Future[UnitOutcome]] = deque()
        #: whether worker processes were started (an interrupted run then exits hard)
        self.used_pool = False
        #: units yielded so far, and the number planned
        self.done = 0
        self.total = 0
        #: bytes of input in the units yielded so far, bytes planned; trajectories read
        self.done_bytes = 0
        self.total_bytes = 0
        self.trajectories = 0
        self._unit_bytes: list[int] = []
        #: the files' formats as planning sniffed them (each file sniffed once)
        self._formats: dict[str, str] = {}

    def __enter__(self) -> BatchGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(kill=exc[0] is not None)

    @property
    def parallel(self) -> bool:
        """Whether worker processes are used: more than one job, and more than one file
        or one JSONL file large enough to be split."""
        if self.jobs < 2 or not self.files:
            return False
        if len(self.files) > 1:
            return True
        # One file: worth workers only when it is a JSONL file large enough to split.
        only = self.files[0]
        if only != "-" and file_size(only) > self.chunk and is_splittable(only, self.fmt,
                                                                          self._formats):
            return True
        return is_large_array(only, self.fmt, self._formats)  # cut into ranges of items

    def _plan(self) -> tuple[list[Unit], bool]:
        """The units, and whether they are graded in this process."""
        # Split large JSONL files in-process too: a unit's results are held until it ends,
        # so one unsplit 1 GB file would hold every result of the batch (soak: 870 MB).
        units = list(plan_units(self.files, self.fmt, self.chunk, split=True,
                                known=self._formats))
        self.total = len(units)
        self._unit_bytes = [unit_bytes(u) for u in units]
        self.total_bytes = sum(self._unit_bytes)
        # one unit: starting workers would only cost
        return units, not self.parallel or len(units) < 2

    def outcomes(self) -> Iterator[UnitOutcome]:
        """Each unit's outcome, in input order."""
        units, here = self._plan()
        if here:
            for unit in units:
                yield self._emit(grade_unit(unit, self.graders, self.fmt, self.detail))
            return
        yield from self._pooled(units)

    def _graded_here(self, units: list[Unit]) -> Iterator[Graded]:
        """In this process, one value at a time: nothing of a unit is held back."""
        for unit in units:
            count = 0
            for graded in iter_unit(unit, self.graders, self.fmt, self.detail):
                count += 1
                yield graded
            self._progress(count)

    def _pooled(self, units: list[Unit]) -> Iterator[UnitOutcome]:
        from concurrent.futures import Future, ProcessPoolExecutor

        self.used_pool = True
        self._pool = ProcessPoolExecutor(
            max_workers=self.jobs, mp_context=mp_context(), initializer=init_worker,
            initargs=(self.graders, self.fmt, self.detail, os.getpid()),
        )
        pending = self._pending
        # Standard input cannot be read by a worker: it is graded here, in its turn.
        local: dict[int, Unit] = {}
        try:
            for seq, unit in enumerate(units):
                if unit.paths == ("-",):
                    local[seq] = unit
                    pending.append(Future())
                else:
                    pending.append(self._pool.submit(work, unit))
                while len(pending) >= self.window:
                    yield self._next(local)
            while pending:
                yield self._next(local)
        except KeyboardInterrupt:
            self.close(kill=True)  # Ctrl-C: do not wait for the units running now
            raise
        finally:
            self.close()

    def _next(self, local: dict[int, Unit]) -> UnitOutcome:
        future = self._pending.popleft()
        index = self.done
        if index in local:
            outcome = grade_unit(local.pop(index), self.graders, self.fmt, self.detail)
        else:
            outcome = future.result()
        return self._emit(outcome)

    def _emit(self, outcome: UnitOutcome) -> UnitOutcome:
        self._progress(len(outcome.graded))
        return outcome

    def _progress(self, trajectories: int) -> None:
        self.done_bytes += self._unit_bytes[self.done]
        self.done += 1
        self.trajectories += trajectories
        if self.on_unit is not None:
            self.on_unit(self.done_bytes, self.total_bytes, self.trajectories)

    def graded(self) -> Iterator[Graded]:
        """One `Graded` value per trajectory or unreadable input, in input order (each
        error message goes to ``on_error`` first)."""
        units, here = self._plan()
        stream = (self._graded_here(units) if here else
                  (g for outcome in self._pooled(units) for g in outcome.graded))
        for graded in stream:
            if graded.error is not None and self.on_error is not None:
                self.on_error(graded.error)
            yield graded

    def results(self) -> Iterator[GraderResult]:
        """Every result in input order (error messages go to ``on_error``)."""
        for graded in self.graded():
            yield from graded.results

    def close(self, kill: bool = False) -> None:
        """Cancel units not started and shut the pool down; ``kill`` also terminates
        running workers at once (interruption)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        pending = list(self._pending)
        self._pending.clear()
        if kill:
            # The futures are not cancelled here: the executor fails every pending one with
            # BrokenProcessPool once its workers are gone, and on Python 3.11 setting that
            # on a future already cancelled raises InvalidStateError in the executor's
            # thread (a traceback under the partial summary; seen on a loaded machine).
            # No public API stops running workers; the executor's own table is the way.
            procs = list(getattr(pool, "_processes", {}).values())
            for proc in procs:
                proc.terminate()
            # Not shutdown(wait=True): a worker killed while it held the call queue's lock
            # can leave the executor's threads waiting forever. Reap the workers ourselves.
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False)
            for proc in procs:
                proc.join(timeout=2)
                if proc.is_alive():
                    proc.kill()
                    proc.join(timeout=2)
            # The executor's thread sees its workers gone and closes its queues; let it
            # finish (it usually takes milliseconds) before a quick exit releases them, so
            # that the two do not race. Bounded: this is the join that can wait for ever.
            if manager is not None:
                manager.join(timeout=2)
            return
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
