"""The event model of spec §1 as typed values, and trajectories that carry them.

`Event` mirrors one entry of a trajectory's ``events`` array; only the fields the grader
uses are kept. Every reader converts its format into these. The JSON field names are the
seed framework's (``toolName``, ``toolCallId``), the Python names are snake_case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import msgspec

from .canonical import decode_value
from .errors import TrajectoryFormatError, type_name

__all__ = [
    "EventData",
    "Event",
    "Trajectory",
    "tool_call",
    "tool_result",
    "turn_start",
    "turn_end",
    "trajectory_from_dict",
    "EventLike",
    "event_to_dict",
    "type_name",
]

TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
TURN_START = "turn_start"
TURN_END = "turn_end"


class EventData(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """The ``data`` of an event: the fields the grader reads.

    ``arguments`` and ``result`` are any JSON value (Python objects, or ``msgspec.Raw``
    slices of the input that are decoded only when needed).

    >>> EventData(tool_name="bash", tool_call_id="c1", arguments={"command": "ls"}).tool_name
    'bash'
    """

    tool_name: str | None = None
    tool_call_id: str | None = None
    arguments: Any = None
    result: Any = None
    success: bool | None = None
    turn_id: str | None = None


class Event(msgspec.Struct, frozen=True):
    """One trajectory event: its ``type`` and its ``data``.

    >>> Event("tool_call", EventData(tool_name="bash")).type
    'tool_call'
    """

    type: str
    data: EventData = EventData()


class _DataLike(Protocol):
    @property
    def tool_name(self) -> str | None: ...

    @property
    def tool_call_id(self) -> str | None: ...

    @property
    def arguments(self) -> Any: ...

    @property
    def result(self) -> Any: ...


class EventLike(Protocol):
    """Anything shaped like an `Event` (the fast decoder's private structs are)."""

    @property
    def type(self) -> str: ...

    @property
    def data(self) -> _DataLike | None: ...


def tool_call(name: str, call_id: str | None = None, arguments: Any = None) -> Event:
    """A ``tool_call`` event.

    >>> tool_call("bash", "c1", {"command": "ls"}).data.arguments
    {'command': 'ls'}
    """
    return Event(TOOL_CALL, EventData(tool_name=name, tool_call_id=call_id, arguments=arguments))


def tool_result(call_id: str, result: Any, success: bool = True) -> Event:
    """A ``tool_result`` event answering the call with ``call_id``.

    >>> tool_result("c1", "ok").data.result
    'ok'
    """
    return Event(TOOL_RESULT, EventData(tool_call_id=call_id, result=result, success=success))


def turn_start(turn_id: str | None = None) -> Event:
    """A ``turn_start`` event.

    >>> turn_start().type
    'turn_start'
    """
    return Event(TURN_START, EventData(turn_id=turn_id))


def turn_end(turn_id: str | None = None) -> Event:
    """A ``turn_end`` event.

    >>> turn_end().type
    'turn_end'
    """
    return Event(TURN_END, EventData(turn_id=turn_id))


class Trajectory(msgspec.Struct, frozen=True):
    """One agent run: its events, and where it came from.

    ``source`` says where it was read (``file``, ``file:line`` or ``file[index]``);
    ``label`` is what results call it: the ``id`` when there is one, else the source.

    >>> t = Trajectory(events=(tool_call("bash", "c1"),), id="run-1")
    >>> t.label
    'run-1'
    """

    events: Sequence[Any]
    id: str | None = None
    source: str | None = None
    format: str = "vally"
    lenient: bool = False
    stimulus: str | None = None
    metadata: Mapping[str, Any] = msgspec.field(default_factory=dict)

    @property
    def label(self) -> str:
        """The trajectory's name in results: its id, else where it was read."""
        if self.id is not None:
            return self.id
        return self.source if self.source is not None else "<trajectory>"

    def to_dict(self) -> dict[str, Any]:
        """The trajectory in the native JSON shape of spec §1 (any reader's output can be
        written this way and read back by the ``vally`` reader).

        >>> Trajectory(events=(turn_start(),), id="r").to_dict()["events"]
        [{'type': 'turn_start', 'data': {}}]
        """
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.stimulus is not None:
            out["stimulus"] = {"name": self.stimulus}
        out["events"] = [event_to_dict(e) for e in self.events]
        return out


def event_to_dict(event: Any) -> dict[str, Any]:
    """One event (an `Event` or a reader's struct of the same shape) as a JSON dict."""
    data: dict[str, Any] = {}
    raw = event.data
    if raw is not None:
        for attr, key in (("tool_name", "toolName"), ("tool_call_id", "toolCallId")):
            value = getattr(raw, attr, None)
            if value is not None:
                data[key] = value
        if event.type == TOOL_CALL:
            data["arguments"] = decode_value(getattr(raw, "arguments", None))
        elif event.type == TOOL_RESULT:
            data["result"] = decode_value(getattr(raw, "result", None))
            success = getattr(raw, "success", None)
            if success is not None:
                data["success"] = success
        turn_id = getattr(raw, "turn_id", None)
        if turn_id is not None:
            data["turnId"] = turn_id
    return {"type": event.type, "data": data}


def _id_of(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return None


def event_from_dict(raw: Any, index: int) -> Event:
    """Convert one event object of the trajectory JSON, checking the fields the grader uses."""
    where = f"events[{index}]"
    if not isinstance(raw, Mapping):
        raise TrajectoryFormatError(
            None, f"{where} must be an object (got {type_name(raw)})", position=None
        )
    etype = raw.get("type")
    if not isinstance(etype, str):
        raise TrajectoryFormatError(None, f"{where}.type must be a string (got {type_name(etype)})")
    data = raw.get("data")
    if etype not in (TOOL_CALL, TOOL_RESULT):
        # Turn boundaries and ignored events: their data is never read.
        return Event(etype)
    if not isinstance(data, Mapping):
        raise TrajectoryFormatError(
            None, f"{where}.data must be an object (got {type_name(data)})"
        )
    call_id = data.get("toolCallId")
    if call_id is not None and not isinstance(call_id, str):
        raise TrajectoryFormatError(
            None, f"{where}.data.toolCallId must be a string (got {type_name(call_id)})"
        )
    if etype == TOOL_CALL:
        name = data.get("toolName")
        if not isinstance(name, str):
            raise TrajectoryFormatError(
                None, f"{where}.data.toolName must be a string (got {type_name(name)})"
            )
        return Event(
            TOOL_CALL,
            EventData(tool_name=name, tool_call_id=call_id, arguments=data.get("arguments")),
        )
    success = data.get("success")
    return Event(
        TOOL_RESULT,
        EventData(
            tool_name=data.get("toolName") if isinstance(data.get("toolName"), str) else None,
            tool_call_id=call_id,
            result=data.get("result"),
            success=success if isinstance(success, bool) else None,
        ),
    )


def trajectory_from_dict(
    obj: Any, *, source: str | None = None, lenient: bool = False
) -> Trajectory:
    """A `Trajectory` from a trajectory object in the spec's JSON shape.

    Accepts the full trajectory (``{"id", "stimulus", "events", ...}``), a bare
    ``{"events": [...]}``, or a record carrying it under ``trajectory``.

    >>> trajectory_from_dict({"id": "r", "events": [{"type": "turn_start"}]}).label
    'r'
    """
    if (isinstance(obj, Mapping) and "events" not in obj
            and isinstance(obj.get("trajectory"), Mapping)):
        obj = obj["trajectory"]
    if not isinstance(obj, Mapping):
        raise TrajectoryFormatError(
            source, f"a trajectory must be an object (got {type_name(obj)})"
        )
    raw_events = obj.get("events")
    if not isinstance(raw_events, list):
        raise TrajectoryFormatError(
            source, f"events must be an array (got {type_name(raw_events)})"
        )
    try:
        events = tuple(event_from_dict(e, i) for i, e in enumerate(raw_events))
    except TrajectoryFormatError as err:
        if source is None:
            raise
        raise err.with_source(source) from err
    stimulus = obj.get("stimulus")
    stimulus_name = stimulus.get("name") if isinstance(stimulus, Mapping) else None
    return Trajectory(
        events=events,
        id=_id_of(obj.get("id")),
        source=source,
        lenient=lenient,
        stimulus=stimulus_name if isinstance(stimulus_name, str) else None,
    )
