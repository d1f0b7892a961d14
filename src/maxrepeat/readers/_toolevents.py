"""Building blocks shared by the agent-log readers (atif, codex, gemini-cli, copilot-cli, otel).

`EventBuilder` collects tool calls and results as a log reveals them and lays them out in
the spec's event model: the calls of one model response and their results between one
``turn_start`` and one ``turn_end``. Logs write results before, after or far away from
their calls (ATIF dialects emit results as separate steps, Codex writes error flags in
other records); the builder joins them by call id, keeps the first result of a call, drops
a call id seen before (resumed histories repeat them) and drops results whose call never
appears.

`decode_arguments` and `content_text` apply the readers' common rules for arguments that
arrive as JSON strings and for content-block lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from ..core.errors import TrajectoryFormatError, type_name
from ..core.events import Event, EventData
from . import Source
from ._json import JSON_DECODER, decode_line, iter_lines

__all__ = [
    "EventBuilder",
    "Segment",
    "ToolCall",
    "ToolResult",
    "decode_arguments",
    "content_text",
    "iter_records",
    "decode_record",
    "type_name",
]


def decode_arguments(value: Any) -> Any:
    """The arguments a model passed: a JSON-encoded string is decoded when it parses.

    >>> decode_arguments('{"cmd": "ls"}')
    {'cmd': 'ls'}
    >>> decode_arguments("ls -la")
    'ls -la'
    """
    if isinstance(value, str):
        try:
            return JSON_DECODER.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return value
    return value


_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


def _block_text(block: Any) -> str | None:
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        text = block.get("text")
        kind = block.get("type", "text")
        if isinstance(text, str) and isinstance(kind, str) and kind in _TEXT_TYPES:
            return text
    return None


def content_text(value: Any) -> Any:
    """The text the agent saw in a result: content-block lists become their text.

    A list of text blocks (``{"type": "text", "text": ...}`` and the ``input_text`` /
    ``output_text`` variants, or plain strings) becomes the texts joined by newlines; a
    single text block becomes its text; anything else is kept as it is.

    >>> content_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    'a\\nb'
    >>> content_text({"exit": 1})
    {'exit': 1}
    """
    if isinstance(value, list):
        texts = [_block_text(b) for b in value]
        found = [t for t in texts if t is not None]
        if found or not value:
            return "\n".join(found) if found else value
        return value
    if isinstance(value, dict):
        text = _block_text(value)
        if text is not None and set(value) <= {"type", "text", "detail", "image_url"}:
            return text
    return value


def iter_records(source: Source) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(line number, object, lenient) for each non-blank JSONL line, streamed.

    Raises `TrajectoryFormatError` with the line (and column) of the first line that is
    not JSON or not an object.
    """
    with source.open() as fh:
        for n, line in iter_lines(fh):
            value, lenient = decode_record(line, source.name, n)
            yield n, value, lenient


def decode_record(line: bytes, source: str, n: int) -> tuple[dict[str, Any], bool]:
    """(object, lenient) of non-blank JSONL line ``n`` (`TrajectoryFormatError` when it
    is not JSON or not an object)."""
    value, lenient = decode_line(line, source, n)
    if not isinstance(value, dict):
        raise TrajectoryFormatError(
            source, f"each line must be a JSON object (got {type_name(value)})", line=n)
    return value, lenient


class ToolCall(msgspec.Struct, tag="c"):
    """A call as the builder holds it (a Struct: a resumable reader saves it)."""

    name: str
    call_id: str | None
    arguments: Any


class ToolResult(msgspec.Struct, tag="r"):
    """A result as the builder holds it."""

    call_id: str
    result: Any
    success: bool


class Segment(msgspec.Struct):
    """One turn (``turn`` True) or a call outside any turn, with its items in order."""

    turn: bool
    turn_id: str | None
    items: list[ToolCall | ToolResult] = msgspec.field(default_factory=list)


