"""The native trajectory JSON of spec §1 (the seed framework's shape).

Accepted layouts: one trajectory object; a bare ``{"events": [...]}``; a JSON array of
trajectories; JSONL with one trajectory per line; JSONL records carrying the trajectory
under ``trajectory`` (as ``eval --output jsonl`` writes). A trajectory is named by its
``id``, else by ``file``, ``file:line`` (JSONL) or ``file[index]`` (array).

The fast path decodes straight into structs that keep only what the grader reads, with
``arguments`` and ``result`` as undecoded ``msgspec.Raw`` slices (decoded only when a match
mode needs them). Anything unusual falls back to the checked dict path, which gives exact
error positions.

A single JSON document larger than `stream_threshold()` bytes is streamed instead of
loaded whole (`readers._vally_stream`), with exactly the results of the in-memory path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, Any, Final

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory, trajectory_from_dict
from ..core.steps import events_readable
from . import Item, Reader, Source
from ._json import (
    BOM,
    decode,
    decode_typed,
    first_json_char,
    iter_lines,
)
from ._regular import open_regular

__all__ = [
    "READER",
    "read_bytes_as_trajectories",
    "read_one",
    "read_jsonl_range",
    "stream_threshold",
    "STREAM_THRESHOLD",
    "read_array_range",
    "array_ranges_of",
]

# gc=False: these hold only strings, numbers and Raw slices (no cycles possible), and a
# large trajectory has millions of them; left to the cyclic GC, every full collection
# during grading would walk them all.
class _Data(msgspec.Struct, rename="camel", gc=False):
    tool_name: str | None = None
    tool_call_id: str | None = None
    # Raw alone: msgspec reads ``Raw | None`` as "null only", which sent every call with
    # arguments down the slow path. An absent value stays None; a present one, null
    # included, is a Raw slice (``null`` decodes to None wherever it is read).
    arguments: msgspec.Raw = None  # type: ignore[assignment]
    result: msgspec.Raw = None  # type: ignore[assignment]
    success: bool | None = None


class _Event(msgspec.Struct, gc=False):
    type: str
    data: _Data | None = None


class _Stimulus(msgspec.Struct, gc=False):
    name: Any = None


class _Traj(msgspec.Struct, gc=False):
    events: list[_Event] | None = None
    trajectory: _Traj | None = None
    id: Any = None
    stimulus: _Stimulus | None = None


def _id_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _from_wire(wire: _Traj, source: str) -> Trajectory | None:
    if wire.events is None and wire.trajectory is not None:
        wire = wire.trajectory
    if wire.events is None:
        return None
    if not events_readable(wire.events):
        return None  # let the checked path report it with its position
    name = wire.stimulus.name if wire.stimulus is not None else None
    return Trajectory(
        events=wire.events,
        id=_id_of(wire.id),
        source=source,
        stimulus=name if isinstance(name, str) else None,
    )


def _one(data: bytes, source: str, line0: int = 0) -> Trajectory:
    wire = decode_typed(data, _Traj, source, line0=line0)
    if wire is not None:
        traj = _from_wire(wire, source)
        if traj is not None:
            return traj
    value, lenient = decode(data, source, line0=line0)
    try:
        return trajectory_from_dict(value, source=source, lenient=lenient)
    except TrajectoryFormatError as err:
        if line0:
            raise TrajectoryFormatError(source, err.reason, position=err.position) from None
        raise


def read_one(data: bytes, source: str) -> Trajectory:
    """One trajectory from the JSON bytes of one object (or a record carrying it under
    ``trajectory``); raises `TrajectoryFormatError` with its position when unreadable.

    >>> read_one(b'{"id": "r", "events": []}', "x").label
    'r'
    """
    return _one(data, source)


def read_bytes_as_trajectories(data: bytes, name: str) -> Iterator[Item]:
    """Trajectories from a whole JSON document (an object or an array of objects)."""
    if first_json_char(data) == b"[":
        items = decode_typed(data, list[msgspec.Raw], name)
        if items is not None:
            for i, raw in enumerate(items):
                try:
                    yield _one(bytes(raw), f"{name}[{i}]")
                except TrajectoryFormatError as err:
                    yield err
            return
        try:
            value, lenient = decode(data, name)
        except TrajectoryFormatError as err:
            yield err
            return
        if not isinstance(value, list):
            yield TrajectoryFormatError(name, "expected a JSON array of trajectories")
            return
        for i, obj in enumerate(value):
            try:
                yield trajectory_from_dict(obj, source=f"{name}[{i}]", lenient=lenient)
            except TrajectoryFormatError as err:
                yield err
        return
    try:
        yield _one(data, name)
    except TrajectoryFormatError as err:
        yield err


def read_jsonl_range(
    stream: IO[bytes], name: str, start: int, end: int, first_line: int
) -> Iterator[Item]:
    """The trajectories of the JSONL lines in bytes ``[start, end)`` of ``stream``.

    ``start`` must be the start of line ``first_line`` (1-based) and ``end`` a line start
    or the end of the file: the batch engine splits a large JSONL file this way, and the
    records read are labelled exactly as a whole-file read labels them.
    """
    stream.seek(start)
    n = first_line - 1
    pos = start
    while pos < end:
        line = stream.readline()
        if not line:
            break
        pos += len(line)
        n += 1
        if n == 1:
            line = line[3:] if line.startswith(BOM) else line
        if not line.strip():
            continue
        try:
            yield _one(line, f"{name}:{n}", line0=n - 1)
        except TrajectoryFormatError as err:
            yield err


def array_ranges_of(path: str) -> list[Any] | None:
    """The item ranges of the large JSON array in file ``path`` (`readers._array`), or
    None when it is small, not an array, or must be read whole to be read right."""
    from . import _array

    size = _size(path)
    if size <= _array.SPLIT_BYTES:
        return None
    try:
        with open_regular(path) as fh:
            return _array.array_ranges(fh, size)
    except OSError:
        return None


def read_array_range(stream: IO[bytes], name: str, rng: Any) -> Iterator[Item]:
    """The trajectories of one range of a JSON array (`array_ranges_of`), named
    ``file[index]`` exactly as a whole-file read names them."""
    from ._array import read_range_items

    for k, item in enumerate(read_range_items(stream, rng)):
        try:
            yield _one(item, f"{name}[{rng.first + k}]")
        except TrajectoryFormatError as err:
            yield err


def _read(source: Source) -> Iterator[Item]:
    if source.is_jsonl():
        with source.open() as fh:
            for n, line in iter_lines(fh):
                try:
                    yield _one(line, f"{source.name}:{n}", line0=n - 1)
                except TrajectoryFormatError as err:
                    yield err
        return
    if source.path is not None and first_json_char(source.head) == b"[":
        ranges = array_ranges_of(source.path)
        if ranges is not None:  # a large array: a range of items at a time
            with source.open() as fh:
                for rng in ranges:
                    yield from read_array_range(fh, source.name, rng)
            return
    if source.path is not None and _size(source.path) > stream_threshold():
        from ._vally_stream import stream_trajectories

        streamed = stream_trajectories(source)
        if streamed is not None:
            yield from streamed
            return
    yield from read_bytes_as_trajectories(source.read_bytes(), source.name)


#: Default size (bytes) above which one JSON document is streamed rather than loaded.
STREAM_THRESHOLD: Final = 512 * 1024 * 1024


def stream_threshold() -> int:
    """The size in bytes above which a JSON document is streamed (env override first).
    Defined here, not in `readers._vally_stream`: every file's reading asks, and only
    the large ones need the streaming module (start-up is measured).

    >>> stream_threshold() > 0
    True
    """
    env = os.environ.get("MAXREPEAT_STREAM_THRESHOLD")
    if env:
        try:
            return int(env)
        except ValueError:
            pass
    return STREAM_THRESHOLD


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return -1


_EVENT_TYPES = (b'"tool_call"', b'"tool_result"', b'"turn_start"', b'"turn_end"')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) not in (b"{", b"["):
        return 0
    if b'"events"' not in head:
        return 0
    if any(t in head for t in _EVENT_TYPES):
        return 90
    if b'"stimulus"' in head or b'"events": []' in head or b'"events":[]' in head:
        return 60
    return 5


READER = Reader(
    name="vally",
    description="native trajectory JSON/JSONL of the spec (events with tool_call, "
    "tool_result, turn_start, turn_end)",
    extensions=(".json", ".jsonl"),
    markers=(b'"events"',),
    top=90,
    order=10,
    sniff=_sniff,
    read=_read,
)

