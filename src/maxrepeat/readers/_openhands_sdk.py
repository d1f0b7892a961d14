"""The OpenHands SDK (V1) event model, for the ``openhands`` reader (see its module
docstring): ``ActionEvent`` calls grouped by ``llm_response_id``, their results joined by
``tool_call_id``. No I/O here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ._toolevents import EventBuilder, content_text, decode_arguments, type_name

__all__ = ["is_v1", "v1_event", "without_noise"]

#: args keys OpenHands adds around the model's arguments
_NOISE: Final = frozenset({
    "thought", "security_risk", "impl_source", "is_input", "blocking", "hidden",
    "confirmation_state", "translated_ipython_code", "is_confirmed", "reasoning_content",
})


def is_v1(event: Mapping[str, Any]) -> bool:
    kind = event.get("kind")
    return isinstance(kind, str) and kind.endswith(("Event", "Observation")) and (
        "observation" not in event or isinstance(event.get("observation"), Mapping))


def _v1_observation(observation: Mapping[str, Any]) -> tuple[Any, bool]:
    """(text, success) of an SDK observation.

    SDK releases of late 2025 wrote ``output`` (a string) and ``error`` (a bool) where
    later ones write ``content`` (blocks) and ``is_error``; a shell observation also
    carries its exit code, top level or in ``metadata``.
    """
    result = content_text(observation["content"]) if "content" in observation \
        else observation.get("output")
    failed = observation.get("is_error") is True or observation.get("error") is True
    code = observation.get("exit_code")
    if code is None and isinstance(observation.get("metadata"), Mapping):
        code = observation["metadata"].get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        failed = True
    return result, not failed


def v1_event(builder: EventBuilder, event: Mapping[str, Any], current: str | None,
              where: str, source: str) -> str | None:
    """Take one SDK (V1) event; returns the LLM response id of the open turn."""
    kind = event["kind"]
    cid = event.get("tool_call_id")
    if kind == "ActionEvent":
        return _v1_action(builder, event, current, where, source)
    if isinstance(cid, str) and builder.has_call(cid):
        observation = event.get("observation")
        if isinstance(observation, Mapping):
            result, ok = _v1_observation(observation)
        elif kind == "AgentErrorEvent":
            result, ok = event.get("error"), False
        else:  # a user rejection: the reason is what the model is shown
            result, ok = event.get("rejection_reason"), False
        builder.add_result(cid, result, ok)
    elif kind == "MessageEvent" and event.get("source") == "agent":
        builder.end_turn()
        return None
    return current


def _v1_action(builder: EventBuilder, event: Mapping[str, Any], current: str | None,
               where: str, source: str) -> str | None:
    """Take an SDK ``ActionEvent``; returns the LLM response id of the open turn."""
    cid = event.get("tool_call_id")
    call = event.get("tool_call")
    call = call if isinstance(call, Mapping) else {}
    name = event.get("tool_name", call.get("name"))
    if not isinstance(name, str):
        raise TrajectoryFormatError(
            source, f"must be a string (got {type_name(name)})", position=f"{where}.tool_name")
    if "arguments" in call:
        arguments = decode_arguments(call["arguments"])
    else:
        arguments = without_noise(event.get("action"))
    group = event.get("llm_response_id")
    group = group if isinstance(group, str) else None
    if group is None or group != current or not builder.in_turn:
        builder.start_turn(group)
    ident = event.get("id")
    own = cid if isinstance(cid, str) and not builder.has_call(cid) else (
        f"event-{ident if isinstance(ident, str) else where}")
    builder.add_call(name, own, arguments)
    if group is None:
        builder.end_turn()
    return group


def without_noise(args: Any) -> Any:
    """An action's fields without the keys OpenHands adds around the model's arguments."""
    return {k: v for k, v in args.items() if k not in _NOISE} \
        if isinstance(args, Mapping) else args
