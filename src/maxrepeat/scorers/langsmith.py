"""The ``max-repeat`` grader as a LangSmith evaluator (the ``maxrepeat[langsmith]`` extra).

LangSmith records an agent run as a tree of runs. The tool calls are the runs of
``run_type="tool"`` below the evaluated run: the tool name is the run's ``name``, the
arguments its ``inputs``, the result its ``outputs`` (``{"output": value}``, as
``@traceable`` wraps a value, becomes the value) and a run with an ``error`` failed with
it. Runs are read in start order; the tool runs after one ``llm`` run, up to the next, form
its model turn, wherever they hang (`maxrepeat.readers._spantree`, the rule of the
``langsmith`` reader, the Phoenix scorer and the OpenTelemetry reader); a tool run
inside another tool run is left out. Inside a turn the calls are in the order the model
asked for them (the ``llm`` run's ``tool_calls`` ids, matched with each tool run's
``tool_call_id``), not in the order parallel threads started them; without ids, in start
order.

`max_repeat` is an evaluator for ``langsmith.evaluate(target, data=...,
evaluators=[max_repeat(config)])``: LangSmith hands it the target's run tree, and it
returns an ``EvaluationResult`` with ``key``, ``score`` (1.0 pass, 0.0 fail), the evidence
as ``comment`` and the config and figure as ``metadata``. LangSmith is imported only
when an evaluator is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ..readers.langsmith import _get, turns_from_run
from ._common import Graders, Verdict, load_graders, trajectory_from_turns
from ._common import verdict as grade_turns

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["turns_from_run", "trajectory_from_run", "verdict", "max_repeat"]

_EXTRA = "langsmith"


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
