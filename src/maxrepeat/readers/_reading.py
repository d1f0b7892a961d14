"""Reading an input with the right reader: `read_source` (one input; the format given or
found by `registry.detect`) and `read_trajectories` (files, directories, standard input).
An unreadable input or record is an error in place of its trajectories, and a bug of a
reader or a sniffer is reported in place too (`INTERNAL_ERROR`), so a batch goes on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final, Literal, overload

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from .registry import Item, detect, get_reader
from .source import Source
from .walk import expand_paths, no_trajectory

__all__ = ["INTERNAL_ERROR", "read_source", "read_trajectories"]


def read_source(source: Source, format: str = "auto") -> Iterator[Item]:
    """Every trajectory in ``source`` (and an error in place of each unreadable record)."""
    if source.path is not None and os.path.isdir(source.path):
        yield no_trajectory(source.path)  # what a walk that found nothing leaves
        return
    try:
        reader = detect(source) if format == "auto" else get_reader(format)
    except TrajectoryFormatError as err:
        yield err if err.source else err.with_source(source.name)
        return
    except OSError as exc:
        yield TrajectoryFormatError(source.name, f"cannot read: {exc.strerror or exc}")
        return
    except Exception as exc:  # a sniffing bug must not end a batch: report it in place
        yield _internal_error(source, "detecting the format", exc)
        return
    try:
        yield from reader.read(source)
    except OSError as exc:
        yield TrajectoryFormatError(source.name, f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a reader bug must not end a batch: report it in place
        yield _internal_error(source, f"reading it as {reader.name}", exc)


#: marks errors that are bugs of maxrepeat, not faults of the input (fuzz tests look for it)
INTERNAL_ERROR: Final = "internal error"


def _internal_error(source: Source, doing: str, exc: Exception) -> TrajectoryFormatError:
    detail = str(exc)[:200]
    return TrajectoryFormatError(
        source.name,
        f"{INTERNAL_ERROR} while {doing}: {type(exc).__name__}"
        + (f": {detail}" if detail else "")
        + " (a maxrepeat bug: please report it with this file)",
    )


@overload
def read_trajectories(
    path: str | os.PathLike[str], *, format: str = ..., errors: Literal["raise"] = ...
) -> Iterator[Trajectory]: ...


@overload
def read_trajectories(
    path: str | os.PathLike[str], *, format: str = ..., errors: Literal["yield"]
) -> Iterator[Item]: ...


def read_trajectories(
    path: str | os.PathLike[str],
    *,
    format: str = "auto",
    errors: Literal["raise", "yield"] = "raise",
) -> Iterator[Trajectory] | Iterator[Item]:
    """The trajectories in a file, a directory (recursively) or standard input (``-``).

    Streams: one trajectory is read at a time. With ``errors="raise"`` (the default) an
    unreadable record raises `TrajectoryFormatError`; with ``errors="yield"`` the error is
    yielded in its place and reading goes on.

    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> _ = p.write_text(json.dumps({"id": "run-1", "events": []}))
    >>> [t.label for t in read_trajectories(p)]
    ['run-1']
    """
    def gen() -> Iterator[Item]:
        for p in expand_paths([os.fspath(path)]):
            try:
                source = Source.from_path(p)
            except OSError as exc:
                yield TrajectoryFormatError(p, f"cannot read: {exc.strerror or exc}")
                continue
            with source:
                for item in read_source(source, format):
                    if isinstance(item, TrajectoryFormatError) and errors == "raise":
                        raise item
                    yield item

    return gen()
