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
the call's ``function_call`` line: `exec_exit_code` finds it by reading the rollout
backwards from its end to that line, so the guard judges the result ``maxrepeat grade``
of the finished rollout will see.

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
import time
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["exec_exit_code", "WAIT"]

#: Longest wait (seconds) for the command's ``item_completed`` record.
WAIT: Final = 2.0
#: How far from the rollout's end the call's lines (and an earlier command's record)
#: are looked for.
_SCAN_LIMIT: Final = 4 << 20
_BLOCK: Final = 64 << 10
_ITEM: Final = b'"CommandExecution"'


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


def _scan(log: str, call_id: str) -> int | None:
    """The call's exit code, read from the rollout's end back to the call. `_Absent`
    when the call is an ``exec_command`` call without its record yet (``written``: an
    earlier command has one); `_NotExec` when there is no exit code to find: another
    tool, an output already written, a command still running; None: no such call."""
    needle = json.dumps(call_id).encode()
    seen_call = False
    with open(log, "rb") as f:
        for line in _lines_backwards(f, os.fstat(f.fileno()).st_size):
            if seen_call:
                if _ITEM in line and (found := _payload(line)) and _command_item(*found):
                    raise _Absent(written=True)
                continue
            if needle not in line or (found := _payload(line)) is None:
                continue
            kind, payload = found
            item = _command_item(kind, payload)
            if item is not None and item.get("id") == call_id:
                code = item.get("exit_code")
                if isinstance(code, int) and not isinstance(code, bool):
                    return code
                raise _NotExec
            if kind == "response_item" and payload.get("call_id") == call_id:
                if payload.get("type") != "function_call" or \
                        payload.get("name") != "exec_command":
                    raise _NotExec
                seen_call = True
    if seen_call:
        raise _Absent(written=False)
    return None


def exec_exit_code(log: str | None, call_id: str | None, wait: float = WAIT) -> int | None:
    """The exit code Codex wrote for the ``exec_command`` call ``call_id`` in the rollout
    ``log``, waited for at most ``wait`` seconds when an earlier command has its record;
    None when there is none to find (another tool, a command still running, no rollout,
    no such call, or a release that does not write the record)."""
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
