"""The ``max-repeat`` grader as a LangSmith evaluator (the ``maxrepeat[langsmith]`` extra).

LangSmith records an agent run as a tree of runs. The tool calls are the runs of
``run_type="tool"`` below the evaluated run: the tool name is the run's ``name``, the
arguments its ``inputs``, the result its ``outputs`` (``{"output": value}``, as
``@traceable`` wraps a value, becomes the value) and a run with an ``error`` failed with
it. Runs are read in start order; the tool runs after one ``llm`` run, up to the next, form
its model turn, wherever they hang (`maxrepeat.scorers._tree`, the rule of the Phoenix
scorer and the OpenTelemetry reader); a tool run inside another tool run is left out.

`max_repeat` is an evaluator for ``langsmith.evaluate(target, data=...,
evaluators=[max_repeat(config)])``: LangSmith hands it the target's run tree, and it
returns an ``EvaluationResult`` with ``key``, ``score`` (1.0 pass, 0.0 fail), the evidence
as ``comment`` and the config and figure as ``metadata``. LangSmith is imported only
when an evaluator is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ._common import NO_RESULT, Call, Graders, Verdict, load_graders, trajectory_from_turns
from ._common import verdict as grade_turns
from ._tree import Node, model_turns

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["turns_from_run", "trajectory_from_run", "verdict", "max_repeat"]

_EXTRA = "langsmith"
_KINDS = {"llm": "model", "tool": "tool"}


def _get(run: Any, key: str) -> Any:
    if isinstance(run, Mapping):
        return run.get(key)
    return getattr(run, key, None)


def _start(run: Any) -> datetime:
    value = _get(run, "start_time")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            value = None
    if not isinstance(value, datetime):
        return datetime.min.replace(tzinfo=timezone.utc)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _tool_message(value: Any) -> Any:
    """What the model read of a LangChain tool run's output: a ``ToolMessage`` (live, or
    as LangSmith serializes it) is its ``content``, without the per-call id that would
    make every result differ.

    >>> _tool_message({"type": "tool", "content": "FAILED", "tool_call_id": "c1"})
    'FAILED'
    >>> _tool_message({"lc": 1, "type": "constructor", "id": ["langchain", "ToolMessage"],
    ...                "kwargs": {"content": "FAILED", "tool_call_id": "c1"}})
    'FAILED'
    """
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    if isinstance(value, Mapping):
        if value.get("type") == "tool" and "content" in value:
            return value["content"]
        kind, kwargs = value.get("id"), value.get("kwargs")
        if isinstance(kind, list) and kind[-1:] == ["ToolMessage"] and \
                isinstance(kwargs, Mapping) and "content" in kwargs:
            return kwargs["content"]
    return value


def _call(run: Any) -> Call:
    outputs = _get(run, "outputs")
    result: Any = NO_RESULT
    if isinstance(outputs, Mapping):
        result = outputs["output"] if set(outputs) == {"output"} else dict(outputs)
        result = _tool_message(result)
    elif outputs is not None:
        result = outputs
    inputs = _get(run, "inputs")
    return Call(name=str(_get(run, "name") or ""),
                arguments=dict(inputs) if isinstance(inputs, Mapping) else inputs,
                result=result, error=_get(run, "error") or None, id=str(_get(run, "id")))


def turns_from_run(run: Any) -> list[list[Call]]:
    """The tool calls below a LangSmith run, grouped by model turn.

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
                                    reversed(_get(run, "child_runs") or [])]
    while stack:  # depth first, in recorded order
        node, parent = stack.pop()
        found.append((node, parent))
        stack += [(child, str(_get(node, "id"))) for child in
                  reversed(_get(node, "child_runs") or [])]
    ordered = sorted(enumerate(found), key=lambda item: (_start(item[1][0]), item[0]))
    nodes = []
    for _, (node, parent) in ordered:
        kind = _KINDS.get(str(_get(node, "run_type")), "other")
        nodes.append(Node(str(_get(node, "id")), parent, kind,
                          _call(node) if kind == "tool" else None))
    return model_turns(nodes)


def trajectory_from_run(run: Any) -> Trajectory:
    """A `Trajectory` of the tool calls below a LangSmith run (`turns_from_run`)."""
    run_id = _get(run, "id")
    return trajectory_from_turns(turns_from_run(run), id=None if run_id is None else str(run_id))


def verdict(run: Any, graders: Graders) -> Verdict:
    """The `Verdict` of a LangSmith run tree: ``grade()`` of its events with each config."""
    return grade_turns(turns_from_run(run), graders)


def max_repeat(graders: Graders, *, key: str = "max_repeat") -> Callable[..., Any]:
    """A LangSmith evaluator: ``evaluator(run, example=None)`` grades the tool runs below
    ``run`` and returns an ``EvaluationResult`` (``key``; ``score`` 1.0 when every config
    passes, else 0.0; the evidence as ``comment``; the config, the largest repeat and
    each result as ``metadata``). Raises `MissingExtraError` without ``langsmith``.
    """
    configs = load_graders(graders)
    try:
        from langsmith.evaluation import EvaluationResult
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "langsmith") from exc

    def evaluator(run: Any, example: Any = None) -> Any:
        found = verdict(run, configs)
        return EvaluationResult(key=key, score=found.score, comment=found.evidence,
                                metadata=found.metadata)

    evaluator.__name__ = key
    return evaluator
