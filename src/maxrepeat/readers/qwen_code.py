"""Qwen Code chat recordings (``~/.qwen/projects/<folder>/chats/<session>.jsonl``).

Qwen Code (npm ``@qwen-code/qwen-code``; recorded with 0.24.4) appends one JSON object
per line, each with ``uuid`` / ``parentUuid``, ``sessionId``, ``timestamp``, ``type``,
``cwd`` and ``version``. ``<folder>`` is the working folder with every character other
than a letter or digit written as ``-`` (``/tmp/proj`` -> ``-tmp-proj``). The records:

* ``type: "assistant"``: one model response, ``message.parts`` in Gemini's form; its
  ``functionCall`` parts (``id``, ``name``, ``args``) are the calls it made, in parallel
  when there are several. Each response with calls is one turn (one step);
* ``type: "tool_result"``: the result of one call: ``message.parts[].functionResponse``
  (``id``, ``name``, ``response``: ``{"output": TEXT}``, or ``{"error": TEXT}`` for a
  failed call) and ``toolCallResult`` (``callId``, ``status``: ``"success"``,
  ``"error"`` or ``"cancelled"``). A call that failed, was refused by a hook or
  cancelled is a failed call; its error text is its result;
* ``user`` prompts and ``system`` records (telemetry, snapshots) are not tool calls and
  are skipped.

What is taken off a result: the loop guard's words (Qwen Code appends a hook's
``additionalContext`` to the result after a blank line, its ``<`` and ``>`` written as
``&lt;`` and ``&gt;``: the guard's text starts with ``maxrepeat loop guard (``, and from
there to the end it goes), and, as for Gemini CLI, whose shell tool Qwen Code's is, a
``run_shell_command`` result's ``Process Group PGID:`` / ``Background PIDs:`` lines
(new process ids on every call; `._agent_chrome.gemini_cli_result`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from . import Item, Reader, Source
from ._agent_chrome import gemini_cli_result
from ._json import first_json_char, strip_bom
from ._sessionlog import SessionConverter, SessionResume, read_log
from ._toolevents import EventBuilder

__all__ = ["READER", "Resume", "GUARD_LEAD", "tool_result"]

#: how every message of the loop guard starts (`maxrepeat.guards.policy.loop_message`)
GUARD_LEAD: Final = "maxrepeat loop guard ("
_GUARD_WORDS: Final = re.compile(r"\n\nmaxrepeat loop guard \((?:warning|blocked|stopped)\): ")


def tool_result(tool: str | None, value: Any) -> Any:
    """A Qwen Code result as graded: without the guard's words appended to it and the
    process ids of a shell result.

    >>> tool_result("read_file", "hi\\n\\nmaxrepeat loop guard (warning): you repeated x")
    'hi'
    >>> tool_result("run_shell_command", "Command: ls\\nOutput: a\\nExit Code: 0\\n"
    ...             "Signal: (none)\\nProcess Group PGID: 77")
    'Command: ls\\nOutput: a\\nExit Code: 0\\nSignal: (none)'
    """
    if isinstance(value, str) and GUARD_LEAD in value:
        found = _GUARD_WORDS.search(value)
        if found is not None:
            value = value[:found.start()]
    return gemini_cli_result(tool, value)


def _response(rec: dict[str, Any]) -> tuple[str, str | None, Any, bool] | None:
    """(call id, tool, result, ok) of a ``tool_result`` record."""
    message = rec.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    for part in parts if isinstance(parts, list) else ():
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(fr, dict) or not isinstance(fr.get("id"), str) or not fr["id"]:
            continue
        name = fr.get("name") if isinstance(fr.get("name"), str) else None
        response = fr.get("response")
        meta = rec.get("toolCallResult")
        status = meta.get("status") if isinstance(meta, dict) else None
        if isinstance(response, dict) and ("output" in response or "error" in response):
            failed = "output" not in response
            value = response.get("error") if failed else response.get("output")
        else:
            failed, value = False, response
        ok = status == "success" if isinstance(status, str) else not failed
        return fr["id"], name, tool_result(name, value), ok
    return None


class _Session(SessionConverter):
    """The conversion of one log, a record at a time."""

    def record(self, number: int, rec: dict[str, Any]) -> None:
        sid = rec.get("sessionId")
        if self.session is None and isinstance(sid, str) and sid:
            self.session = sid
        kind = rec.get("type")
        if kind == "assistant":
            self._calls(rec)
        elif kind == "tool_result":
            found = _response(rec)
            if found is not None:
                cid, _, value, ok = found
                self.b.add_result(cid, value, ok)

    def _calls(self, rec: dict[str, Any]) -> None:
        message = rec.get("message")
        parts = message.get("parts") if isinstance(message, dict) else None
        calls = [p["functionCall"] for p in parts if isinstance(p, dict)
                 and isinstance(p.get("functionCall"), dict)
                 and isinstance(p["functionCall"].get("name"), str)] \
            if isinstance(parts, list) else []
        if not calls:
            return
        uuid = rec.get("uuid")
        self.b.start_turn(uuid if isinstance(uuid, str) else None)
        for c in calls:
            cid = c.get("id")
            self.b.add_call(c["name"], cid if isinstance(cid, str) and cid else None,
                            c.get("args"))
        self.b.end_turn()


def _read(source: Source) -> Iterator[Item]:
    return read_log(source, "qwen-code", _Session(EventBuilder()))


class Resume(SessionResume):
    """The log's conversion resumed from a saved state (see `._resume`): the same records
    as `_read`, a line at a time (for ``maxrepeat hook qwen-code``)."""

    convert = _Session


_RECORD: Final = re.compile(rb'"type"\s*:\s*"(?:user|assistant|tool_result|system)"')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    head = strip_bom(head)[:4096]
    if b'"parts"' not in head or b'"sessionId"' not in head or not _RECORD.search(head):
        return 0
    return 95 if b'"parentUuid"' in head else 60


READER = Reader(
    name="qwen-code",
    description="Qwen Code chat recording .jsonl (~/.qwen/projects/<folder>/chats/: "
    "assistant functionCall parts, tool_result functionResponse records)",
    extensions=(".jsonl",),
    markers=(b'"parts"',),
    top=95,
    order=120,
    sniff=_sniff,
    read=_read,
)
