"""The progress bar of a long batch: rich, on standard error, driven by ``on_unit``."""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["progress_bar"]


class _Bar:
    """A rich progress bar on standard error, updated from ``on_unit`` (parent only): the
    bytes of input graded out of the total, and the trajectories read so far."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("grading"), BarColumn(), DownloadColumn(),
            TextColumn("{task.fields[trajectories]} trajectories"),
            TimeElapsedColumn(), TimeRemainingColumn(),
            # Standard output is shown above the bar only when it is this terminal too;
            # redirected (> file, | pipe) it must stay untouched.
            console=Console(stderr=True), transient=True,
            redirect_stdout=sys.stdout.isatty(), redirect_stderr=True,
        )
        self.task = self.progress.add_task("grading", total=None, trajectories=0)

    def __call__(self, done: int, total: int, trajectories: int) -> None:
        self.progress.update(self.task, completed=done, total=total or None,
                             trajectories=f"{trajectories:,}")


class progress_bar:
    """Context manager giving an ``on_unit`` callback that drives a progress bar, or None
    when ``enabled`` is false (not a terminal, ``--quiet``). Standard output written
    inside the block is shown above the bar."""

    def __init__(self, enabled: bool) -> None:
        self.bar = _Bar() if enabled else None

    def __enter__(self) -> Callable[[int, int, int], None] | None:
        if self.bar is not None:
            self.bar.progress.start()
        return self.bar

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.progress.stop()
