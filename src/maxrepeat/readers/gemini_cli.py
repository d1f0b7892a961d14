"""Gemini CLI chat sessions (``~/.gemini/tmp/<project>/chats/session-*.json[l]``).

Two layouts, one session (one trajectory) per file:

- legacy single JSON: ``{sessionId, projectHash, startTime, lastUpdated, messages[]}``;
- JSONL (Gemini CLI >= 0.40): a first metadata line ``{sessionId, projectHash, ...}``,
  then message records (each with an ``id``), ``{"$set": {...}}`` metadata updates and
  ``{"$rewindTo": "<message id>"}`` (that message and everything after it are dropped).
  A message id written again replaces the earlier record in place: the last write wins
  (Gemini CLI re-appends a message as its tool calls finish). Read line by line; only the
  tool calls of each message are kept in memory.

What marks a model response: one ``type: "gemini"`` message is one model turn; its
``toolCalls[]`` (parallel calls) and their results form one turn, whose id is the
message id.

Read as follows: calls ``toolCalls[].name`` / ``id`` / ``args`` (decoded when a JSON
string); result the ``functionResponse.response.output`` (or ``.error``) of
``toolCalls[].result[]`` (several parts: the list of their values; text parts: their
text), else ``resultDisplay``; without what Gemini CLI appends (`._agent_chrome`): a
hook's ``<hook_context>``, and a ``run_shell_command`` result's ``Background PIDs:`` and
``Process Group PGID:`` lines (new process ids on every call); error flag ``status``
``"error"`` or ``"cancelled"``, or a response holding ``error``. A call without any
result (cancelled before it ran) has no ``tool_result``.

The JSONL layout's conversion a line at a time, for the hooks, is in
``_gemini_cli_resume.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._agent_chrome import gemini_cli_result
from ._json import (
    CutLastLineError,
    decode,
    first_json_char,
    strip_bom,
)
from ._toolevents import (
    EventBuilder,
    content_text,
    decode_arguments,
    iter_records,
    type_name,
)

__all__ = ["READER", "Call", "message_calls", "add_message"]

MISSING = object()


class Call(msgspec.Struct, frozen=True, array_like=True):
    """One tool call of a model message, with its result when ``answered``."""

    name: str
    call_id: str
    arguments: Any
    result: Any  # None when not ``answered``
    ok: bool
    answered: bool


def _part_value(part: Any) -> tuple[Any, bool]:
    if isinstance(part, dict):
        fr = part.get("functionResponse")
        if isinstance(fr, dict):
            response = fr.get("response")
            if isinstance(response, dict):
                if "error" in response and "output" not in response:
                    return content_text(response["error"]), False
                if "output" in response:
                    return content_text(response["output"]), True
            return response, True
        text = part.get("text")
        if isinstance(text, str):
            return text, True
    return part, True


def _result(call: dict[str, Any]) -> tuple[Any, bool]:
    parts = call.get("result")
    if isinstance(parts, list) and parts:
        values = [_part_value(p) for p in parts]
        ok = all(v[1] for v in values)
        if len(values) == 1:
            return values[0][0], ok
        if all(isinstance(v[0], str) for v in values):
            return "\n".join(v[0] for v in values), ok
        return [v[0] for v in values], ok
    if parts is not None and not isinstance(parts, list):
        return content_text(parts), True
    display = call.get("resultDisplay")
    if isinstance(display, str):
        return display, True
    return MISSING, True


def message_calls(message: dict[str, Any], where: str, source: str
                  ) -> tuple[Call, ...] | None:
    """The tool calls of one message (None for a message that is not a model turn)."""
    if message.get("type") != "gemini":
        return None
    raw = message.get("toolCalls")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise TrajectoryFormatError(source, f"{where}.toolCalls must be an array "
                                    f"(got {type_name(raw)})")
    out = []
    for j, call in enumerate(raw):
        if not isinstance(call, dict):
            raise TrajectoryFormatError(source, f"{where}.toolCalls[{j}] must be an object "
                                        f"(got {type_name(call)})")
        name = call.get("name")
        if not isinstance(name, str):
            raise TrajectoryFormatError(source, f"{where}.toolCalls[{j}].name must be a "
                                        f"string (got {type_name(name)})")
        call_id = call.get("id")
        if not isinstance(call_id, str):
            call_id = f"{message.get('id', where)}#{j}"
        value, ok = _result(call)
        value = gemini_cli_result(name, value)
        if call.get("status") in ("error", "cancelled"):
            ok = False
        answered = value is not MISSING
        out.append(Call(name, call_id, decode_arguments(call.get("args")),
                         value if answered else None, ok, answered))
    return tuple(out)


def _trajectory(messages: Iterator[tuple[str | None, tuple[Call, ...] | None]],
                source: str, meta: dict[str, Any], lenient: bool) -> Trajectory:
    b = EventBuilder()
    for msg_id, calls in messages:
        add_message(b, msg_id, calls)
    return Trajectory(events=b.events(), source=source, format="gemini-cli",
                      lenient=lenient, metadata=meta)


def add_message(b: EventBuilder, msg_id: str | None, calls: tuple[Call, ...] | None) -> None:
    """The turn of one model message (none for a message without calls)."""
    if not calls:
        return
    b.start_turn(msg_id)
    for call in calls:
        b.add_call(call.name, call.call_id, call.arguments)
        if call.answered:
            b.add_result(call.call_id, call.result, call.ok)
    b.end_turn()


def _meta(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("sessionId", "kind") if isinstance(record.get(k), str)}


def _read_json(source: Source) -> Iterator[Item]:
    try:
        doc, lenient = decode(source.read_bytes(), source.name)
    except TrajectoryFormatError as err:
        yield err
        return
    if not isinstance(doc, dict):
        yield TrajectoryFormatError(source.name, f"a Gemini CLI session must be an object "
                                    f"(got {type_name(doc)})")
        return
    messages = doc.get("messages")
    if messages is None and "sessionId" in doc:
        messages = []  # a JSONL session that has only its metadata line so far
    if not isinstance(messages, list):
        yield TrajectoryFormatError(source.name, f"messages must be an array "
                                    f"(got {type_name(messages)})")
        return
    try:
        parsed = [
            (m.get("id") if isinstance(m.get("id"), str) else None,
             message_calls(m, f"messages[{i}]", source.name))
            for i, m in enumerate(messages) if isinstance(m, dict)
        ]
    except TrajectoryFormatError as err:
        yield err
        return
    yield _trajectory(iter(parsed), source.name, _meta(doc), lenient)


def _read_jsonl(source: Source) -> Iterator[Item]:
    # message id -> its calls; dict order is the order messages were first written
    messages: dict[str, tuple[Call, ...] | None] = {}
    meta: dict[str, Any] = {}
    lenient = False
    try:
        for n, rec, loose in iter_records(source):
            lenient = lenient or loose
            if "$rewindTo" in rec:
                target = rec["$rewindTo"]
                if isinstance(target, str) and target in messages:
                    keys = list(messages)
                    for key in keys[keys.index(target):]:
                        del messages[key]
            elif "$set" in rec:
                if isinstance(rec["$set"], dict):
                    meta.update(_meta(rec["$set"]))
            elif isinstance(rec.get("id"), str) and "type" in rec:
                messages[rec["id"]] = message_calls(rec, f"line {n}", source.name)
            elif not messages and "sessionId" in rec:
                meta.update(_meta(rec))
    except CutLastLineError as err:
        yield err  # a crashed or live session: the complete lines before it are graded
    except TrajectoryFormatError as err:
        yield err
        return
    yield _trajectory(iter(messages.items()), source.name, meta, lenient)


def _read(source: Source) -> Iterator[Item]:
    if source.is_jsonl():
        yield from _read_jsonl(source)
    else:
        yield from _read_json(source)


_SESSION = re.compile(rb'"sessionId"\s*:')
_PROJECT = re.compile(rb'"projectHash"\s*:')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    first = strip_bom(head)[:8192]
    if _SESSION.search(first) and _PROJECT.search(first):
        return 85
    return 0


READER = Reader(
    name="gemini-cli",
    description="Gemini CLI chat sessions: legacy single JSON and the JSONL of >= 0.40 "
    "(last write of a message wins, $rewindTo)",
    extensions=(".json", ".jsonl"),
    markers=(b'"projectHash"',),
    top=85,
    order=60,
    sniff=_sniff,
    read=_read,
)
