"""The current ``exec_command`` call's result, as Codex's rollout will record it.

When Codex runs a ``PostToolUse`` hook for a shell command, the hook input's
``tool_response`` is the command's output alone, while the rollout records the call's
``function_call_output`` (written after the hook) as a header and that output::

    Chunk ID: 38e87f
    Wall time: 0.0000 seconds
    Process exited with code 0
    Original token count: 3
    Output:
    same output

The ``codex`` reader keeps ``Process exited with code N`` and the output
(`maxrepeat.readers.codex.exec_output`); the exit code is the one thing the hook input
lacks. Codex writes it before the hook runs, in the rollout's ``item_completed`` record of
the command (``{"type": "CommandExecution", "id": CALL_ID, "exit_code": N, ...}``), after
the call's ``function_call`` line: `command_result` finds it by reading the rollout
backwards from its end to that line, so the guard judges the result ``maxrepeat grade``
of the finished rollout will see.

A command still running after its first wait is answered at once (``Process running with
session ID N``, written before any hook); Codex runs its ``PostToolUse`` when a
``write_stdin`` call polling session N sees it end, with the command's ``tool_use_id``
and the poll's output, which the rollout records as that poll's result: the step the
hook reports is the poll (the latest ``write_stdin`` call of that session still without
an output), and `command_result` names it.

Codex writes its rollout from a task of its own: should the record not be there yet
when the hook reads, the hook waits for it (at most `WAIT` seconds), but only when the
rollout holds such a record for an earlier command (this Codex writes them), so that
releases that do not write them pay nothing; without the record the result stays the
hook input's (for a session's first command, which no earlier step can equal, that
changes no verdict).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from typing import Any, Final

from ..readers._regular import open_regular

__all__ = ["command_result", "WAIT"]

#: Longest wait (seconds) for the command's ``item_completed`` record.
WAIT: Final = 2.0
#: How far from the rollout's end the call's lines (and an earlier command's record)
#: are looked for.
_SCAN_LIMIT: Final = 4 << 20
_BLOCK: Final = 64 << 10
_ITEM: Final = b'"CommandExecution"'
_POLL: Final = b'"write_stdin"'
_OUTPUT: Final = b'_output"'
_RUNNING: Final = re.compile(r"^Process running with session ID (\d+)$", re.M)


class _NotExec(Exception):
    """No exit code to find for the call (see `_scan`)."""


class _Absent(Exception):
    """The call is written, its record not (yet)."""

    def __init__(self, written: bool) -> None:
        super().__init__(written)
        self.written = written


def _lines_backwards(f: Any, size: int) -> Iterator[bytes]:
    """The complete lines of an open file, last first, from its first ``size`` bytes,
    reading at most `_SCAN_LIMIT` bytes."""
    end, rest = size, b""
    while end > 0 and size - end < _SCAN_LIMIT:
        start = max(0, end - _BLOCK)
        f.seek(start)
        chunk = f.read(end - start) + rest
        end = start
        lines = chunk.split(b"\n")
        rest = lines.pop(0) if start > 0 else b""
        yield from reversed(lines)


def _payload(line: bytes) -> tuple[Any, dict[str, Any]] | None:
    try:
        rec = json.loads(line)
    except ValueError:  # a line still being written, or not JSON
        return None
    payload = rec.get("payload") if isinstance(rec, dict) else None
    return (rec.get("type"), payload) if isinstance(payload, dict) else None


def _command_item(kind: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The ``CommandExecution`` item of an ``item_completed`` record, else None."""
    item = payload.get("item")
    if (kind == "event_msg" and payload.get("type") == "item_completed"
            and isinstance(item, dict) and item.get("type") == "CommandExecution"):
        return item
    return None


def _stdin_session(payload: dict[str, Any]) -> str | None:
    """The session a ``write_stdin`` call polls, from its arguments."""
    try:
        args = json.loads(payload.get("arguments") or "null")
    except (TypeError, ValueError):
        return None
    session = args.get("session_id") if isinstance(args, dict) else None
    return str(session) if isinstance(session, (int, str)) else None


