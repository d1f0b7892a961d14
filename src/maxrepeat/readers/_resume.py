"""Resumable conversion of a growing agent log (the Codex, Gemini CLI and Copilot CLI hooks).

A hook runs at every tool call and must not convert the agent's whole session log each
time. These readers cannot simply emit events as lines arrive: a result is placed in the
turn of its call however late it comes, Codex writes error flags in other records, Gemini
CLI rewrites a message in place and rewinds. So the conversion is split in two:

* the **settled** part: turns whose events are handed out once (the hook feeds them to
  its monitors) and then forgotten, except for 16-byte digests of their call ids
  (`Marks`): which calls were settled, which without a result, which with a failed
  one;
* the **open** part: the turns that may still change (the last one, and any turn still
  waiting for a result), kept whole in the saved state.

When a later line would change a settled turn (a result for a call settled without one,
an error flag for a result settled as a success, new arguments for a settled call, a
Gemini rewrite or rewind of a settled message), the conversion raises `_Changed` and the
caller reads the log again from its start: never a different answer, only a slower call.
Which turns are settled is a matter of speed only (a turn is settled once it is not the
last and each of its calls has its result, or once `FORCE_AFTER` turns follow it): the
events handed out plus the open events are always those of one full read, which the
property tests check by cutting logs at every line.

The saved state (`msgspec` MessagePack) is the caller's to verify against the log; a state
that does not decode raises `_StateError` from `resume` (the caller then reads from the
start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

import msgspec

from ..core.events import Event
from ._json import strip_bom
from ._marks import Marks, encode_state, mark
from ._toolevents import EventBuilder, Segment, ToolCall, ToolResult, decode_record

__all__ = ["_Changed", "_NotResumable", "_StateError", "encode", "BuilderState",
           "ResumableBuilder", "Resumable", "resume", "RESUMABLE", "FORCE_AFTER", "line_record"]

#: A turn still waiting for a result is settled anyway once this many turns follow it
#: (a call that never gets its result must not keep the open part growing).
FORCE_AFTER = 16


class _Changed(Exception):
    """A line changes what was already settled: convert the log again from its start."""


class _StateError(Exception):
    """A saved state that does not decode, or a state that cannot be saved."""


class _NotResumable(Exception):
    """The log is in a layout read only whole (a legacy single-JSON Gemini CLI session)."""


class BuilderState(msgspec.Struct, array_like=True):
    """What `ResumableBuilder` saves: its open segments and the digests of settled ids."""

    segments: list[Segment]
    open: bool
    pending: list[ToolResult]
    answered: list[str]
    failed: list[str]
    calls: int
    gone: Marks
    gone_open: Marks
    gone_failed: Marks


class ResumableBuilder(EventBuilder):
    """An `EventBuilder` whose settled turns are handed out and forgotten.

    >>> b = ResumableBuilder()
    >>> b.start_turn("t1"); _ = b.add_call("bash", "c1", {}); b.add_result("c1", "x")
    >>> b.start_turn("t2"); _ = b.add_call("bash", "c2", {})
    >>> [e.type for e in b.settle()]
    ['turn_start', 'tool_call', 'tool_result', 'turn_end']
    >>> b2 = ResumableBuilder(b.state())
    >>> b2.add_result("c1", "late")     # answered already: ignored, as a full read does
    >>> b2.mark_failed("c1")
    Traceback (most recent call last):
    ...
    maxrepeat.readers._resume._Changed: c1
    """

    def __init__(self, state: BuilderState | None = None) -> None:
        super().__init__()
        self.gone = Marks()
        self.gone_open = Marks()
        self.gone_failed = Marks()
        if state is None:
            return
        self._segments = list(state.segments)
        self._open = self._segments[-1] if state.open and self._segments else None
        for segment in self._segments:
            for item in segment.items:
                if isinstance(item, ToolCall) and item.call_id is not None:
                    self._home[item.call_id] = segment
        self._pending = {r.call_id: r for r in state.pending}
        self._answered = set(state.answered)
        self._failed = set(state.failed)
        self.calls = state.calls
        self.gone, self.gone_open = state.gone, state.gone_open
        self.gone_failed = state.gone_failed

    def _settled(self, call_id: str) -> bytes | None:
        """The digest of ``call_id`` when that call was settled, else None."""
        if call_id in self._home or not self.gone.data:
            return None
        m = mark(call_id)
        return m if m in self.gone else None

    def settled_any(self, call_id: str | None) -> bool:
        """Whether the call ``call_id`` was settled (None: whether any call was settled
        without its result)."""
        if call_id is None:
            return bool(self.gone_open.data)
        return self._settled(call_id) is not None

    def has_open(self, call_id: str) -> bool:
        """Whether the call is in the open part."""
        return call_id in self._home

    def has_call(self, call_id: str) -> bool:
        return super().has_call(call_id) or self._settled(call_id) is not None

    def add_call(self, name: str, call_id: str | None, arguments: Any) -> bool:
        if call_id is not None and self._settled(call_id) is not None:
            return False
        return super().add_call(name, call_id, arguments)

    def set_arguments(self, call_id: str, arguments: Any) -> None:
        if self._settled(call_id) is not None:
            raise _Changed(call_id)
        super().set_arguments(call_id, arguments)

    def add_result(self, call_id: str, result: Any, success: bool = True) -> None:
        if call_id in self._answered:
            return
        m = self._settled(call_id)
        if m is not None:
            if m in self.gone_open:
                raise _Changed(call_id)
            return  # settled with its first result, which a full read keeps too
        super().add_result(call_id, result, success)

    def mark_failed(self, call_id: str) -> None:
        m = self._settled(call_id)
        if m is not None:
            if m not in self.gone_open and m not in self.gone_failed:
                raise _Changed(call_id)  # its result was settled as a success
            return  # settled as failed already, or without a result (which would change)
        super().mark_failed(call_id)

    def _complete(self, segment: Segment) -> bool:
        return all(item.call_id is None or item.call_id in self._answered
                   for item in segment.items if isinstance(item, ToolCall))

    def settle(self, keep: int = 1, force_after: int | None = None) -> list[Event]:
        """Hand out the events of the leading segments that may be settled (all but the
        last ``keep``; each complete, or followed by ``force_after`` segments, by default
        `FORCE_AFTER`) and forget them but for their ids' digests."""
        i = self._settleable(keep, FORCE_AFTER if force_after is None else force_after)
        if i == 0:
            return []
        done, rest = self._segments[:i], self._segments[i:]
        self._segments = rest
        events = self._events_of(done)
        settled_ids = self._forget(done)
        # what stays is rebuilt from the open part (cheaper than removing the settled)
        self._home = {item.call_id: segment for segment in rest for item in segment.items
                      if isinstance(item, ToolCall) and item.call_id is not None}
        self._answered = {item.call_id for segment in rest for item in segment.items
                          if isinstance(item, ToolResult)} | set(self._pending)
        if self._failed:
            done_ids = set(settled_ids)
            self._failed = {f for f in self._failed if f not in done_ids}
        return events

    def _settleable(self, keep: int, force_after: int) -> int:
        """How many leading segments `settle` may hand out."""
        segments = self._segments
        limit = len(segments) - keep
        i = 0
        while i < limit and (self._complete(segments[i]) or len(segments) - 1 - i >= force_after):
            i += 1
        return i

    def _forget(self, done: list[Segment]) -> list[str]:
        """Keep the digests of the settled segments' ids (`gone`, `gone_open`,
        `gone_failed`); the ids of their calls, in order."""
        answered, failed = self._answered, self._failed
        gone, gone_open, gone_failed = [], [], []
        settled_ids = []
        for segment in done:
            for item in segment.items:
                cid = item.call_id
                if cid is None:
                    continue
                if isinstance(item, ToolResult):
                    if not item.success or cid in failed:
                        gone_failed.append(mark(cid))
                    continue
                m = mark(cid)
                gone.append(m)
                settled_ids.append(cid)
                if cid not in answered:
                    gone_open.append(m)
        self.gone.extend(gone)
        self.gone_open.extend(gone_open)
        self.gone_failed.extend(gone_failed)
        return settled_ids

    def open_events(self) -> list[Event]:
        """The events of the segments not settled."""
        return self._events_of(self._segments)

    def state(self) -> BuilderState:
        """What to save to resume (after `settle`)."""
        return BuilderState(self._segments, self._open is not None, list(self._pending.values()),
                            sorted(self._answered), sorted(self._failed), self.calls,
                            self.gone, self.gone_open, self.gone_failed)


