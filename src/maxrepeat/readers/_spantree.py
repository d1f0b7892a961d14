"""Tool calls from a trace tree, grouped by model turn: the one rule of the span-based
readers (MLflow, OpenInference, LangSmith) and of the platform scorers built on them.

A platform that records a run as a tree of nodes (spans, runs) marks model calls and tool
calls by a kind. Read in start order, the tool nodes after one model node, up to the next,
form its turn, wherever they hang (LangGraph runs each parallel call in a node of its
own): the rule the OpenTelemetry reader applies to GenAI spans. Tool nodes before any
model node form one turn per parent (a trace with per-step spans and no model spans), or
with ``untraced="call"`` one turn each (MLflow: the model calls were not traced). A tool
node inside another tool node is that tool's own work, not a call of the model: it is
left out.

Inside a turn the calls are in the order the model asked for them when the trace says
it: the model node's ``asks`` lists the ids of the calls it made, in order, and a tool
node's ``asks`` is the id of the call it answers. Parallel calls start in whatever order
their threads are scheduled; the model's order does not depend on it. Calls without a
known id keep their places, in start order, as do all the calls of a turn whose model
node lists none. (The spec compares a turn's calls as a multiset, so the order changes
no verdict; it keeps the evidence the same from run to run.)

>>> nodes = [Node("a", "", "agent"), Node("m1", "a", "model"),
...          Node("t1", "a", "tool", "ls"), Node("t2", "a", "tool", "pwd"),
...          Node("m2", "a", "model"), Node("t3", "a", "tool", "ls"),
...          Node("t4", "t3", "tool", "inner")]
>>> model_turns(nodes)
[['ls', 'pwd'], ['ls']]
>>> model_turns([Node("m", "a", "model", asks=("c1", "c2")),
...              Node("t2", "a", "tool", "pwd", "c2"), Node("t1", "a", "tool", "ls", "c1")])
[['ls', 'pwd']]
>>> [e.type for e in events_from_turns([[Call("ls", result="a"), Call("pwd")]])]
['turn_start', 'tool_call', 'tool_call', 'tool_result', 'turn_end']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from ..core.errors import TrajectoryFormatError
from ..core.events import Event, Trajectory, tool_call, tool_result, turn_end, turn_start
from ._json import decode, iter_lines
from .registry import Item
from .source import Source

__all__ = ["NO_RESULT", "Call", "Node", "model_turns", "asked_order", "asked_call_ids",
           "answered_call_id", "tool_output", "events_from_turns", "decoded", "read_records"]


class _NoResult:
    """The result of a call whose result was not recorded (no ``tool_result`` event)."""

    def __repr__(self) -> str:
        return "NO_RESULT"


NO_RESULT: Any = _NoResult()


class Call(NamedTuple):
    """One tool call as a platform recorded it.

    ``result`` is what the tool returned (`NO_RESULT` when the record has none: the call
    gets no ``tool_result`` event); ``error``, when not None, is the error the call raised
    instead, and becomes the result with ``success`` false. ``id`` is the platform's call
    id (one is made from the call's position when it has none).
    """

    name: str
    arguments: Any = None
    result: Any = NO_RESULT
    error: Any = None
    id: str | None = None


class Node(NamedTuple):
    """One span or run, in start order: its id, its parent's id (``""`` for a root), its
    kind, for a tool node the call it stands for, and ``asks``: for a model node the ids
    of the calls it asked for, in its order; for a tool node the id of the call it
    answers (None when the trace does not say)."""

    id: str
    parent: str
    kind: Literal["model", "tool", "agent"] | str
    call: Any = None
    asks: Any = None


def model_turns(nodes: Sequence[Node], *,
                untraced: Literal["parent", "call"] = "parent") -> list[list[Any]]:
    """The calls of the tool nodes, grouped by model turn (``nodes`` in start order).

    ``untraced``: how tool nodes before any model node are grouped, one turn per parent
    (``"parent"``) or one turn per call (``"call"``).
    """
    kinds = {n.id: n.kind for n in nodes}
    parents = {n.id: n.parent for n in nodes}
    turns: list[tuple[Sequence[Any], list[Node]]] = []
    key: tuple[str, str] | None = None
    model = ""
    asked: Sequence[Any] = ()
    for n, node in enumerate(nodes):
        if node.kind == "model":
            model, asked = node.id, node.asks if isinstance(node.asks, (list, tuple)) else ()
        if node.kind != "tool" or _inside_tool(node.id, kinds, parents):
            continue
        alone = f"#{n}" if untraced == "call" else node.parent
        here = (model, "") if model else ("", alone)
        if here != key:
            turns.append((asked if model else (), []))
            key = here
        turns[-1][1].append(node)
    return [asked_order(members, asks) for asks, members in turns]


def asked_order(members: Sequence[Node], asked: Sequence[Any]) -> list[Any]:
    """The calls of one turn's tool nodes, those the model's ``asked`` ids name in its
    order, in the places the named ones took in start order; the others where they are."""
    rank: dict[Any, int] = {}
    for i, call_id in enumerate(asked):
        if isinstance(call_id, str):
            rank.setdefault(call_id, i)
    slots = [n for n, node in enumerate(members)
             if isinstance(node.asks, str) and node.asks in rank]
    calls = [node.call for node in members]
    for slot, n in zip(slots, sorted(slots, key=lambda n: rank[members[n].asks]),
                       strict=True):
        calls[slot] = members[n].call
    return calls


def _lc_fields(value: Any) -> Any:
    """A LangChain message as a dict of its fields (live, dumped, or serialized as
    ``{"lc": 1, "kwargs": {...}}``); anything else as it is."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    if isinstance(value, Mapping) and value.get("lc") == 1 and \
            isinstance(value.get("kwargs"), Mapping):
        return value["kwargs"]
    return value


def asked_call_ids(outputs: Any) -> tuple[str, ...]:
    """The ids of the tool calls a model node's outputs ask for, in the model's order: a
    LangChain ``LLMResult`` (``generations[][].message``, as LangSmith and MLflow record a
    chat model's run), an OpenAI completion (``choices[].message``), or a message itself
    (or under ``output``, as ``@traceable`` wraps a value).

    >>> asked_call_ids({"generations": [[{"message": {"lc": 1, "type": "constructor",
    ...     "kwargs": {"tool_calls": [{"id": "c2", "name": "a"}, {"id": "c1"}]}}}]]})
    ('c2', 'c1')
    """
    ids: list[str] = []
    for message in map(_lc_fields, _messages(_lc_fields(outputs))):
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        ids += [str(c["id"]) for c in calls if isinstance(c, Mapping) and c.get("id")] \
            if isinstance(calls, list) else []
    return tuple(ids)


def _messages(outputs: Any) -> list[Any]:
    if not isinstance(outputs, Mapping):
        return []
    messages = [outputs, outputs.get("output")]
    generations = outputs.get("generations")
    for group in generations if isinstance(generations, list) else ():
        messages += [g.get("message") for g in group if isinstance(g, Mapping)] \
            if isinstance(group, list) else []
    choices = outputs.get("choices")
    messages += [c.get("message") for c in choices if isinstance(c, Mapping)] \
        if isinstance(choices, list) else []
    return messages


def answered_call_id(outputs: Any) -> str | None:
    """The id of the tool call a tool node's outputs answer: a LangChain ``ToolMessage``'s
    ``tool_call_id`` (the message itself, or under ``output``); None when there is none.

    >>> answered_call_id({"output": {"type": "tool", "content": "ok", "tool_call_id": "c1"}})
    'c1'
    """
    for value in (outputs, outputs.get("output") if isinstance(outputs, Mapping) else None):
        message = _lc_fields(value)
        found = message.get("tool_call_id") if isinstance(message, Mapping) else None
        if isinstance(found, (str, int)) and found != "":
            return str(found)
    return None


def tool_output(value: Any) -> Any:
    """What the model read of a tool node's output: a LangChain ``ToolMessage`` is its
    ``content``, without the per-call ``tool_call_id`` and ``id`` that would make every
    result differ, whether live, dumped to a dict (MLflow's ``mlflow.spanOutputs``),
    serialized as ``{"lc": 1, "id": [..., "ToolMessage"], "kwargs": {...}}`` (LangSmith),
    or either as JSON text (OpenInference's ``output.value``). Anything else is kept as
    it is.

    >>> tool_output({"type": "tool", "content": "FAILED", "tool_call_id": "c1", "id": None})
    'FAILED'
    >>> tool_output({"lc": 1, "type": "constructor", "id": ["langchain", "ToolMessage"],
    ...              "kwargs": {"content": "FAILED", "tool_call_id": "c1"}})
    'FAILED'
    >>> tool_output('{"type": "tool", "content": [1], "tool_call_id": "c1"}')
    [1]
    >>> tool_output('{"type": "tool", "content": "ok"}')
    '{"type": "tool", "content": "ok"}'
    """
    found = decoded(value) if isinstance(value, str) and value[:1] == "{" else value
    fields = _lc_fields(found)
    if not isinstance(fields, Mapping) or "content" not in fields:
        return value
    kind = found.get("id") if fields is not found and isinstance(found, Mapping) else None
    if (isinstance(kind, list) and kind[-1:] == ["ToolMessage"]) or \
            (fields.get("type") == "tool" and "tool_call_id" in fields):
        return fields["content"]
    return value


def _inside_tool(node_id: str, kinds: dict[str, str], parents: dict[str, str]) -> bool:
    parent, seen = parents.get(node_id, ""), 0
    while parent and seen < 10_000:
        if kinds.get(parent) == "tool":
            return True
        parent, seen = parents.get(parent, ""), seen + 1
    return False


def events_from_turns(turns: Sequence[Sequence[Call]]) -> list[Event]:
    """The events of a run: per turn, ``turn_start``, its calls, their results,
    ``turn_end``. An empty turn gives no events."""
    events: list[Event] = []
    for t, calls in enumerate(turns):
        if not calls:
            continue
        ids = [c.id if c.id is not None else f"t{t}c{i}" for i, c in enumerate(calls)]
        events.append(turn_start())
        events += [tool_call(c.name, i, c.arguments) for c, i in zip(calls, ids, strict=True)]
        for c, i in zip(calls, ids, strict=True):
            if c.error is not None:
                events.append(tool_result(i, c.error, success=False))
            elif c.result is not NO_RESULT:
                events.append(tool_result(i, c.result))
        events.append(turn_end())
    return events


def decoded(value: Any) -> Any:
    """A JSON-encoded attribute value decoded (kept as it is when it is not JSON)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def read_records(source: Source, convert: Callable[[Any, str, bool], Trajectory]
                 ) -> Iterator[Item]:
    """The trajectories of an export: one record (a JSON object), a JSON array of them,
    or JSONL with one per line. ``convert(record, where, lenient)`` makes one trajectory
    (``where`` names the record: ``file``, ``file[i]``, ``file:line``) or raises
    `TrajectoryFormatError`, reported in place of that record."""
    def one(record: Any, where: str, lenient: bool) -> Item:
        try:
            return convert(record, where, lenient)
        except TrajectoryFormatError as err:
            return err

    if source.is_jsonl():
        with source.open() as fh:
            for n, line in iter_lines(fh):
                try:
                    rec, loose = decode(line.rstrip(b"\r\n"), source.name, line0=n - 1)
                except TrajectoryFormatError as err:
                    yield err
                    continue
                yield one(rec, f"{source.name}:{n}", loose)
        return
    try:
        doc, lenient = decode(source.read_bytes(), source.name)
    except TrajectoryFormatError as err:
        yield err
        return
    if isinstance(doc, list):
        for i, rec in enumerate(doc):
            yield one(rec, f"{source.name}[{i}]", lenient)
    else:
        yield one(doc, source.name, lenient)
