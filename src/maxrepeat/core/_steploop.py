"""Steps one event at a time: `group_steps_loop`, the reference that `steps.group_steps`
must equal and the path that reports a call without a string tool name, and
`events_readable`, the check a reader's fast path asks before trusting its events."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import accel
from .errors import TrajectoryFormatError, type_name
from .events import TOOL_CALL, TOOL_RESULT, TURN_END, TURN_START
from .rules import ALONE, OPEN, place_call

__all__ = ["group_steps_loop", "events_readable", "events_readable_pure"]


def group_steps_loop(
    events: Sequence[Any], watches: Callable[[str], bool]
) -> tuple[list[list[int]], dict[str, Any]]:
    """`group_steps` one event at a time (the reference, and the path that reports a call
    without a string tool name)."""
    steps: list[list[int]] = []
    results: dict[str, Any] = {}
    in_turn = False
    current: list[int] | None = None
    for i, event in enumerate(events):
        etype = event.type
        if etype == TOOL_CALL:
            data = event.data
            name = data.tool_name if data is not None else None
            if not isinstance(name, str):
                raise TrajectoryFormatError(
                    None, f"events[{i}].data.toolName must be a string (got {type_name(name)})"
                )
            if not watches(name):
                continue
            place = place_call(in_turn, current is not None)
            if place == ALONE:
                steps.append([i])
            else:
                if place == OPEN:
                    current = []
                    steps.append(current)
                assert current is not None
                current.append(i)
        elif etype == TOOL_RESULT:
            data = event.data
            call_id = data.tool_call_id if data is not None else None
            if call_id is not None and call_id not in results:
                results[call_id] = data.result
        elif etype == TURN_START:
            in_turn = True
            current = None
        elif etype == TURN_END:
            in_turn = False
            current = None
    return steps, results


def events_readable(events: Sequence[Any]) -> bool:
    """Whether every ``tool_call`` has data with a tool name and every ``tool_result`` has
    data (a reader's fast path hands anything else to its checked path, which reports
    it); by the native fast path when it is active.

    >>> from maxrepeat import tool_call, tool_result
    >>> events_readable([tool_call("bash", "c1"), tool_result("c1", "ok")])
    True
    """
    native = accel.native
    if native is not None:
        return bool(native.events_readable(events))
    return events_readable_pure(events)


def events_readable_pure(events: Sequence[Any]) -> bool:
    """`events_readable` in pure Python (the reference)."""
    for event in events:
        if event.type == TOOL_CALL and (event.data is None or event.data.tool_name is None):
            return False
        if event.type == TOOL_RESULT and event.data is None:
            return False
    return True