class EventBuilder:
    """Collects calls and results and lays them out in turns.

    >>> b = EventBuilder()
    >>> b.start_turn("t1"); _ = b.add_call("bash", "c1", {"cmd": "ls"}); b.end_turn()
    >>> b.add_result("c1", "a.txt")
    >>> [e.type for e in b.events()]
    ['turn_start', 'tool_call', 'tool_result', 'turn_end']
    """

    def __init__(self) -> None:
        self._segments: list[Segment] = []
        self._open: Segment | None = None
        self._home: dict[str, Segment] = {}
        self._pending: dict[str, ToolResult] = {}
        self._answered: set[str] = set()
        self._failed: set[str] = set()
        self.calls = 0

    @property
    def in_turn(self) -> bool:
        """Whether a turn is open."""
        return self._open is not None

    @property
    def turn_has_calls(self) -> bool:
        """Whether the open turn holds a call already."""
        return self._open is not None and any(isinstance(i, ToolCall) for i in self._open.items)

    @property
    def turn_answered(self) -> bool:
        """Whether the open turn holds calls and every one of them has its result."""
        if self._open is None:
            return False
        ids = [i.call_id for i in self._open.items if isinstance(i, ToolCall)]
        return bool(ids) and all(c is not None and c in self._answered for c in ids)

    def start_turn(self, turn_id: str | None = None) -> None:
        """Open a turn (closing the open one)."""
        self._open = Segment(True, turn_id)
        self._segments.append(self._open)

    def end_turn(self) -> None:
        """Close the open turn, if any."""
        self._open = None

    def has_call(self, call_id: str) -> bool:
        """Whether a call with this id was added."""
        return call_id in self._home

    def add_call(self, name: str, call_id: str | None, arguments: Any) -> bool:
        """Add a call to the open turn (or on its own); False when the id was seen."""
        if call_id is not None and call_id in self._home:
            return False
        segment = self._open
        if segment is None:
            segment = Segment(False, None)
            self._segments.append(segment)
        segment.items.append(ToolCall(name, call_id, arguments))
        self.calls += 1
        if call_id is not None:
            self._home[call_id] = segment
            waiting = self._pending.pop(call_id, None)
            if waiting is not None:
                segment.items.append(waiting)
        return True

    def set_arguments(self, call_id: str, arguments: Any) -> None:
        """Replace the arguments of a call added before."""
        segment = self._home.get(call_id)
        if segment is not None:
            for item in segment.items:
                if isinstance(item, ToolCall) and item.call_id == call_id:
                    item.arguments = arguments

    def add_result(self, call_id: str, result: Any, success: bool = True) -> None:
        """The result of a call (placed in its call's turn); later results are ignored."""
        if call_id in self._answered:
            return
        self._answered.add(call_id)
        item = ToolResult(call_id, result, success)
        segment = self._home.get(call_id)
        if segment is None:
            self._pending[call_id] = item
        else:
            segment.items.append(item)

    def has_result(self, call_id: str) -> bool:
        """Whether a result for this call id was added."""
        return call_id in self._answered

    def mark_failed(self, call_id: str) -> None:
        """Record the format's error flag for a call, wherever its result is."""
        self._failed.add(call_id)

    def events(self) -> tuple[Event, ...]:
        """The events, turn by turn."""
        return tuple(self._events_of(self._segments))

    def _events_of(self, segments: list[Segment]) -> list[Event]:
        out: list[Event] = []
        for segment in segments:
            if not segment.items:
                continue  # a response without calls forms no step
            if segment.turn:
                out.append(Event("turn_start", EventData(turn_id=segment.turn_id)))
            for item in segment.items:
                if isinstance(item, ToolCall):
                    out.append(Event("tool_call", EventData(
                        tool_name=item.name, tool_call_id=item.call_id,
                        arguments=item.arguments)))
                else:
                    ok = item.success and item.call_id not in self._failed
                    out.append(Event("tool_result", EventData(
                        tool_call_id=item.call_id, result=item.result, success=ok)))
            if segment.turn:
                out.append(Event("turn_end", EventData(turn_id=segment.turn_id)))
        return out