class Resumable(Protocol):
    """One reader's resumable conversion of a session log (see the module docstring)."""

    #: whether a line needed lenient JSON reading
    lenient: bool

    def feed(self, number: int, raw: bytes) -> None:
        """Convert one complete line (numbered from 1 as in the file; with or without its
        newline). Raises `_Changed`,
        or `TrajectoryFormatError` for a line a full read rejects."""

    def settle(self) -> list[Event]:
        """The events settled by the lines fed since the last call, in order."""

    def open_events(self) -> list[Event]:
        """After `settle`: the events of the open part (the rest of a full read)."""

    def settled_any(self, call_id: str | None) -> bool:
        """Whether a call (by id; None: any call still without a result) may be in the
        settled part (the hook then reads the whole log to find it)."""

    def save(self) -> bytes:
        """The state to resume from (after `settle`, before `open_events`)."""


#: reader name -> (source name, saved state or None) -> its resumable conversion
RESUMABLE: Final[dict[str, str]] = {"codex": "codex", "gemini-cli": "_gemini_cli_resume",
                                    "copilot-cli": "copilot_cli", "pi": "pi",
                                    "cline": "cline", "qwen-code": "qwen_code"}


def resume(reader: str, source: str, state: bytes | None) -> Resumable:
    """The resumable conversion of ``reader`` (a name in `RESUMABLE`), from ``state``
    (None: from the log's start). `_StateError` when the state does not decode.

    >>> r = resume("codex", "log.jsonl", None)
    >>> r.feed(1, b'{"type": "response_item", "payload": {"type": "function_call", '
    ...        b'"name": "sh", "call_id": "c1", "arguments": "{}"}}\\n')
    >>> r.settle(), [e.type for e in r.open_events()]
    ([], ['turn_start', 'tool_call', 'turn_end'])
    """
    import importlib

    module = importlib.import_module(f"{__package__}.{RESUMABLE[reader]}")
    make: Callable[[str, bytes | None], Resumable] = module.Resume
    try:
        return make(source, state)
    except (msgspec.DecodeError, msgspec.ValidationError, KeyError, TypeError, ValueError,
            IndexError, RecursionError) as exc:
        raise _StateError(f"saved {reader} reader state does not decode: {exc}") from None


def line_record(number: int, raw: bytes, source: str) -> tuple[dict[str, Any], bool] | None:
    """The record of complete line ``number`` (with or without its newline) as a full
    read sees it (a BOM dropped from the first line; None for a blank line)."""
    if number == 1:
        raw = strip_bom(raw)
    if not raw or raw.isspace():
        return None
    return decode_record(raw, source, number)


def encode(value: Any) -> bytes:
    """MessagePack of a state (`_StateError` when a value in it cannot be encoded)."""
    try:
        return encode_state(value, "reader")
    except (TypeError, OverflowError, ValueError) as exc:
        raise _StateError(f"state cannot be saved: {exc}") from None
