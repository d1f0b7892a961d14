"""Paths to trajectory files: a directory is walked for the files it holds
(`expand_paths`); one with none gives the error `no_trajectory`.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> for name in ("b.jsonl", "a.json", "notes.txt", ".hidden.json"):
...     _ = (d / name).write_text("{}")
>>> [pathlib.Path(p).name for p in expand_paths([str(d)])]
['a.json', 'b.jsonl']
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from ..core.errors import TrajectoryFormatError

__all__ = ["TRAJECTORY_EXTENSIONS", "expand_paths", "no_trajectory"]

TRAJECTORY_EXTENSIONS: Final = (".json", ".jsonl", ".ndjson", ".traj", ".eval")


def expand_paths(paths: Iterable[str], on_skip: Callable[[str], None] | None = None
                 ) -> Iterator[str]:
    """Paths with each directory replaced by its trajectory files, sorted, recursively.

    A walk reads files ending in `TRAJECTORY_EXTENSIONS` and skips hidden entries (``.``
    names), symlinked directories (not followed: they can loop or leave the tree),
    directories it cannot list, and names that are not regular files (a FIFO would block
    the batch); ``on_skip`` is told each of these. Files of other types are not
    trajectories and pass silently. A directory in which nothing is found is yielded
    itself: reading it gives the error result "no trajectory file found".
    """
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        found: list[str] = []

        def unreadable(exc: OSError) -> None:
            if on_skip is not None:
                # called by this iteration's os.walk only, while `path` is still this one
                where = exc.filename if isinstance(exc.filename, str) else path  # noqa: B023
                on_skip(f"{where}: skipped: cannot list this directory "
                        f"({exc.strerror or exc})")

        for root, dirs, files in os.walk(path, onerror=unreadable):
            kept = []
            for d in sorted(dirs):
                full = os.path.join(root, d)
                if d.startswith("."):
                    why = "hidden directory"
                elif os.path.islink(full):
                    why = "symlinked directory (not followed)"
                else:
                    kept.append(d)
                    continue
                if on_skip is not None:
                    on_skip(f"{full}: skipped: {why}")
            dirs[:] = kept
            for f in files:
                full = os.path.join(root, f)
                if os.path.splitext(f)[1].lower() not in TRAJECTORY_EXTENSIONS:
                    continue  # configs, notes, logs: not trajectories, not worth a line
                if f.startswith("."):
                    if on_skip is not None:
                        on_skip(f"{full}: skipped: hidden file")
                elif not _regular_or_link(full):
                    if on_skip is not None:
                        on_skip(f"{full}: skipped: not a regular file")
                else:
                    found.append(full)
        if found:
            yield from sorted(found)
        else:
            yield path


def _regular_or_link(path: str) -> bool:
    """Whether ``path`` is a regular file (a symlink to one counts; a broken symlink too,
    so that reading it reports the problem)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def no_trajectory(path: str) -> TrajectoryFormatError:
    """The error a directory without trajectory files reads as."""
    return TrajectoryFormatError(
        path, "no trajectory file found in this directory (a walk reads files ending in "
        f"{', '.join(TRAJECTORY_EXTENSIONS)}, and skips hidden, symlinked and unreadable "
        "entries)")
