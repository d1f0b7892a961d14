"""LangSmith run trees as LangSmith exports them: a ``Run`` with its ``child_runs``
(``Client.read_run(run_id, load_child_runs=True).json()``, what ``evaluate`` hands an
evaluator), or a ``RunTree`` taken when a ``@traceable`` run ends, as the ``Run`` schema
serializes it.

Layouts: one run tree (a JSON object with ``run_type`` and ``child_runs``), a JSON array
of run trees, or JSONL with one per line. One trajectory per root run, id its ``id``.

What marks a model response: a run of ``run_type="llm"``. Runs are read depth first and
ordered by ``start_time``; the ``tool`` runs after one ``llm`` run, up to the next, form
its turn, wherever they hang (before any ``llm`` run, one turn per parent run;
`maxrepeat.readers._spantree`, the rule of the LangSmith scorer). A tool run inside
another tool run is that tool's own work and is left out.

Order inside a turn: the order in which the model asked for the calls, when the trace
says it, else start order. A LangChain agent runs a response's calls in parallel, so
their runs start in thread order; the ``llm`` run's outputs hold the ``AIMessage`` with
its ``tool_calls`` (``generations[][].message``, or OpenAI's ``choices[].message``), each
with an id, and each tool run names the call it answers (``extra.tool_call_id``, or the
``tool_call_id`` of the ``ToolMessage`` it returned). Runs whose call id is not among the
model's keep their places.

Read as follows: tool name the run's ``name``; call id its ``id``; arguments its
``inputs``; result its ``outputs`` (``{"output": value}``, as ``@traceable`` wraps a
value, becomes the value; a LangChain ``ToolMessage`` its ``content``:
`maxrepeat.readers._spantree.tool_output`). Error flag: the run's ``error``, which
becomes the result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import first_json_char, strip_bom
from ._spantree import (
    NO_RESULT,
    Call,
    Node,
    answered_call_id,
    asked_call_ids,
    events_from_turns,
    model_turns,
    read_records,
    tool_output,
)
from ._toolevents import type_name

__all__ = ["READER", "turns_from_run"]

NAME = "langsmith"
_KINDS = {"llm": "model", "tool": "tool"}


def _get(run: Any, key: str) -> Any:
    if isinstance(run, Mapping):
        return run.get(key)
    return getattr(run, key, None)


def _children(run: Any) -> list[Any]:
    children = _get(run, "child_runs")
    return list(children) if isinstance(children, (list, tuple)) else []


def _start(run: Any) -> datetime:
    value = _get(run, "start_time")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            value = None
    if not isinstance(value, datetime):
        return datetime.min.replace(tzinfo=UTC)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _answers(run: Any) -> str | None:
    """The id of the tool call a tool run answers (``extra.tool_call_id``, else its
    ``ToolMessage``'s), None when the run does not say."""
    extra = _get(run, "extra")
    found = extra.get("tool_call_id") if isinstance(extra, Mapping) else None
    return str(found) if found else answered_call_id(_get(run, "outputs"))


def _call(run: Any) -> Call:
    outputs = _get(run, "outputs")
    result: Any = NO_RESULT
    if isinstance(outputs, Mapping):
        result = outputs["output"] if set(outputs) == {"output"} else dict(outputs)
        result = tool_output(result)
    elif outputs is not None:
        result = outputs
    inputs = _get(run, "inputs")
    return Call(name=str(_get(run, "name") or ""),
                arguments=dict(inputs) if isinstance(inputs, Mapping) else inputs,
                result=result, error=_get(run, "error") or None, id=str(_get(run, "id")))


def turns_from_run(run: Any) -> list[list[Call]]:
    """The tool calls below a LangSmith run, grouped by model turn, each turn's calls in
    the order the model asked for them when the trace says it, else in start order.

    ``run`` is a ``langsmith.schemas.Run`` or ``RunTree`` with its ``child_runs`` (what
    ``evaluate`` hands an evaluator; ``Client.read_run(id, load_child_runs=True)``), or
    the same as a dict.

    >>> run = {"id": "a", "name": "agent", "run_type": "chain", "child_runs": [
    ...     {"id": "m", "run_type": "llm", "start_time": "2026-01-01T00:00:01"},
    ...     {"id": "t", "name": "bash", "run_type": "tool", "inputs": {"cmd": "ls"},
    ...      "outputs": {"output": "a.txt"}, "start_time": "2026-01-01T00:00:02"}]}
    >>> [[(c.name, c.arguments, c.result) for c in turn] for turn in turns_from_run(run)]
    [[('bash', {'cmd': 'ls'}, 'a.txt')]]
    """
    found: list[tuple[Any, str]] = []
    stack: list[tuple[Any, str]] = [(child, str(_get(run, "id"))) for child in
                                    reversed(_children(run))]
    while stack:  # depth first, in recorded order
        node, parent = stack.pop()
        found.append((node, parent))
        stack += [(child, str(_get(node, "id"))) for child in reversed(_children(node))]
    ordered = sorted(enumerate(found), key=lambda item: (_start(item[1][0]), item[0]))
    nodes = []
    for _, (node, parent) in ordered:
        kind = _KINDS.get(str(_get(node, "run_type")), "other")
        asks = _answers(node) if kind == "tool" else \
            asked_call_ids(_get(node, "outputs")) if kind == "model" else None
        nodes.append(Node(str(_get(node, "id")), parent, kind,
                          _call(node) if kind == "tool" else None, asks))
    return model_turns(nodes)


def _trajectory(run: Any, where: str, lenient: bool) -> Trajectory:
    if not isinstance(run, Mapping):
        raise TrajectoryFormatError(where, f"a run must be an object (got {type_name(run)})")
    children = run.get("child_runs")
    if children is not None and not isinstance(children, list):
        raise TrajectoryFormatError(where, "child_runs must be an array "
                                    f"(got {type_name(children)})")
    run_id = run.get("id")
    return Trajectory(events=events_from_turns(turns_from_run(run)),
                      id=None if run_id is None else str(run_id), source=where,
                      format=NAME, lenient=lenient)


def _read(source: Source) -> Iterator[Item]:
    yield from read_records(source, _trajectory)


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) not in (b"{", b"["):
        return 0
    text = strip_bom(head)[:65536]
    if b'"child_runs"' not in text or b'"run_type"' not in text:
        return 0
    return 92 if b'"dotted_order"' in text or b'"trace_id"' in text else 80


READER = Reader(
    name=NAME,
    description="LangSmith run trees (Run JSON with child_runs; tool runs, turns from "
    "llm runs; one trajectory per root run)",
    extensions=(".json", ".jsonl"),
    markers=(b'"child_runs"',),
    top=92,
    order=150,
    sniff=_sniff,
    read=_read,
)
