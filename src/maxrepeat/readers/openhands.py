"""OpenHands (V0) event lists and evaluation ``output.jsonl``.

Layouts: a JSON array of events (a trajectory export, a replay file); an object with
``history`` (one evaluation record); ``output.jsonl`` with one record per line, streamed,
each ``{instance_id, history: [events], error, ...}`` giving one trajectory whose id is
the ``instance_id``.

What marks a model response (one turn): the agent's action events that share
``tool_call_metadata.model_response.id`` (parallel calls of one LLM response); an action
without it is a response of its own. An action event is a tool call when it carries
``tool_call_metadata`` (tool name ``function_name``) or, without it, when its ``action`` is
one that runs something (``run``, ``read``, ``edit``, ``browse``, …; the tool name is the
action). Arguments are those of the matching tool call in
``tool_call_metadata.model_response`` when present (what the model passed); otherwise the
event's ``args`` without the keys OpenHands adds around them (``thought``,
``security_risk``, ``impl_source``, ``is_input``, ``blocking``, …).

An observation event answers the action whose ``id`` is its ``cause`` (else the call with
its ``tool_call_metadata.tool_call_id``); the result is its ``content``. It failed when
``observation`` is ``error``, its ``success`` is false, ``extras.metadata.exit_code`` is
not 0, or the content starts with ``ERROR:``.

The SDK (V1) event model (``kind: "ActionEvent"`` / ``"ObservationEvent"`` /
``"AgentErrorEvent"`` / ``"UserRejectObservation"``) is read too: a call is an
``ActionEvent`` (``tool_name``; arguments decoded from ``tool_call.arguments``), grouped
into turns by ``llm_response_id``; results join by ``tool_call_id`` (``observation.content``
as text, or the older ``observation.output``; ``observation.is_error`` / ``error``, a shell
exit code other than 0, or an error/rejection event -> ``success: false``).

An action event with its fields inline and no ``args`` (an older flat shape, which the
serializer of released OpenHands does not write) is not guessed at: the file gives an
error result naming the first such event.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._chat import all_keys, any_key, first_char, has_key, is_jsonl, load_document
from ._chatruns import iter_json_lines
from ._json import strip_bom
from ._openhands_sdk import is_v1, v1_event, without_noise
from ._toolevents import EventBuilder, decode_arguments, type_name

__all__ = ["READER", "trajectory_from_events"]

NAME = "openhands"

#: actions that run a tool when they come without tool_call_metadata (text-mode agents)
_TOOL_ACTIONS: Final = frozenset({
    "run", "run_ipython", "read", "edit", "write", "browse", "browse_interactive",
    "call_tool_mcp", "mcp", "delegate", "think", "finish",
})
def _model_arguments(meta: Mapping[str, Any]) -> tuple[bool, Any]:
    response = meta.get("model_response")
    wanted = meta.get("tool_call_id")
    if not isinstance(response, Mapping) or not isinstance(response.get("choices"), list):
        return False, None
    for choice in response["choices"]:
        message = choice.get("message") if isinstance(choice, Mapping) else None
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, Mapping) and call.get("id") == wanted:
                function = call.get("function")
                if isinstance(function, Mapping) and "arguments" in function:
                    return True, decode_arguments(function["arguments"])
    return False, None


def _failed(event: Mapping[str, Any]) -> bool:
    if event.get("observation") == "error":
        return True
    if event.get("success") is False:
        return True
    extras = event.get("extras")
    meta = extras.get("metadata") if isinstance(extras, Mapping) else None
    code = meta.get("exit_code") if isinstance(meta, Mapping) else None
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return True
    content = event.get("content")
    return isinstance(content, str) and content.startswith("ERROR:")


def _response_id(meta: Any) -> str | None:
    if isinstance(meta, Mapping):
        response = meta.get("model_response")
        if isinstance(response, Mapping) and isinstance(response.get("id"), str):
            return str(response["id"])
    return None


def trajectory_from_events(
    events: list[Any], *, source: str, id: str | None = None, lenient: bool = False,
    path: str = "", metadata: Mapping[str, Any] | None = None,
) -> Trajectory:
    """A `Trajectory` from a list of OpenHands events.

    >>> evs = [{"id": 1, "source": "agent", "action": "run",
    ...         "args": {"command": "ls", "thought": "look", "blocking": False}},
    ...        {"id": 2, "source": "agent", "observation": "run", "cause": 1,
    ...         "content": "a.txt", "extras": {"metadata": {"exit_code": 0}}}]
    >>> t = trajectory_from_events(evs, source="e.json")
    >>> [(e.type, e.data.arguments, e.data.result) for e in t.events][1:3]
    [('tool_call', {'command': 'ls'}, None), ('tool_result', None, 'a.txt')]
    """
    history = _History(source)
    for index, event in enumerate(events):
        where = f"{path}[{index}]"
        if not isinstance(event, Mapping):
            raise TrajectoryFormatError(
                source, f"must be an event object (got {type_name(event)})", position=where)
        if is_v1(event):
            history.current = v1_event(history.builder, event, history.current, where,
                                        source)
            continue
        meta = event.get("tool_call_metadata")
        meta = meta if isinstance(meta, Mapping) else None
        action = event.get("action")
        if isinstance(action, str) and "observation" not in event:
            history.action(event, action, meta, index, where)
        elif "observation" in event:
            history.observation(event, meta)
    return Trajectory(events=history.builder.events(), id=id, source=source, format=NAME,
                      lenient=lenient, metadata=dict(metadata or {}))


class _History:
    """Reading one V0 event list: the calls so far, the call id of each action event (by
    its id), and the model response id of the open turn."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.builder = EventBuilder()
        self.by_event: dict[int | str, str] = {}
        self.current: str | None = None

    def action(self, event: Mapping[str, Any], action: str,
               meta: Mapping[str, Any] | None, index: int, where: str) -> None:
        """Take an action event: a tool call, or the end of a response without one."""
        builder = self.builder
        if event.get("source") not in (None, "agent") or (
                meta is None and action not in _TOOL_ACTIONS):
            if event.get("source") == "agent":
                builder.end_turn()  # a message or other response without a tool
                self.current = None
            return
        name = self._tool_name(event, action, meta, where)
        found, arguments = _model_arguments(meta) if meta is not None else (False, None)
        if not found:
            arguments = without_noise(event.get("args"))
        group = _response_id(meta)
        if group is None or group != self.current or not builder.in_turn:
            builder.start_turn(group)
        self.current = group
        cid = meta.get("tool_call_id") if meta is not None else None
        own = cid if isinstance(cid, str) and not builder.has_call(cid) else (
            f"event-{event.get('id', index)}")
        builder.add_call(name, own, arguments)
        if isinstance(event.get("id"), (int, str)):
            self.by_event[event["id"]] = own
        if meta is None or group is None:
            builder.end_turn()
            self.current = None

    def _tool_name(self, event: Mapping[str, Any], action: str,
                   meta: Mapping[str, Any] | None, where: str) -> str:
        name = meta.get("function_name") if meta is not None else action
        if not isinstance(name, str):
            raise TrajectoryFormatError(
                self.source, f"must be a string (got {type_name(name)})",
                position=f"{where}.tool_call_metadata.function_name")
        if meta is None and "args" not in event:
            # OpenHands' serializer always writes an action's fields under args; an
            # action with them inline is another shape, and reading it would invent
            # null arguments (and unpaired results) for every call.
            raise TrajectoryFormatError(
                self.source, "must be an OpenHands action with args (got an action with its "
                "fields inline, no args: an older flat event shape this reader does not "
                "understand; nothing in this file was graded)", position=where)
        return name

    def observation(self, event: Mapping[str, Any], meta: Mapping[str, Any] | None) -> None:
        """Take an observation event: the result of the call it answers, if known."""
        cause = event.get("cause")
        cid = self.by_event.get(cause) if isinstance(cause, (int, str)) else None
        if cid is None and meta is not None and isinstance(meta.get("tool_call_id"), str):
            cid = meta["tool_call_id"]
        if cid is not None and self.builder.has_call(cid):
            self.builder.add_result(cid, event.get("content"), not _failed(event))


