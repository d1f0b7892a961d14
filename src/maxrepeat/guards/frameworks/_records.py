"""How the framework guards read a framework's record: one way for all of them.

`json_arguments` reads a tool call's arguments as a framework gives them (a JSON text, or
a value), and `turn_events` makes the monitors' events of a record of messages: each model
response with tool calls is one turn (``turn_start``, its calls, ``turn_end``), and the
results the messages hold are fed where they stand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ...core.events import tool_call, tool_result, turn_end, turn_start
from .._live import ToolCall

__all__ = ["json_arguments", "openai_calls", "turn_events"]


def json_arguments(raw: Any, *, blank_is_empty: bool = False) -> Any:
    """A tool call's arguments: a JSON text decoded (kept as it is when it is not JSON,
    and ``{}`` when it is blank and ``blank_is_empty``), any other value as it is.

    >>> json_arguments('{"path": "."}'), json_arguments("ls -l"), json_arguments([1])
    ({'path': '.'}, 'ls -l', [1])
    >>> json_arguments(" ", blank_is_empty=True), json_arguments("")
    ({}, '')
    """
    if not isinstance(raw, str):
        return raw
    if blank_is_empty and not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:  # arguments that are not JSON: keep the text
        return raw


def openai_calls(tool_calls: Iterable[Any] | None) -> list[ToolCall]:
    """The calls of an OpenAI-style ``tool_calls`` list: dicts with an ``id`` and a
    ``function`` (its ``name``, and its ``arguments`` as JSON text, a blank one ``{}``).

    >>> openai_calls([{"id": "c1", "function": {"name": "ls", "arguments": ""}}])
    [ToolCall(id='c1', name='ls', arguments={})]
    """
    calls = []
    for call in tool_calls or ():
        function = call.get("function") or {}
        calls.append(ToolCall(call.get("id"), str(function.get("name")),
                              json_arguments(function.get("arguments"), blank_is_empty=True)))
    return calls


def turn_events(messages: Iterable[Any],
                calls: Callable[[Any], list[ToolCall] | None],
                returns: Callable[[Any], Iterable[tuple[str, Any, bool]]], *,
                results_in_turn_only: bool = False) -> list[Any]:
    """The events of a record: ``calls(message)`` is ``None`` for a message that is not
    a model response, else the response's tool calls (a response ends the open turn; one
    with calls starts the next); ``returns(message)`` gives the (call id, value, success)
    of the results a message holds (those outside a turn are left out with
    ``results_in_turn_only``).

    >>> msgs = [("ask", "ls"), ("ret", "c0"), ("ask", None), ("ret", "c1")]
    >>> def calls(m):
    ...     return None if m[0] != "ask" else [ToolCall("c0", m[1], {})] if m[1] else []
    >>> def returns(m):
    ...     return [(m[1], "a.txt", True)] if m[0] == "ret" else []
    >>> [e.type for e in turn_events(msgs, calls, returns)]
    ['turn_start', 'tool_call', 'tool_result', 'turn_end', 'tool_result']
    >>> len(turn_events(msgs, calls, returns, results_in_turn_only=True))
    4
    """
    events: list[Any] = []
    open_turn = False
    for message in messages:
        found = calls(message)
        if found is not None:
            if open_turn:
                events.append(turn_end())
            open_turn = bool(found)
            if found:
                events += [turn_start(), *(tool_call(c.name, c.id, c.arguments) for c in found)]
        if open_turn or not results_in_turn_only:
            events += [tool_result(cid, value, ok) for cid, value, ok in returns(message)]
    if open_turn:
        events.append(turn_end())
    return events
