"""The Gemini CLI JSONL session's conversion resumed from a saved state (see `._resume`),
for the hooks: the same records as the full read of `.gemini_cli`, a line at a time.
"""

from __future__ import annotations

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Event, Trajectory
from . import Source
from ._json import strip_bom
from ._marks import Marks, decode_state, mark
from ._resume import (
    BuilderState,
    ResumableBuilder,
    _Changed,
    _NotResumable,
    encode,
    line_record,
)
from .gemini_cli import READER, Call, add_message, message_calls

__all__ = ["Resume", "KEEP"]

#: Messages kept open (Gemini CLI rewrites the latest message as its calls finish).
KEEP = 2


class _Message(msgspec.Struct, array_like=True):
    id: str
    calls: tuple[Call, ...] | None


class _State(msgspec.Struct, array_like=True):
    builder: BuilderState
    messages: list[_Message]
    gone_ids: Marks
    first: bytes | None
    first_number: int
    jsonl: bool
    lenient: bool


class Resume:
    """The JSONL session's conversion resumed from a saved state (see `._resume`): the
    same records as `.gemini_cli`'s JSONL read, a line at a time. The last `KEEP`
    messages stay open (and the turns of earlier ones until they settle); a rewrite of an
    earlier message, or a rewind to one, raises `_Changed` (Gemini CLI rewrites its
    latest message only). A legacy single-JSON session raises `_NotResumable`."""

    def __init__(self, source: str, state: bytes | None) -> None:
        self.source = source
        self.lenient = False
        self.messages: dict[str, tuple[Call, ...] | None] = {}
        self.gone_ids = Marks()
        self.first: bytes | None = None  # the first line, while the layout is undecided
        self.first_number = 0
        self.jsonl = False
        self.open: list[Event] = []
        if state is None:
            self.b = ResumableBuilder()
            return
        st = decode_state(state, _State)
        self.b = ResumableBuilder(st.builder)
        self.messages = {m.id: m.calls for m in st.messages}
        self.gone_ids = st.gone_ids
        self.first, self.first_number, self.jsonl = st.first, st.first_number, st.jsonl
        self.lenient = st.lenient

    def feed(self, number: int, raw: bytes) -> None:
        if self.jsonl:
            self._line(number, raw)
            return
        line = strip_bom(raw) if number == 1 else raw
        if not line or line.isspace():
            return
        if self.first is None:
            self.first = raw if raw.endswith(b"\n") else raw + b"\n"
            self.first_number = number
            return
        # the layout is decided by the first two lines, as a full read decides it
        if not Source.from_bytes(strip_bom(self.first) + line).is_jsonl():
            raise _NotResumable(self.source)
        self.jsonl = True
        first, self.first = self.first, None
        self._line(self.first_number, first)
        self._line(number, raw)

    def _line(self, number: int, raw: bytes) -> None:
        found = line_record(number, raw, self.source)
        if found is None:
            return
        rec, loose = found
        self.lenient = self.lenient or loose
        messages = self.messages
        if "$rewindTo" in rec:
            target = rec["$rewindTo"]
            if isinstance(target, str):
                if target in messages:
                    keys = list(messages)
                    for key in keys[keys.index(target):]:
                        del messages[key]
                elif self.gone_ids.data and mark(target) in self.gone_ids:
                    raise _Changed(target)
        elif "$set" in rec:
            pass
        elif isinstance(rec.get("id"), str) and "type" in rec:
            msg_id = rec["id"]
            calls = message_calls(rec, f"line {number}", self.source)
            if msg_id not in messages and self.gone_ids.data and mark(msg_id) in self.gone_ids:
                raise _Changed(msg_id)  # a settled message written again
            messages[msg_id] = calls

    def settle(self) -> list[Event]:
        if not self.jsonl:
            if self.first is not None:  # one line so far: read as a full read reads it
                error: object = "no trajectory"
                for item in READER.read(Source.from_bytes(self.first, self.source)):
                    if isinstance(item, Trajectory):
                        self.open = list(item.events)
                        break
                    error = item
                else:
                    raise TrajectoryFormatError(self.source, str(error))
            return []
        keys = list(self.messages)
        for msg_id in keys[:max(0, len(keys) - KEEP)]:
            calls = self.messages.pop(msg_id)
            add_message(self.b, msg_id, calls)
            self.gone_ids.add(mark(msg_id))
        return self.b.settle(keep=0)

    def open_events(self) -> list[Event]:
        if not self.jsonl:
            return self.open
        for msg_id, calls in self.messages.items():
            add_message(self.b, msg_id, calls)
        return self.b.open_events()

    def settled_any(self, call_id: str | None) -> bool:
        return False  # the current call is never in the log when the hook runs

    def save(self) -> bytes:
        messages = [_Message(k, v) for k, v in self.messages.items()]
        return encode(_State(self.b.state(), messages, self.gone_ids,
                             self.first, self.first_number, self.jsonl, self.lenient))
