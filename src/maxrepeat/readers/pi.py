"""Pi coding agent session logs (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``).

Pi (npm ``@mariozechner/pi-coding-agent``) appends one JSON object per line: a header
``{"type": "session", "version": 3, "id", "cwd", ...}``, then entries with ``id`` /
``parentId`` (``message``, ``model_change``, ``thinking_level_change``, ``compaction``,
``custom``, ...). A ``message`` entry holds one agent message (``message.role``):

* ``assistant``: one model response; its ``content`` blocks of ``type: "toolCall"``
  (``id``, ``name``, ``arguments`` as an object) are the calls it made, in parallel when
  there are several. Each response with calls is one turn (one step);
* ``toolResult``: the result of call ``toolCallId``: ``content`` (text blocks, joined as
  the model reads them), ``isError`` marks a failed call (a command's non-zero exit, a
  tool error, a call an extension refused: Pi records the refusal's reason as the error).

What is taken off a result: the maxrepeat guard's words. When the guard adds a warning to
a result or replaces it (``maxrepeat hook pi``), its Pi extension keeps the tool's own
result in the result's ``details.maxrepeatGuard`` (``content``, ``isError``), which this
reader uses, so the log grades as the tool answered. The bash tool's notice on a cut
output names a temporary file new at every call (``Full output: /tmp/pi-bash-….log``,
also ``details.fullOutputPath``): that path is dropped.

Every entry is read in file order: Pi writes the entries of a session branch it starts
(``/tree``, ``/fork`` in the same file) after the others, and they are read as
following them. Every other entry and message role (user, bash executions the user ran,
custom messages, summaries) is not a tool call and is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from . import Item, Reader, Source
from ._json import first_json_char, strip_bom
from ._sessionlog import SessionConverter, SessionResume, read_log
from ._toolevents import EventBuilder, content_text

__all__ = ["READER", "Resume", "GUARD_KEY", "tool_result"]

#: the key of ``details`` under which the guard's extension keeps the tool's own result
GUARD_KEY = "maxrepeatGuard"


def tool_result(content: Any, is_error: Any, details: Any) -> tuple[Any, bool]:
    """A Pi tool result as graded: (the text the tool returned, whether it succeeded).

    >>> tool_result([{"type": "text", "text": "hi"}], False, None)
    ('hi', True)
    >>> tool_result([{"type": "text", "text": "x"}], True,
    ...             {"maxrepeatGuard": {"content": [{"type": "text", "text": "hi"}],
    ...                                 "isError": False}})
    ('hi', True)
    >>> tool_result([{"type": "text", "text": "a\\n\\n[Showing lines 1-2 of 9. Full output: "
    ...              "/tmp/pi-bash-1.log]"}], False, {"fullOutputPath": "/tmp/pi-bash-1.log"})
    ('a\\n\\n[Showing lines 1-2 of 9.]', True)
    """
    if isinstance(details, dict):
        own = details.get(GUARD_KEY)
        if isinstance(own, dict) and "content" in own:
            content, is_error = own.get("content"), own.get("isError")
            details = own.get("details")
    text = content_text(content)
    path = details.get("fullOutputPath") if isinstance(details, dict) else None
    if isinstance(text, str) and isinstance(path, str) and path:
        text = text.replace(f" Full output: {path}]", "]")
    return text, is_error is not True


class _Session(SessionConverter):
    """The conversion of one log, a record at a time."""

    def record(self, number: int, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind == "session":
            sid = rec.get("id")
            self.session = self.session or (sid if isinstance(sid, str) else None)
            return
        message = rec.get("message")
        if kind != "message" or not isinstance(message, dict):
            return
        role = message.get("role")
        if role == "assistant":
            self._response(message, rec.get("id"))
        elif role == "toolResult":
            cid = message.get("toolCallId")
            if isinstance(cid, str) and cid:
                self.b.add_result(cid, *tool_result(
                    message.get("content"), message.get("isError"), message.get("details")))

    def _response(self, message: dict[str, Any], entry: Any) -> None:
        content = message.get("content")
        calls = [c for c in content if isinstance(c, dict) and c.get("type") == "toolCall"
                 and isinstance(c.get("name"), str)] if isinstance(content, list) else []
        if not calls:
            return
        self.b.start_turn(entry if isinstance(entry, str) else None)
        for c in calls:
            cid = c.get("id")
            self.b.add_call(c["name"], cid if isinstance(cid, str) and cid else None,
                            c.get("arguments"))
        self.b.end_turn()


def _read(source: Source) -> Iterator[Item]:
    return read_log(source, "pi", _Session(EventBuilder()))


class Resume(SessionResume):
    """The log's conversion resumed from a saved state (see `._resume`): the same records
    as `_read`, a line at a time (for ``maxrepeat hook pi``)."""

    convert = _Session


_HEADER = re.compile(rb'"type"\s*:\s*"session"\s*,\s*"version"\s*:\s*\d')
_ENTRY = re.compile(rb'"role"\s*:\s*"(toolResult|assistant)"')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    head = strip_bom(head)[:4096]
    if _HEADER.search(head):
        return 95
    return 60 if b'"toolCall"' in head and _ENTRY.search(head) else 0


READER = Reader(
    name="pi",
    description="Pi coding agent session .jsonl (a session header, then message entries: "
    "assistant toolCall blocks, toolResult messages)",
    extensions=(".jsonl",),
    markers=(b'"session"', b'"toolCall"'),
    top=95,
    order=110,
    sniff=_sniff,
    read=_read,
)
