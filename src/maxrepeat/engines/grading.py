"""One batch graded and reported: the call under ``maxrepeat grade``, whichever engine runs it.

`Grading` takes the inputs, the graders and the engine (``local``: worker processes here,
`engines.batch`; ``ray``: a Ray cluster, `engines.ray`) and a `Reporter`: `Grading.stream`
writes each result's text as it arrives, in input order, and `Grading.finish` the
report's end, returning the `Summary`. What is the same for every engine is here once: which engine
grades the units, the run names made unique across the batch (`RunNames`), the counts
of the summary, the text each result adds to the report, and stopping the workers.

The caller (the CLI) keeps what is its own: the flags, where the report goes (standard
output or an atomic ``--output-file``), the exit status, and what a signal or a closed
pipe does. ``critical`` is a context manager each result's writing runs in (the CLI's
`SigintGuard.critical`: Ctrl-C lands between results, never inside one).

>>> import json, os, tempfile
>>> from maxrepeat import MaxRepeatConfig
>>> from maxrepeat.reporters import get_reporter
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "r.json"), "w") as f:
...     _ = f.write(json.dumps({"id": "r", "events": []}))
>>> out = []
>>> with Grading([d], Graders([MaxRepeatConfig(2)]), get_reporter("jsonl"), jobs=1) as g:
...     summary = g.run(out.append)
>>> summary.total, json.loads(out[0])["trajectory"]
(1, 'r')
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from .driver import Graded, Graders

if TYPE_CHECKING:
    from ..core.summary import Summary
    from ..reporters.base import Reporter
    from .batch import BatchGrader

__all__ = ["Grading", "ENGINES"]

#: the engines a batch can be graded on
ENGINES = ("local", "ray")


class Grading:
    """Grade ``paths`` with ``graders`` on ``engine``, reported by ``reporter``.

    ``jobs``: worker processes of the local engine; ``address``: the Ray cluster (the
    ray engine); ``on_error(message)``: the text of each unreadable input or record,
    before its error results; ``on_unit``: the local engine's progress (`BatchGrader`);
    ``quiet``: no engine log lines (Ray's). In order: `start`, `stream`, `finish`.
    """

    def __init__(
        self,
        paths: Sequence[str],
        graders: Graders,
        reporter: Reporter,
        *,
        fmt: str = "auto",
        engine: str = "local",
        jobs: int | None = None,
        address: str | None = None,
        on_error: Callable[[str], None] | None = None,
        on_unit: Callable[[int, int, int], None] | None = None,
        quiet: bool = False,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)} (got {engine!r})")
        from ..core.summary import SummaryBuilder

        self.paths, self.graders, self.reporter = paths, graders, reporter
        self.fmt, self.engine, self.jobs, self.address = fmt, engine, jobs, address
        self.on_error, self.on_unit, self.quiet = on_error, on_unit, quiet
        self.batch: BatchGrader | None = None
        self._graded: Iterator[Graded] = iter(())
        self._builder = SummaryBuilder(len(graders.configs))

    def __enter__(self) -> Grading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(kill=exc[0] is not None)

    def start(self) -> None:
        """Start the engine. The ray engine connects now: `MissingExtraError` without
        Ray, `ConnectionError` when the cluster cannot be reached."""
        detail = self.reporter.detail()
        if self.engine == "ray":
            from .ray import grade_paths_on_ray

            self._graded = grade_paths_on_ray(
                self.paths, self.graders, self.fmt, address=self.address,
                on_error=self.on_error, detail=detail, quiet=self.quiet)
            return
        from .batch import BatchGrader

        self.batch = BatchGrader(self.paths, self.graders, fmt=self.fmt, jobs=self.jobs,
                                 on_error=self.on_error, on_unit=self.on_unit, detail=detail)
        self._graded = self.batch.graded()

    def stream(
        self,
        write: Callable[[str], object],
        critical: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
    ) -> None:
        """Grade, writing the text each result adds to the report as it comes (each
        result inside ``critical()``), in input order."""
        from ..core.runnames import RunNames

        builder, reporter, runs = self._builder, self.reporter, RunNames()
        for graded in self._graded:
            with critical():
                builder.count_trajectory()
            details = graded.details or (None,) * len(graded.results)
            for result, detail in zip(graded.results, details, strict=True):
                with critical():
                    result = runs.rename(result)
                    write(reporter.add(result, detail))
                    builder.add(result)

    def finish(self, write: Callable[[str], object]) -> Summary:
        """Write the end of the report; the batch's summary."""
        summary = self._builder.build()
        write(self.reporter.finish(summary))
        return summary

    def run(self, write: Callable[[str], object]) -> Summary:
        """`start`, `stream` and `finish` in one call (library use)."""
        self.start()
        self.stream(write)
        return self.finish(write)

    def partial(self) -> Summary:
        """The summary of the results reported so far, marked interrupted."""
        return self._builder.build(interrupted=True)

    @property
    def used_pool(self) -> bool:
        """Whether worker processes were started (an interrupted run then exits hard)."""
        return self.batch is not None and self.batch.used_pool

    def release_ipc(self) -> None:
        """Before a quick exit (``os._exit``) after `close`: unlink the worker pool's
        semaphores as a normal exit would (`batch.release_ipc`)."""
        if self.used_pool:
            from .batch import release_ipc

            release_ipc()

    def close(self, kill: bool = False) -> None:
        """Stop the local engine's workers (``kill``: at once, for an interruption)."""
        if self.batch is not None:
            self.batch.close(kill=kill)
