"""Streaming one large native JSON document (the ``vally`` format) with ``ijson``.

A single JSON document larger than `stream_threshold()` bytes (default 512 MiB, or the
``MAXREPEAT_STREAM_THRESHOLD`` environment variable) is read by streaming with ``ijson``
(its C backend when built) instead of being loaded whole: an array of trajectories is read
one trajectory at a time, and one trajectory's events are decoded one event at a time
without ever holding the file's bytes. Results are exactly those of the in-memory path
(`readers.vally`): whatever the streaming parser would read differently (invalid JSON,
``NaN``, numbers out of its range, surrogate escapes, which yajl would replace) makes the
file take the in-memory path, which reports it as it always does.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import IO, Any, Final

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory, event_from_dict, trajectory_from_dict
from . import Item, Source
from ._json import BOM, first_json_char
from ._json_repeats import last_only, may_repeat, repeated_keys
from .vally import STREAM_THRESHOLD, _Data, _Event, _id_of, stream_threshold

__all__ = [
    "stream_threshold",
    "STREAM_THRESHOLD",
    "stream_trajectories",
    "stream_one_trajectory",
    "StreamedTrajectory",
]

# --- streaming one large document -------------------------------------------------------

#: A ``\\uD800``-``\\uDFFF`` escape: yajl replaces lone surrogates, the in-memory path keeps them.
_SURROGATE: Final = re.compile(rb"\\[uU][dD][89a-fA-F]")
#: What ijson is fed at a time. Its C backend decodes every item of a buffer before
#: yielding the first, so the peak follows this (~10x: 8 MiB cost ~60 MB of RSS); much
#: smaller blocks made a long string quadratic (each block copied again).
_CHUNK: Final = 2 * 1024 * 1024
#: the byte scans (surrogate escapes, repeated keys) read smaller blocks: memory
_SCAN: Final = 1024 * 1024


def _ijson() -> Any:
    try:
        import ijson  # type: ignore[import-untyped]
    except ImportError:
        return None
    return ijson


def _open_body(source: Source) -> IO[bytes]:
    fh = source.open()
    if fh.read(3) != BOM:
        fh.seek(0)
    return fh


def _has_surrogate_escape(source: Source) -> bool:
    with source.open() as fh:
        tail = b""
        while chunk := fh.read(_SCAN):
            if _SURROGATE.search(tail + chunk):
                return True
            tail = chunk[-8:]
    return False


def _streams_cleanly(ijson: Any, source: Source) -> bool:
    """Whether the streaming parser reads the whole document (a C-speed pass, no values)."""
    try:
        with _open_body(source) as fh:
            for _ in ijson.items(fh, "\x00", use_float=True, buf_size=_CHUNK):
                pass
    except Exception:
        # Invalid JSON, NaN, numbers out of yajl's range: the in-memory path decides.
        return False
    return True


def _items(ijson: Any, source: Source, prefix: str) -> Iterator[Any]:
    repeated = _repeated_keys(ijson, source)
    with _open_body(source) as fh:
        if repeated:
            events = last_only(ijson.parse(fh, use_float=True, buf_size=_CHUNK), repeated)
            yield from ijson.items(events, prefix)
        else:
            yield from ijson.items(fh, prefix, use_float=True, buf_size=_CHUNK)


def _repeated_keys(ijson: Any, source: Source) -> dict[tuple[int, str], int]:
    """{(object number, key): occurrences} of the repeated keys of the document and of
    its direct child objects (empty when none; `_json_repeats`)."""
    assert source.path is not None
    st = os.stat(source.path)
    cache_key = (source.path, st.st_size, st.st_mtime)
    if cache_key in _REPEATED:
        return _REPEATED[cache_key]
    found: dict[tuple[int, str], int] = {}
    with source.open() as fh:
        may = may_repeat(iter(partial(fh.read, _SCAN), b""))
    if may:
        with _open_body(source) as fh:
            found = repeated_keys(ijson.parse(fh, use_float=True, buf_size=_CHUNK))
    if len(_REPEATED) > 64:
        _REPEATED.clear()
    _REPEATED[cache_key] = found
    return found


_REPEATED: dict[tuple[str, int, float], dict[tuple[int, str], int]] = {}


def _first(ijson: Any, source: Source, prefix: str) -> list[Any]:
    return list(_items(ijson, source, prefix))


def stream_trajectories(source: Source) -> Iterator[Item] | None:
    """The trajectories of one large JSON document, read by streaming; None when this
    document must take the in-memory path (no ijson, or content yajl reads differently)."""
    ijson = _ijson()
    if ijson is None or source.path is None:
        return None
    if _has_surrogate_escape(source) or not _streams_cleanly(ijson, source):
        return None
    first = first_json_char(source.head)
    if first == b"[":
        return _stream_array(ijson, source)
    base = _object_base(ijson, source)
    return None if base is None else _stream_one(ijson, source, base)


def _object_base(ijson: Any, source: Source) -> str | None:
    """Where one trajectory object keeps its events ("" or "trajectory."), or None."""
    if first_json_char(source.head) != b"{":
        return None
    # The layout decides where the events are: top level, or under ``trajectory`` when
    # the top level has no ``events`` (null counts as none, as in the in-memory path).
    top = _first(ijson, source, "events") if not _any(ijson, source, "events.item") else None
    if top is None:
        return ""
    if top and top[0] is not None:
        return None  # an empty or malformed events value: small, load it whole
    inner = _first(ijson, source, "trajectory.events") if not _any(
        ijson, source, "trajectory.events.item") else None
    return None if inner is not None else "trajectory."


@dataclass(frozen=True)
class StreamedTrajectory:
    """One large trajectory document, as passes over its events (never all in memory).

    ``events()`` starts a new pass; each event is checked as the in-memory path checks
    it, so a malformed one raises the same `TrajectoryFormatError` (without the file:
    ``error.with_source(source)`` gives the reader's error).
    """

    source: str
    id: str | None
    events: Callable[[], Iterator[Any]]


def stream_one_trajectory(source: Source) -> StreamedTrajectory | None:
    """The large single-trajectory document of ``source`` as event passes, or None when
    it is not one (an array, or content that must take the in-memory path).

    Graders that keep a small state per event (the `Monitor`) grade it in bounded
    memory: this is what ``maxrepeat grade`` does above `stream_threshold()`.
    """
    ijson = _ijson()
    if ijson is None or source.path is None or first_json_char(source.head) != b"{":
        return None
    if _has_surrogate_escape(source) or not _streams_cleanly(ijson, source):
        return None
    base = _object_base(ijson, source)
    if base is None:
        return None

    def events() -> Iterator[Any]:
        for i, raw in enumerate(_items(ijson, source, base + "events.item")):
            yield _compact(event_from_dict(raw, i))

    return StreamedTrajectory(source.name, _scalar_id(_first(ijson, source, base + "id")),
                              events)


def _any(ijson: Any, source: Source, prefix: str) -> bool:
    for _ in _items(ijson, source, prefix):
        return True
    return False


def _scalar_id(values: list[Any]) -> str | None:
    return _id_of(values[-1]) if values else None


def _stream_one(ijson: Any, source: Source, base: str) -> Iterator[Item]:
    name = source.name
    events = []
    try:
        for i, raw in enumerate(_items(ijson, source, base + "events.item")):
            events.append(_compact(event_from_dict(raw, i)))
    except TrajectoryFormatError as err:
        yield err.with_source(name)
        return
    names = _first(ijson, source, base + "stimulus.name")
    stimulus = names[-1] if names else None
    yield Trajectory(
        events=events,
        id=_scalar_id(_first(ijson, source, base + "id")),
        source=name,
        stimulus=stimulus if isinstance(stimulus, str) else None,
    )


_ENCODE_RAW: Final = msgspec.json.Encoder().encode


def _as_raw(value: Any) -> Any:
    """A decoded value stored as JSON bytes again: far smaller than dicts and lists, and
    out of the cyclic GC's way, for a trajectory too large to hold as Python values. The
    bytes spell the same value (the document has no NaN, infinities or surrogates here:
    those take the in-memory path), so every comparison is unchanged."""
    if value is None:
        return None
    try:
        return msgspec.Raw(_ENCODE_RAW(value))
    except (TypeError, ValueError, OverflowError):
        return value


_NO_DATA: Final = _Data()


def _compact(event: Any) -> Any:
    """The reader's own compact event (what the in-memory path makes) for a checked one;
    turn boundaries and other events share one empty data, tool names are interned."""
    data = event.data
    if event.type not in ("tool_call", "tool_result"):
        return _Event(sys.intern(event.type), _NO_DATA)
    name = data.tool_name
    return _Event(event.type, _Data(
        tool_name=sys.intern(name) if name is not None else None,
        tool_call_id=data.tool_call_id,
        # None where absent, as when msgspec decodes the field (see _Data)
        arguments=_as_raw(data.arguments) if event.type == "tool_call" else None,  # type: ignore[arg-type]
        result=_as_raw(data.result) if event.type == "tool_result" else None,  # type: ignore[arg-type]
        success=data.success,
    ))


def _stream_array(ijson: Any, source: Source) -> Iterator[Item]:
    for i, obj in enumerate(_items(ijson, source, "item")):
        try:
            yield trajectory_from_dict(obj, source=f"{source.name}[{i}]")
        except TrajectoryFormatError as err:
            yield err
