"""OpenAI Codex CLI rollout JSONL (``~/.codex/sessions/.../rollout-*.jsonl``).

Every line is ``{timestamp, type, payload}``. A rollout is one session: the file is one
trajectory (later ``session_meta`` lines come from forks and resumes, whose repeated
history is dropped by call id), read line by line.

What marks a model response: Codex does not write one record per API response, so the
reader follows the Responses-API item stream. The model's output items (``reasoning``,
assistant ``message``, ``function_call``, ``custom_tool_call``, ``local_shell_call``)
that follow each other form one response; the next input item (a ``*_output`` item, a
user or developer message, a ``compacted`` record) or a task boundary (``event_msg``
``task_started`` / ``task_complete`` / ``turn_aborted``) ends it. So one response, with
its parallel calls, is one turn, and a task of many responses is many turns (turn ids
``<task turn_id>/<n>``).

Read as follows:

- calls: ``response_item`` items ``function_call`` (``arguments``, a JSON string, decoded
  when it parses), ``custom_tool_call`` (``input``, decoded the same way; raw text such as
  a patch stays text) and ``local_shell_call`` (tool ``local_shell``, arguments its
  ``action``); ids from ``call_id``. Calls are counted from ``response_item`` only (the
  ``event_msg`` begin/end records repeat them), once per ``call_id``;
- results: ``*_output`` items by ``call_id``; a string output is kept as written, content
  item lists become their text, except that the ``Chunk ID:``, ``Wall time:`` and
  ``Original token count:`` lines Codex puts before an ``exec_command`` output are dropped
  (the first two differ on every run of the same command, so no repeat could ever be
  seen by observation; the estimate is made from the output, and the hook input, from
  which the live guard takes the current call's output, does not carry it): what stays
  is ``Process exited with code N`` and the output (`exec_output`), or for a command
  still running ``Process running`` (without the session id it names, new every run);
- error flag (the output item has none): ``exec_command_end`` with ``exit_code`` other
  than 0, ``patch_apply_end`` with ``success: false``, ``mcp_tool_call_end`` with
  ``Err`` or ``isError: true``, an output whose text starts ``Exit code: N`` (N not 0) or
  that is ``{"output", "metadata": {"exit_code"}}`` JSON with a non-zero code, and an
  output ``success: false``, an ``exec_command`` output whose header says ``Process exited
  with code N`` (N not 0);
- ``compacted.replacement_history`` (a copy of earlier items) is ignored.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Iterator
from typing import Any

import msgspec

from . import Item, Reader, Source
from ._json import JSON_DECODER, first_json_char, strip_bom
from ._marks import decode_state
from ._resume import BuilderState, ResumableBuilder, encode
from ._sessionlog import LineResume, read_log
from ._toolevents import EventBuilder, content_text, decode_arguments

__all__ = ["READER", "Resume", "exec_output"]

_MODEL_OUTPUT = frozenset({"reasoning", "web_search_call", "image_generation_call",
                           "tool_search_call"})
_EXIT_LINE = re.compile(r"^Exit code: (-?\d+)")
#: the header lines Codex puts before an exec_command output that say nothing of what the
#: command did: a fresh chunk id and the wall time change on every run of the same
#: command, and Codex's token estimate of the output is computed from the output shown
#: below it (the hook input does not carry it); they are dropped from the observation
_EXEC_CHROME = ("Chunk ID: ", "Wall time: ", "Original token count: ")
#: the header line of a command still running when the call returned: its session id is
#: new on every run (the model polls it with ``write_stdin``); the observation keeps
#: ``Process running`` without it
_EXEC_RUNNING = re.compile(r"Process running with session ID \d+")
_EXEC_EXIT = re.compile(r"^Process exited with code (-?\d+)$", re.M)
_EXEC_OUTPUT = "\nOutput:\n"


def exec_output(exit_code: int, output: str) -> str:
    """The observation of an ``exec_command`` call that ended with ``exit_code`` after
    printing ``output``, as the reader keeps it from the rollout (`_exec_text`). The
    hook guard builds the current call's result with it: Codex's hook input carries the
    output, the rollout's ``item_completed`` record the exit code.

    >>> exec_output(1, "")
    'Process exited with code 1\\nOutput:\\n'
    """
    return f"Process exited with code {exit_code}{_EXEC_OUTPUT}{output}"


def _exec_text(value: str) -> tuple[str, bool]:
    """An ``exec_command`` output (it starts ``Chunk ID:``) without its chrome lines (and
    a running command's session id), and whether its header says it exited with code 0
    (or is still running).

    >>> _exec_text("Chunk ID: db4c25\\nWall time: 0.5010 seconds\\nProcess running with "
    ...            "session ID 60360\\nOriginal token count: 0\\nOutput:\\n")
    ('Process running\\nOutput:\\n', True)
    """
    header, sep, output = value.partition(_EXEC_OUTPUT)  # no output section: all header
    kept = ["Process running" if _EXEC_RUNNING.fullmatch(line) else line
            for line in header.split("\n") if not line.startswith(_EXEC_CHROME)]
    code = _EXEC_EXIT.search(header)
    ok = code is None or int(code.group(1)) == 0
    return "\n".join(kept) + sep + output, ok


def _output(payload: dict[str, Any]) -> tuple[Any, bool]:
    """(the text the model saw, ok) for an output item."""
    out = payload.get("output")
    ok = payload.get("success") is not False
    if isinstance(out, dict) and "content" in out and set(out) <= {"content", "success"}:
        ok = ok and out.get("success") is not False
        out = out["content"]
    value = content_text(out)
    if isinstance(value, str) and value.startswith("Chunk ID: "):
        value, exited_ok = _exec_text(value)
        ok = ok and exited_ok
    elif isinstance(value, str):
        match = _EXIT_LINE.match(value)
        if match and int(match.group(1)) != 0:
            ok = False
        elif value.startswith("{") and '"exit_code"' in value:
            try:
                inner = JSON_DECODER.decode(value)
            except (msgspec.DecodeError, RecursionError):
                inner = None
            meta = inner.get("metadata") if isinstance(inner, dict) else None
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            if isinstance(code, int) and code != 0:
                ok = False
    return value, ok


def _event_failed(payload: dict[str, Any]) -> bool:
    kind = payload.get("type")
    if kind == "exec_command_end":
        code = payload.get("exit_code")
        return isinstance(code, int) and not isinstance(code, bool) and code != 0
    if kind == "patch_apply_end":
        return payload.get("success") is False
    if kind == "mcp_tool_call_end":
        result = payload.get("result")
        if isinstance(result, dict):
            if "Err" in result:
                return True
            ok = result.get("Ok")
            return isinstance(ok, dict) and ok.get("isError") is True
    return False


class _Rollout:
    def __init__(self, builder: EventBuilder | None = None) -> None:
        self.b = builder if builder is not None else EventBuilder()
        self.task: str | None = None
        self.responses = 0
        self.session: str | None = None
        # calls written without a call_id (an older item shape), waiting for their result
        self.unnamed: defaultdict[str, deque[str]] = defaultdict(deque)

    def _ensure_turn(self) -> None:
        if not self.b.in_turn:
            self.responses += 1
            prefix = f"{self.task}/" if self.task else ""
            self.b.start_turn(f"{prefix}{self.responses}")

    def record(self, n: int, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "session_meta":
            if self.session is None and isinstance(payload.get("id"), str):
                self.session = payload["id"]
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "response_item":
            self._item(n, payload)
        elif kind == "compacted":
            self.b.end_turn()

    def _event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind in ("task_started", "task_complete", "turn_aborted"):
            self.b.end_turn()
            if kind == "task_started":
                turn = payload.get("turn_id")
                self.task = turn if isinstance(turn, str) else None
                self.responses = 0
            else:
                self.task = None
        elif _event_failed(payload) and isinstance(payload.get("call_id"), str):
            self.b.mark_failed(payload["call_id"])

    def _item(self, n: int, p: dict[str, Any]) -> None:
        raw_kind = p.get("type")
        kind = raw_kind if isinstance(raw_kind, str) else ""
        call_id = p.get("call_id") if isinstance(p.get("call_id"), str) else None
        if kind in ("function_call", "custom_tool_call", "local_shell_call", "tool_call"):
            name: Any
            if kind == "local_shell_call":
                name, args = "local_shell", p.get("action")
                call_id = call_id or (p.get("id") if isinstance(p.get("id"), str) else None)
            elif kind == "custom_tool_call":
                name, args = p.get("name"), decode_arguments(p.get("input"))
            else:
                fn_raw = p.get("function")
                fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
                name = p.get("name", fn.get("name"))
                args = decode_arguments(p.get("arguments", fn.get("arguments")))
            if not isinstance(name, str):
                return
            if call_id is None:
                call_id = f"line-{n}"
                self.unnamed[name].append(call_id)
            elif self.b.has_call(call_id):
                return  # a resumed or forked rollout repeats earlier items
            self._ensure_turn()
            self.b.add_call(name, call_id, args)
        elif kind.endswith("_output") and call_id is not None:
            self.b.end_turn()
            value, ok = _output(p)
            self.b.add_result(call_id, value, ok)
        elif kind == "tool_result":
            self.b.end_turn()
            name = p.get("name")
            waiting = self.unnamed.get(name) if isinstance(name, str) else None
            if waiting:
                result = p.get("result", p.get("output"))
                self.b.add_result(waiting.popleft(), content_text(result))
        elif kind == "message":
            if p.get("role") != "assistant":
                self.b.end_turn()
        elif kind not in _MODEL_OUTPUT:
            self.b.end_turn()


def _read(source: Source) -> Iterator[Item]:
    return read_log(source, "codex", _Rollout())


class _State(msgspec.Struct, array_like=True):
    builder: BuilderState
    task: str | None
    responses: int
    session: str | None
    unnamed: dict[str, list[str]]
    lenient: bool


class Resume(LineResume):
    """The rollout's conversion resumed from a saved state (see `._resume`): the same
    records as `_read`, a line at a time."""

    def __init__(self, source: str, state: bytes | None) -> None:
        self.source = source
        self.lenient = False
        if state is None:
            self.b = ResumableBuilder()
            self.r = _Rollout(self.b)
            return
        s = decode_state(state, _State)
        self.b = ResumableBuilder(s.builder)
        self.r = _Rollout(self.b)
        self.r.task, self.r.responses, self.r.session = s.task, s.responses, s.session
        for name, ids in s.unnamed.items():
            self.r.unnamed[name].extend(ids)
        self.lenient = s.lenient

    def record(self, number: int, rec: dict[str, Any]) -> None:
        self.r.record(number, rec)

    def save(self) -> bytes:
        unnamed = {k: list(v) for k, v in self.r.unnamed.items() if v}
        return encode(_State(self.b.state(), self.r.task, self.r.responses, self.r.session,
                             unnamed, self.lenient))


_KIND = re.compile(rb'"type"\s*:\s*"(session_meta|response_item|event_msg|turn_context)"')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    first = strip_bom(head).lstrip()
    # The first record's own "type" (a long session_meta may not end inside the head).
    match = _KIND.search(first[:4096])
    if match is None or b'"payload"' not in first[:8192]:
        return 0
    return 90


READER = Reader(
    name="codex",
    description="OpenAI Codex CLI rollout JSONL (response_item calls and outputs, "
    "task_started/task_complete)",
    extensions=(".jsonl",),
    markers=(b'"payload"',),
    top=90,
    order=40,
    sniff=_sniff,
    read=_read,
)
