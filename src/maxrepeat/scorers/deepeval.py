"""The ``max-repeat`` grader as a DeepEval metric (the ``maxrepeat[deepeval]`` extra).

``max_repeat(graders)`` returns a ``deepeval.metrics.BaseMetric`` that grades a test
case's ``tools_called`` (``ToolCall`` values: ``name``, ``input_parameters`` the
arguments, ``output`` the result). DeepEval records the calls as one flat list, without
the model turns they came from, so **each call is one step** (one turn): parallel calls
of one model response count as separate steps here, where ``maxrepeat grade`` of a log
that keeps the turns counts them once. A call whose ``output`` is None has no result.

The metric is code: no model, no key. ``score`` is 1.0 when the run passes and 0.0 when
it loops (``threshold`` 1.0, so ``success`` is the verdict), ``reason`` is the evidence,
``score_breakdown`` holds the config and the figure, and ``verbose_logs`` the same as
JSON (what DeepEval's results keep). ``deepeval`` is imported only when a metric is made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ._common import (
    NO_RESULT,
    Call,
    Graders,
    Verdict,
    load_graders,
    trajectory_from_turns,
    verdict,
)

__all__ = ["max_repeat", "trajectory_from_tools_called"]

_EXTRA = "deepeval"
_CLASS: type[Any] | None = None


def trajectory_from_tools_called(tools_called: Sequence[Any] | None) -> Trajectory:
    """The `Trajectory` of a test case's ``tools_called``: one turn per call."""
    turns = [[Call(str(t.name), t.input_parameters,
                   NO_RESULT if t.output is None else t.output)] for t in tools_called or ()]
    return trajectory_from_turns(turns, source="deepeval test case", format="deepeval")


def _metric_class() -> type[Any]:
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    try:
        from deepeval.metrics import BaseMetric
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "deepeval") from exc

    class MaxRepeatMetric(BaseMetric):  # type: ignore[misc]
        """Fails a test case whose ``tools_called`` repeat an action (or a cycle of
        actions) more than ``max`` times in a row."""

        _required_params: list[Any] = []

        def __init__(self, configs: Sequence[Any], name: str) -> None:
            self.configs = list(configs)
            self.name = name
            self.threshold = 1.0
            self.include_reason = True
            self.async_mode = False
            self.strict_mode = False
            self.evaluation_cost = None
            self.verdict: Verdict | None = None

        def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            found = verdict(trajectory_from_tools_called(test_case.tools_called),
                            self.configs)
            self.verdict = found
            self.score = found.score
            self.success = found.passed
            self.reason = found.evidence
            self.error = None
            self.score_breakdown = {"occurrences": found.occurrences, "config": found.config}
            self.verbose_logs = json.dumps(self.score_breakdown)
            return found.score

        async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            return self.measure(test_case)

        def is_successful(self) -> bool:
            return bool(self.success)

        @property
        def __name__(self) -> str:  # what DeepEval's results call the metric
            return self.name

    _CLASS = MaxRepeatMetric
    return _CLASS


def max_repeat(graders: Graders, *, name: str = "Max Repeat") -> Any:
    """A DeepEval metric failing a test case whose agent repeats a tool call (or a cycle
    of calls) more than ``max`` times in a row; for ``deepeval.evaluate(test_cases,
    metrics=[...])`` or ``assert_test``.

    ``graders`` is a `MaxRepeatConfig`, several, or a config file path (read now; a bad
    one raises `ConfigError`). Raises `MissingExtraError` without ``deepeval``.
    """
    configs = load_graders(graders)
    return _metric_class()(configs, name)
