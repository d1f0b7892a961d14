"""GitHub Copilot CLI session events (``~/.copilot/session-state/<id>/events.jsonl``).

Every line is ``{type, data, id, timestamp, parentId}``; one file is one session, read
line by line.

What marks a model response: one ``assistant.message`` is one model response; its
``toolRequests[]`` are the calls it asked for. ``assistant.turn_start`` /
``assistant.turn_end`` bracket the turn; when a second message with new tool requests
arrives inside one bracket (the agent looped without new turn markers), it opens a new
turn, and so does a call started after every call of the open turn was answered (the
model must have responded again); so each response's calls form their own turn.

Read as follows: a call is announced twice (``toolRequests`` in the message, then
``tool.execution_start``) and counted once, by ``toolCallId``; its arguments are those the
model asked for (``toolRequests[].arguments``, decoded when a JSON string), else those of
``tool.execution_start``. The result is ``tool.execution_complete.data.result.content``
(else ``detailedContent``, else the error message) without what Copilot CLI added
(`._agent_chrome`): a hook's guidance appended to it, and the shell's id in the
``<shellId: N completed with exit code E>`` line that closes a shell result (a new id for
every command); ``success: false`` or an ``error`` marks a failed call. Calls made
inside a subagent (``parentToolCallId``) form their own
trajectory, named ``file#subagent:<parentToolCallId>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, cast

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Event, Trajectory
from . import Item, Reader, Source
from ._agent_chrome import copilot_cli_content, copilot_cli_result
from ._json import CutLastLineError, first_json_char, strip_bom
from ._marks import decode_state
from ._resume import BuilderState, ResumableBuilder, encode, line_record
from ._toolevents import EventBuilder, content_text, decode_arguments, iter_records

__all__ = ["READER", "Resume"]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _result(data: dict[str, Any]) -> tuple[Any, bool]:
    result = data.get("result")
    error = data.get("error")
    ok = data.get("success") is not False and not error
    value: Any = None
    if isinstance(result, dict):
        value = copilot_cli_content(result.get("content"), result.get("detailedContent"))
        if value is None:
            value = result.get("detailedContent")
    elif result is not None:
        value = result
    if value is None and error:
        value = error.get("message", error) if isinstance(error, dict) else error
    return copilot_cli_result(content_text(value)), ok


class _Session:
    def __init__(self, make: type[EventBuilder] = EventBuilder) -> None:
        self.make = make
        self.runs: dict[str | None, EventBuilder] = {None: make()}
        # call id -> the run it belongs to (resumed: the calls not settled yet)
        self.owner: dict[str, str | None] = {}
        self.session: str | None = None
        self.turn_id: str | None = None

    def _run(self, data: dict[str, Any]) -> tuple[str | None, EventBuilder]:
        parent = _text(data.get("parentToolCallId"))
        builder = self.runs.get(parent)
        if builder is None:
            builder = self.runs[parent] = self.make()
        return parent, builder

    def _owner(self, call_id: str) -> tuple[bool, str | None]:
        """(whether the call was seen, the run it belongs to)."""
        if call_id in self.owner:
            return True, self.owner[call_id]
        if self.make is not EventBuilder:  # resumed: a settled call is still known
            for parent, b in self.runs.items():
                if isinstance(b, ResumableBuilder) and b.settled_any(call_id):
                    return True, parent
        return False, None

    def record(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        data = rec.get("data")
        if not isinstance(data, dict):
            return
        if kind == "session.start":
            self.session = self.session or _text(data.get("sessionId"))
        elif kind == "assistant.turn_start":
            self.turn_id = _text(data.get("turnId"))
            self._run(data)[1].start_turn(self.turn_id)
        elif kind == "assistant.turn_end":
            self._run(data)[1].end_turn()
            self.turn_id = None
        elif kind == "assistant.message":
            self._message(data)
        elif kind == "tool.execution_start":
            call_id = _text(data.get("toolCallId"))
            name = data.get("toolName")
            if call_id is None or not isinstance(name, str) or self._owner(call_id)[0]:
                return
            parent, b = self._run(data)
            # A new call after every call of the turn was answered: the model responded again.
            if not b.in_turn or b.turn_answered:
                b.start_turn(self.turn_id)
            b.add_call(name, call_id, decode_arguments(data.get("arguments")))
            self.owner[call_id] = parent
        elif kind == "tool.execution_complete":
            call_id = _text(data.get("toolCallId"))
            if call_id is None:
                return
            known, owner = self._owner(call_id)
            if not known:
                owner = _text(data.get("parentToolCallId"))
            b = self.runs.get(owner) or self.runs[None]
            b.add_result(call_id, *_result(data))

    def _message(self, data: dict[str, Any]) -> None:
        requests = data.get("toolRequests")
        if not isinstance(requests, list):
            return
        parent, b = self._run(data)
        fresh = [r for r in requests if isinstance(r, dict)
                 and _text(r.get("toolCallId")) is not None and isinstance(r.get("name"), str)]
        known = {r["toolCallId"] for r in fresh if self._owner(r["toolCallId"])[0]}
        new = [r for r in fresh if r["toolCallId"] not in known]
        for r in fresh:
            if r["toolCallId"] in known and "arguments" in r:
                # announced by tool.execution_start first: keep what the model asked for
                b.set_arguments(r["toolCallId"], decode_arguments(r["arguments"]))
        if not new:
            return
        if not b.in_turn or b.turn_has_calls:
            b.start_turn(_text(data.get("messageId")) or self.turn_id)
        for r in new:
            b.add_call(r["name"], r["toolCallId"], decode_arguments(r.get("arguments")))
            self.owner[r["toolCallId"]] = parent


def _read(source: Source) -> Iterator[Item]:
    session = _Session()
    lenient = False
    try:
        for _, rec, loose in iter_records(source):
            lenient = lenient or loose
            session.record(rec)
    except CutLastLineError as err:
        yield err  # a crashed or live session: the complete lines before it are graded
    except TrajectoryFormatError as err:
        yield err
        return
    meta = {"session_id": session.session} if session.session else {}
    for parent, builder in session.runs.items():
        name = source.name if parent is None else f"{source.name}#subagent:{parent}"
        sub_meta = meta if parent is None else {**meta, "parent_tool_call_id": parent}
        yield Trajectory(events=builder.events(), source=name, format="copilot-cli",
                         lenient=lenient, metadata=sub_meta)


class _State(msgspec.Struct, array_like=True):
    runs: list[tuple[str | None, BuilderState]]
    owner: dict[str, str | None]
    session: str | None
    turn_id: str | None
    lenient: bool


class Resume:
    """The session's conversion resumed from a saved state (see `._resume`): the same
    records as `_read`, a line at a time; the events are the main run's (a subagent's run
    is settled the same way, its events are not handed out)."""

    def __init__(self, source: str, state: bytes | None) -> None:
        self.source = source
        self.lenient = False
        self.s = _Session(ResumableBuilder)
        if state is None:
            return
        st = decode_state(state, _State)
        self.s.runs = {parent: ResumableBuilder(b) for parent, b in st.runs}
        if None not in self.s.runs:
            raise KeyError("main run")
        if any(p not in self.s.runs for p in st.owner.values()):
            raise KeyError("owner")
        self.s.owner, self.s.session, self.s.turn_id = st.owner, st.session, st.turn_id
        self.lenient = st.lenient

    def _main(self) -> ResumableBuilder:
        b = self.s.runs[None]
        assert isinstance(b, ResumableBuilder)
        return b

    def feed(self, number: int, raw: bytes) -> None:
        found = line_record(number, raw, self.source)
        if found is not None:
            self.lenient = self.lenient or found[1]
            self.s.record(found[0])

    def settle(self) -> list[Event]:
        settled: list[Event] = []
        for parent, b in self.s.runs.items():
            assert isinstance(b, ResumableBuilder)
            events = b.settle()
            if parent is None:
                settled = events
        runs = self.s.runs
        self.s.owner = {c: p for c, p in self.s.owner.items()
                        if cast(ResumableBuilder, runs[p]).has_open(c)}
        return settled

    def open_events(self) -> list[Event]:
        return self._main().open_events()

    def settled_any(self, call_id: str | None) -> bool:
        return self._main().settled_any(call_id)

    def save(self) -> bytes:
        runs = []
        for parent, b in self.s.runs.items():
            assert isinstance(b, ResumableBuilder)
            runs.append((parent, b.state()))
        return encode(_State(runs, self.s.owner, self.s.session, self.s.turn_id,
                             self.lenient))


_KIND = re.compile(
    rb'"type"\s*:\s*"(session\.(start|resume|info|model_change|error)|user\.message|'
    rb'assistant\.(turn_start|message)|tool\.execution_(start|complete))"'
)


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    return 90 if _KIND.search(strip_bom(head)[:4096]) else 0


READER = Reader(
    name="copilot-cli",
    description="GitHub Copilot CLI session events.jsonl (assistant.turn_start/turn_end, "
    "tool.execution_start/complete)",
    extensions=(".jsonl",),
    markers=(b'"session.', b'"user.message"', b'"assistant.', b'"tool.execution_'),
    top=90,
    order=70,
    sniff=_sniff,
    read=_read,
)
