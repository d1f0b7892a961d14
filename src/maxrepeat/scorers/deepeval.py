"""The ``max-repeat`` grader as a DeepEval metric (the ``maxrepeat[deepeval]`` extra).

``max_repeat(graders)`` returns a ``deepeval.metrics.BaseMetric`` that grades the trace
DeepEval recorded for a test case when there is one, else its ``tools_called``.

* **A trace** (``@observe`` spans, evaluated end to end by ``dataset.evals_iterator``
  or as a span's metric): the metric asks for it (``requires_trace``), and DeepEval hands
  it over as ``test_case._trace_dict``, the nested spans (``name``, ``type``, ``input``,
  ``output``, ``error``, ``children`` in start order). Each ``tool`` span is a call (its
  name the tool, its input the arguments, its output the result, its ``error`` a failed
  call's result); the calls after one ``llm`` span, up to the next, are one turn, whether
  they run under it or beside it (`_tree.model_turns`, as for Phoenix and LangSmith).
  Spans inside a tool span are that tool's work; a trace without ``llm`` spans has a turn
  per parent span.
* **No trace, or none with a tool span**: the ``tools_called`` (``ToolCall`` values:
  ``name``, ``input_parameters`` the arguments, ``output`` the result) are one flat list,
  without the model turns they came from, so **each call is one step** (one turn):
  parallel calls of one model response count as separate steps here, where ``maxrepeat
  grade`` of a log that keeps the turns counts them once. A call whose ``output`` is None
  has no result.

The metric is code: no model, no key. ``score`` is 1.0 when the run passes and 0.0 when
it loops (``threshold`` 1.0, so ``success`` is the verdict), ``reason`` is the evidence,
``score_breakdown`` holds the config and the figure, and ``verbose_logs`` the same as
JSON (what DeepEval's results keep). ``deepeval`` is imported only when a metric is made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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
from ._tree import Node, model_turns

__all__ = ["max_repeat", "trajectory_from_test_case", "trajectory_from_tools_called",
           "trajectory_from_trace_dict", "trace_dict_turns"]

_EXTRA = "deepeval"
_CLASS: type[Any] | None = None


def trajectory_from_tools_called(tools_called: Sequence[Any] | None) -> Trajectory:
    """The `Trajectory` of a test case's ``tools_called``: one turn per call."""
    turns = [[Call(str(t.name), t.input_parameters,
                   NO_RESULT if t.output is None else t.output)] for t in tools_called or ()]
    return trajectory_from_turns(turns, source="deepeval test case", format="deepeval")


#: DeepEval span types (``SpanApiType`` values) as `_tree` kinds
_KINDS = {"llm": "model", "tool": "tool", "agent": "agent"}


def _kind(span: Mapping[str, Any]) -> str:
    kind = span.get("type")
    return _KINDS.get(str(getattr(kind, "value", kind)), "other")


def _tool_call(span: Mapping[str, Any], span_id: str) -> Call:
    output, error = span.get("output"), span.get("error")
    return Call(str(span.get("name")), span.get("input"),
                NO_RESULT if output is None else output, error, span_id)


def trace_dict_turns(trace: Mapping[str, Any]) -> list[list[Call]]:
    """The tool calls of a DeepEval trace dict (``test_case._trace_dict``: a span and its
    ``children``, in start order), grouped by model turn with `_tree.model_turns`.

    A span's id is its position (``0.2.1``): the dict keeps no span ids.

    >>> def span(type, name="", **fields):
    ...     return {"type": type, "name": name, "children": [], **fields}
    >>> trace = span("agent", "agent", children=[
    ...     span("llm"), span("tool", "ls", input={"p": "."}, output="a"),
    ...     span("tool", "ls", input={"p": "b"}, error="no b"),
    ...     span("llm"), span("tool", "pwd")])
    >>> [[(c.name, c.error) for c in turn] for turn in trace_dict_turns(trace)]
    [[('ls', None), ('ls', 'no b')], [('pwd', None)]]
    """
    nodes: list[Node] = []
    stack: list[tuple[Mapping[str, Any], str, str]] = [(trace, "0", "")]
    while stack:  # depth first, children in order: the spans' start order
        span, span_id, parent = stack.pop()
        kind = _kind(span)
        call = _tool_call(span, span_id) if kind == "tool" else None
        nodes.append(Node(span_id, parent, kind, call))
        children = [c for c in span.get("children") or () if isinstance(c, Mapping)]
        stack += [(c, f"{span_id}.{i}", span_id) for i, c in reversed(list(enumerate(children)))]
    return model_turns(nodes)


def trajectory_from_trace_dict(trace: Mapping[str, Any]) -> Trajectory:
    """The `Trajectory` of a DeepEval trace dict (`trace_dict_turns`)."""
    return trajectory_from_turns(trace_dict_turns(trace), source="deepeval trace",
                                 format="deepeval")


def trajectory_from_test_case(test_case: Any) -> Trajectory:
    """The `Trajectory` of a test case: its trace when DeepEval recorded one with a tool
    span, else its ``tools_called`` (one turn per call)."""
    trace = getattr(test_case, "_trace_dict", None)
    if isinstance(trace, Mapping):
        found = trajectory_from_trace_dict(trace)
        if found.events:
            return found
    return trajectory_from_tools_called(getattr(test_case, "tools_called", None))


def _metric_class() -> type[Any]:
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    try:
        from deepeval.metrics import BaseMetric
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "deepeval") from exc

    class MaxRepeatMetric(BaseMetric):  # type: ignore[misc]
        """Fails a test case whose trace (else ``tools_called``) repeats an action (or a
        cycle of actions) more than ``max`` times in a row."""

        _required_params: list[Any] = []

        def __init__(self, configs: Sequence[Any], name: str) -> None:
            self.configs = list(configs)
            self.name = name
            self.threshold = 1.0
            self.include_reason = True
            self.async_mode = False
            self.strict_mode = False
            self.requires_trace = True  # DeepEval then sets test_case._trace_dict
            self.evaluation_cost = None
            self.verdict: Verdict | None = None

        def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            found = verdict(trajectory_from_test_case(test_case), self.configs)
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
    metrics=[...])``, ``assert_test``, ``dataset.evals_iterator(metrics=[...])`` or an
    ``@observe`` span's ``metrics`` (it grades the trace when DeepEval recorded one).

    ``graders`` is a `MaxRepeatConfig`, several, or a config file path (read now; a bad
    one raises `ConfigError`). Raises `MissingExtraError` without ``deepeval``.
    """
    configs = load_graders(graders)
    return _metric_class()(configs, name)