def _record(value: Any, source: str, lenient: bool) -> Trajectory:
    if isinstance(value, list):
        return trajectory_from_events(value, source=source, lenient=lenient)
    if isinstance(value, Mapping) and isinstance(value.get("history"), list):
        ident = value.get("instance_id")
        error = value.get("error")
        return trajectory_from_events(
            value["history"], source=source, lenient=lenient, path="history",
            id=str(ident) if isinstance(ident, (str, int)) else None,
            metadata={"error": error} if isinstance(error, str) else None)
    raise TrajectoryFormatError(
        source, f"expected an array of events or an object with history (got "
        f"{type_name(value)}{' without history' if isinstance(value, Mapping) else ''})")


def _read(source: Source) -> Iterator[Item]:
    if is_jsonl(source):
        for n, value, lenient in iter_json_lines(source):
            if isinstance(value, TrajectoryFormatError):
                yield value
                continue
            try:
                yield _record(value, f"{source.name}:{n}", lenient)
            except TrajectoryFormatError as err:
                yield err
        return
    try:
        value, lenient = load_document(source)
        yield _record(value, source.name, lenient)
    except TrajectoryFormatError as err:
        yield err


#: an evaluation record's opening keys: test_result holds the whole git_patch, so a large
#: patch can push instruction, metadata and history out of the head
_EVAL_OPENING: Final = re.compile(
    rb'\s*\{\s*"instance_id"\s*:\s*"[^"]*"\s*,\s*"(?:test_result|instruction)"\s*:')


def _sniff(head: bytes, source: Source) -> int:
    start = first_char(head)
    if start == b"{":
        if all_keys(head, "instance_id", ("history", b"[")):
            return 90 if any_key(head, ("source", b'"'), ("action", b'"')) else 75
        if all_keys(head, "instance_id", "instruction", "agent_class"):
            return 75  # history lies beyond the head
        return 60 if _EVAL_OPENING.match(strip_bom(head)) else 0
    if start != b"[" or not any_key(head, ("source", b'"'), ("kind", b'"')):
        return 0
    if any_key(head, "tool_call_metadata", "cause"):
        return 90
    if any_key(head, ("kind", b'"ActionEvent"'), "llm_response_id"):
        return 88  # the SDK (V1) event model
    if any_key(head, ("action", b'"'), ("observation", b'"')):
        return 70 if has_key(head, "timestamp") else 40
    return 0


READER = Reader(
    name=NAME,
    description="OpenHands event lists (JSON arrays) and evaluation output.jsonl (one "
    "instance per line, history inside)",
    extensions=(".json", ".jsonl"),
    markers=(b'"instance_id"', b'"source"', b'"kind"'),
    top=90,
    order=190,
    sniff=_sniff,
    read=_read,
)
