"""Cline CLI session logs (``~/.cline/data/sessions/<id>/<id>.messages.json``).

Cline's CLI (npm ``cline`` 3.x, built on ``@cline/core``) keeps each session in a folder
named after its id under its data folder (``$CLINE_DATA_DIR``, else
``$CLINE_DIR/data``, else ``~/.cline/data``): ``<id>.json`` (the manifest: status,
model, ``messages_path``) and ``<id>.messages.json``, one JSON object it rewrites whole
as the session goes::

    {"version": 1, "updated_at", "agent", "sessionId", "origin": {...},
     "messages": [{"id", "role", "content": [...], "ts", ...}, ...]}

* an ``assistant`` message is one model response: its ``tool_use`` blocks (``id``,
  ``name``, ``input``) are the calls it made, in parallel when there are several. Each
  response with calls is one turn (one step);
* a ``user`` message holding ``tool_result`` blocks (``tool_use_id``, ``content``,
  ``is_error``) answers them; Cline writes one such message per call. The content is
  what the tool returned, kept as Cline keeps it (a string, or a list: the shell tool
  ``run_commands`` answers ``[{"query", "result", "error"?, "success"}]``, one entry per
  command); a list of text blocks is read as its text. A result fails when ``is_error``
  is set (a tool that threw, a call Cline skipped) or when an entry says
  ``"success": false`` (a command's non-zero exit);
* every other message (the prompt, Cline's ``[SYSTEM]`` reminders, a hook's
  ``<hook_context>`` block, text answers) is not a tool call and is skipped.

A call cut off by a hook's ``cancel`` (the run ends before it runs) stays without a
result, as in the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import decode, first_json_char, strip_bom
from ._resume import _NotResumable
from ._toolevents import EventBuilder, content_text

__all__ = ["READER", "Resume", "tool_result", "persisted"]


def persisted(output: Any) -> Any:
    """A tool's output as Cline persists it in the log: a string or a list as it is,
    anything else as its JSON text (``JSON.stringify``).

    >>> persisted({"error": "no"})
    '{"error":"no"}'
    >>> persisted([{"query": "x"}])
    [{'query': 'x'}]
    """
    if isinstance(output, (str, list)):
        return output
    import json

    return json.dumps(output, separators=(",", ":"), ensure_ascii=False)


def tool_result(content: Any, is_error: Any) -> tuple[Any, bool]:
    """A logged result as graded: (what the tool returned, whether it succeeded).

    >>> tool_result([{"query": "false", "result": "x", "success": False}], None)[1]
    False
    >>> tool_result([{"type": "text", "text": "hi"}], False)
    ('hi', True)
    """
    failed = is_error is True or (isinstance(content, list) and any(
        isinstance(e, dict) and e.get("success") is False for e in content))
    return content_text(content), not failed


def _message_blocks(message: Any) -> list[Mapping[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _trajectory(doc: Mapping[str, Any], source: str, lenient: bool) -> Trajectory:
    builder = EventBuilder()
    messages = doc["messages"]
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        blocks = _message_blocks(message)
        if role == "assistant":
            calls = [b for b in blocks if b.get("type") == "tool_use"]
            if not calls:
                continue
            mid = message.get("id")
            builder.start_turn(mid if isinstance(mid, str) else f"messages[{i}]")
            for b in calls:
                name, cid = b.get("name"), b.get("id")
                builder.add_call(name if isinstance(name, str) else "",
                                 cid if isinstance(cid, str) else None, b.get("input"))
            builder.end_turn()
        elif role in ("user", "tool"):
            for b in blocks:
                cid = b.get("tool_use_id")
                if b.get("type") == "tool_result" and isinstance(cid, str):
                    builder.add_result(cid, *tool_result(b.get("content"), b.get("is_error")))
    meta: dict[str, Any] = {"agent": "cline"}
    origin = doc.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("version"), str):
        meta["agent_version"] = origin["version"]
    sid = doc.get("sessionId")
    return Trajectory(events=builder.events(), id=sid if isinstance(sid, str) else None,
                      source=source, format="cline", lenient=lenient, metadata=meta)


def _read(source: Source) -> Iterator[Item]:
    try:
        doc, lenient = decode(source.read_bytes(), source.name)
    except TrajectoryFormatError as err:
        yield err
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        yield TrajectoryFormatError(source.name, "a Cline session must be an object with "
                                    "a messages array")
        return
    yield _trajectory(doc, source.name, lenient)


class Resume:
    """The hooks read a Cline log whole at every call: Cline rewrites the file whole,
    so there are no appended lines to resume from (`_NotResumable`)."""

    def __init__(self, source: str, state: bytes | None) -> None:
        raise _NotResumable(f"{source}: a Cline session is rewritten whole")


_UPDATED = re.compile(rb'"updated_at"\s*:')
_SESSION = re.compile(rb'"sessionId"\s*:')
_ORIGIN = re.compile(rb'"(?:origin|messages)"\s*:')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    first = strip_bom(head)[:8192]
    if _UPDATED.search(first) and _SESSION.search(first) and _ORIGIN.search(first):
        return 96
    return 0


READER = Reader(
    name="cline",
    description="Cline CLI 3.x sessions (<id>.messages.json: assistant tool_use, "
    "user tool_result)",
    extensions=(".json",),
    markers=(b'"updated_at"',),
    top=96,
    order=80,
    sniff=_sniff,
    read=_read,
)