def _running_session(payload: dict[str, Any]) -> str | None:
    """The session a command's output says it is still running in, if it says so."""
    out = payload.get("output")
    found = _RUNNING.search(out) if isinstance(out, str) else None
    return found.group(1) if found else None


def _scan(log: str, call_id: str) -> tuple[str, int] | None:
    """(the call whose result the hook reports, its exit code), read from the rollout's
    end back to the command ``call_id``: the command itself, or, when its output is
    already written (it was still running then), the ``write_stdin`` call polling it
    that is waiting for its output. `_Absent` when the exit code is not written yet
    (``written``: an earlier command's is); `_NotExec` when there is none to find (another
    tool, an output written, a command still running); None when there is no such call."""
    scan = _Scan(call_id)
    with open_regular(log) as f:  # a FIFO is refused, never waited on (issue 30)
        for line in _lines_backwards(f, os.fstat(f.fileno()).st_size):
            done = scan.line(line)
            if done is not None:
                return done
    if scan.target is not None:
        raise _Absent(written=False)
    return None


class _Scan:
    """What `_scan` has seen so far, reading back from the rollout's end."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.needle = json.dumps(call_id).encode()
        self.code: int | None = None
        self.answered: set[str] = set()  # outputs seen (after their calls: the scan goes back)
        self.polls: list[tuple[str, str | None]] = []  # write_stdin calls without one, last first
        self.target: str | None = None

    def line(self, line: bytes) -> tuple[str, int] | None:
        """The result once both the call and its exit code are found, else None."""
        if self.target is not None:  # the call is found, its exit code is not written
            if _ITEM in line and (found := _payload(line)) and _command_item(*found):
                raise _Absent(written=True)
            return None
        if not (self.needle in line or _POLL in line or _OUTPUT in line) or \
                (found := _payload(line)) is None:
            return None
        kind, payload = found
        item = _command_item(kind, payload)
        if item is not None and item.get("id") == self.call_id:
            code = item.get("exit_code")
            if not isinstance(code, int) or isinstance(code, bool):
                raise _NotExec
            self.code = code
        elif kind == "response_item":
            self._response(payload)
            if self.target is not None and self.code is not None:
                return self.target, self.code
        return None

    def _response(self, payload: dict[str, Any]) -> None:
        ptype, pid = payload.get("type"), payload.get("call_id")
        if pid == self.call_id and ptype == "function_call_output":
            session = _running_session(payload)
            self.target = next((c for c, s in self.polls if s == session and session), None)
            if self.target is None:
                raise _NotExec
        elif isinstance(ptype, str) and ptype.endswith("_output") and isinstance(pid, str):
            self.answered.add(pid)
        elif ptype == "function_call" and payload.get("name") == "write_stdin" and \
                isinstance(pid, str) and pid not in self.answered:
            self.polls.append((pid, _stdin_session(payload)))
        elif pid == self.call_id:
            if ptype != "function_call" or payload.get("name") != "exec_command":
                raise _NotExec
            self.target = self.call_id


def command_result(log: str | None, call_id: str | None, wait: float = WAIT
                   ) -> tuple[str, int] | None:
    """(the call id, the exit code) of the ``exec_command`` call ``call_id``'s result in
    the rollout ``log`` (`_scan`), the exit code waited for at most ``wait`` seconds when
    an earlier command has its record; None when there is none to find (another tool, a
    command still running, no rollout, no such call, or a release that does not write
    the record)."""
    if not log or not call_id:
        return None
    deadline = time.monotonic() + wait
    while True:
        try:
            return _scan(log, call_id)
        except (_NotExec, OSError):
            return None
        except _Absent as absent:
            if not absent.written or time.monotonic() >= deadline:
                return None
        time.sleep(0.02)
