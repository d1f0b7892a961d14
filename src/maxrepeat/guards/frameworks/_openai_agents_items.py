"""The OpenAI Agents SDK's record of a run (``result.to_input_list()``, ``RunItem``
objects) read as maxrepeat events: what the guard (`maxrepeat.guards.frameworks.
openai_agents`) sees and what grading the run afterwards sees are one reading."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.events import Trajectory, tool_call, tool_result, turn_end, turn_start
from .._live import ToolCall
from ._records import json_arguments

__all__ = ["trajectory_from_items", "item_dict", "item_kind", "item_call", "FORMAT", "SOURCE"]

FORMAT = "openai-agents"
SOURCE = "<openai-agents items>"
_MODEL_SIDE = ("function_call", "message", "reasoning")


def item_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    to_input = getattr(item, "to_input_item", None)
    if callable(to_input):
        value: dict[str, Any] = to_input()
        return value
    dump = getattr(item, "model_dump", None)
    return dump(exclude_unset=True) if callable(dump) else {}


def item_kind(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        kind = "message"
    return str(kind)


def item_call(item: dict[str, Any]) -> ToolCall:
    return ToolCall(item.get("call_id"), item.get("name", ""),
                    json_arguments(item.get("arguments")))


def _events(items: Sequence[Any]) -> list[Any]:
    events: list[Any] = []
    open_turn = False
    model_side = False
    for raw in items:
        item = item_dict(raw)
        kind = item_kind(item)
        side = kind in _MODEL_SIDE and item.get("role", "assistant") == "assistant"
        if side and not model_side and open_turn:
            events.append(turn_end())
            open_turn = False
        model_side = side
        if kind == "function_call":
            if not open_turn:
                events.append(turn_start())
                open_turn = True
            c = item_call(item)
            events.append(tool_call(c.name, c.id, c.arguments))
        elif kind == "function_call_output":
            events.append(tool_result(str(item.get("call_id")), item.get("output")))
    if open_turn:
        events.append(turn_end())
    return events


def trajectory_from_items(items: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from a run's items (``result.to_input_list()``, or ``RunItem``
    objects): the function calls of one model response are one turn, the
    ``function_call_output`` items answering them (by ``call_id``) the results.

    >>> from maxrepeat import grade, MaxRepeatConfig
    >>> items = [{"role": "user", "content": "fix"}]
    >>> for i in range(3):
    ...     items += [{"type": "function_call", "call_id": f"c{i}", "name": "ls",
    ...                "arguments": "{}"},
    ...               {"type": "function_call_output", "call_id": f"c{i}", "output": "a"}]
    >>> grade(trajectory_from_items(items), MaxRepeatConfig(max=2)).metadata.occurrences
    3
    """
    return Trajectory(events=tuple(_events(items)), id=id, source=SOURCE,
                      format=FORMAT)
