"""Where the current call of a log-reading agent's hook stands in the log's events (see
`HookCall.placement`): `place_call` splits the events into the history and the current
call's turn, taking the call from the log when it is there and adding what the log lacks
from the hook input; `repeats` and `settled_call` tell the guard when it must read the
log again from its start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.events import (
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    Event,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
)
from .hookcall import UNKNOWN, HookCall
from .logread import LogRead

__all__ = ["place_call", "repeats", "settled_call"]


def _call_ids(events: Sequence[Event]) -> list[str]:
    return [e.data.tool_call_id for e in events
            if e.type == TOOL_CALL and e.data.tool_call_id is not None]


def repeats(read: LogRead, later: list[Event]) -> bool:
    """Whether a call id of ``later`` (the open history and the current turn) comes
    twice, or was settled before. The readers never give one id twice (their builder
    drops a call id seen before), so only a call made from the payload can."""
    seen: set[str] = set()
    for cid in _call_ids(later):
        if cid in seen or (read.conv is not None and read.conv.settled_any(cid)):
            return True
        seen.add(cid)
    return False


def _turn_bounds(events: Sequence[Event], i: int) -> tuple[int, int]:
    """[start, end) of the turn holding event ``i`` (turn_start .. turn_end included)."""
    start = i
    while start > 0 and events[start - 1].type not in (TURN_END,) and \
            events[start].type != "turn_start":
        start -= 1
    end = i + 1
    while end < len(events) and events[end - 1].type != TURN_END:
        end += 1
    return start, end


def _find(events: Sequence[Event], call: HookCall) -> int | None:
    """Index of the current call's ``tool_call`` event in the log, or None."""
    if call.placement == "absent":
        return None
    if call.placement == "id":
        for i in range(len(events) - 1, -1, -1):
            e = events[i]
            if e.type == TOOL_CALL and e.data.tool_call_id == call.call_id:
                return i
        return None
    answered = {e.data.tool_call_id for e in events if e.type == TOOL_RESULT}
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if (e.type == TOOL_CALL and e.data.tool_name == call.name
                and (e.data.tool_call_id is None or e.data.tool_call_id not in answered)
                and (call.arguments is UNKNOWN or e.data.arguments == call.arguments)):
            return i
    return None


def place_call(events: Sequence[Event], call: HookCall, base: int = 0,
               pending: Sequence[Any] = ()) -> tuple[list[Event], list[Event]]:
    """Split the log's events into (history, the current call's turn).

    The current turn holds the call (taken from the log when it is there, else made from
    the payload) and, after the call, its result from the payload when the log lacks it.
    Before the call, results are left out (the call has not run). ``base``: how many
    events of the log come before ``events`` (they name a call made from the payload).
    ``pending``: earlier calls of the same model response that the log does not show
    yet (each with ``name``, ``arguments``, ``result``, ``ok``), put before the call in
    its turn when the call is not in the log either.
    """
    events = list(events)
    i = _find(events, call)
    if i is None:
        cid = call.call_id or f"maxrepeat-hook-{base + len(events)}"
        current = [turn_start("maxrepeat-hook")]
        for k, p in enumerate(pending):
            pid = f"maxrepeat-pending-{base + len(events)}-{k}"
            current += [tool_call(p.name, pid, p.arguments), tool_result(pid, p.result, p.ok)]
        current.append(tool_call(call.name, cid, call.arguments))
        if call.phase == "post":
            current.append(tool_result(cid, call.result, call.ok))
        current.append(turn_end("maxrepeat-hook"))
        return events, current
    start, end = _turn_bounds(events, i)
    history, turn = events[:start], events[start:end]
    found = events[i].data.tool_call_id
    if call.phase == "pre":
        # the refused call and anything after it have not happened
        turn = [e for e in turn if e.type != TOOL_RESULT or e.data.tool_call_id != found]
    elif found is not None and not any(e.type == TOOL_RESULT and e.data.tool_call_id == found
                                       for e in turn):
        at = len(turn) - 1 if turn and turn[-1].type == TURN_END else len(turn)
        turn.insert(at, tool_result(found, call.result, call.ok))
    # events after the current turn (none in practice) stay where they were
    return history, turn + events[end:]


def settled_call(read: LogRead, call: HookCall) -> bool:
    """Whether the current call may be in the settled part of the log (not in the open
    part): the whole log is then read to find it."""
    if read.conv is None or call.placement == "absent" or _find(read.open, call) is not None:
        return False
    return read.conv.settled_any(call.call_id if call.placement == "id" else None)
