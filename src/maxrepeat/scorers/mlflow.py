"""The ``max-repeat`` grader as an MLflow GenAI scorer (the ``maxrepeat[mlflow]`` extra).

``max_repeat(graders)`` returns a scorer (``mlflow.genai.scorers.scorer``) that grades a
trace in ``mlflow.genai.evaluate``: its ``TOOL`` spans are the calls (the span name is the
tool, its inputs the arguments, its outputs the result, a LangChain ``ToolMessage`` its
``content``; a span with status ``ERROR`` is a failed call whose result is the error), and
a model call (an ``LLM`` or ``CHAT_MODEL`` span) starts a new turn, so the calls made
after one model call and before the next are one step, whether they run under the model
span or beside it under the agent span (a trace without model spans has one turn per call;
`maxrepeat.readers._spantree`, the rule of the ``mlflow-trace`` reader). Spans inside a
``TOOL`` span belong to that tool (a sub-agent behind a tool is not graded here). The
score is an ``mlflow.entities.Feedback``: value ``True`` when the trace passes and
``False`` when it loops, the evidence as the rationale, the config, the figure and the
status in the metadata.

``mlflow`` is imported only when a scorer is made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ..readers._spantree import asked_call_ids, tool_output
from ..readers.mlflow_trace import tool_call_id
from ._common import Call, Graders, Verdict, load_graders, trajectory_from_turns, verdict
from ._tree import Node, model_turns

if TYPE_CHECKING:
    from mlflow.entities import Feedback
    from mlflow.genai.scorers import Scorer

__all__ = ["max_repeat", "trace_turns", "trajectory_from_trace", "feedback"]

_EXTRA = "mlflow"
#: span types that are one model call: each starts a turn
_MODEL_SPANS = frozenset({"LLM", "CHAT_MODEL"})


def _error(span: Any) -> str | None:
    """The error of a failed span (status ERROR): its exception message, else the
    status description."""
    status = getattr(span, "status", None)
    code = getattr(getattr(status, "status_code", None), "value",
                   getattr(status, "status_code", None))
    if code != "ERROR":
        return None
    for event in getattr(span, "events", None) or ():
        if getattr(event, "name", None) == "exception":
            message = (getattr(event, "attributes", None) or {}).get("exception.message")
            if message:
                return str(message)
    return str(getattr(status, "description", "") or "error")


def trace_turns(spans: Sequence[Any]) -> list[list[Call]]:
    """The tool calls of a trace's spans (``trace.data.spans``), grouped by turn.

    In start order, the ``TOOL`` spans after one model span (``LLM``, ``CHAT_MODEL``),
    up to the next, form its turn; spans under a ``TOOL`` span are part of that tool;
    ``TOOL`` spans before any model span (the model calls were not traced) are one turn
    each (`maxrepeat.readers._spantree`, the rule of the ``mlflow-trace`` reader).
    Inside a turn the calls are in the order the model asked for them when the trace says
    it (the model span's output ``tool_calls`` ids, matched with each ``TOOL`` span's
    ``tool_call_id``), else in start order.
    """
    nodes = []
    for span in sorted(spans, key=lambda s: (s.start_time_ns, s.span_id)):
        kind = span.span_type
        call = None
        asks: Any = asked_call_ids(span.outputs) if kind in _MODEL_SPANS else None
        if kind == "TOOL":
            call = Call(span.name, span.inputs, tool_output(span.outputs), _error(span),
                        span.span_id)
            asks = tool_call_id(span.get_attribute("tool_call_id"), span.outputs)
        nodes.append(Node(str(span.span_id), str(span.parent_id or ""),
                          "model" if kind in _MODEL_SPANS else "tool" if kind == "TOOL"
                          else "other", call, asks))
    return model_turns(nodes, untraced="call")


def _trace_id(trace: Any) -> str | None:
    info = getattr(trace, "info", None)
    found = getattr(info, "trace_id", None) or getattr(info, "request_id", None)
    return str(found) if found is not None else None


def trajectory_from_trace(trace: Any) -> Trajectory:
    """The `Trajectory` of an ``mlflow.entities.Trace`` (id: the trace id)."""
    trace_id = _trace_id(trace)
    return trajectory_from_turns(trace_turns(trace.data.spans), id=trace_id,
                                 source=f"mlflow trace {trace_id}", format="mlflow")


def feedback(found: Verdict, name: str = "max_repeat") -> Feedback:
    """The ``Feedback`` of a `Verdict`: value ``passed``, rationale the evidence, and in
    the metadata (strings, as MLflow stores them) ``config`` (JSON), ``occurrences``,
    ``status``."""
    try:
        from mlflow.entities import Feedback
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "mlflow") from exc
    status = "ok" if all(r.status == "ok" for r in found.results) else "error"
    return Feedback(name=name, value=found.passed, rationale=found.evidence,
                    metadata={"config": json.dumps(found.config),
                              "occurrences": str(found.occurrences), "status": status})


def max_repeat(graders: Graders, *, name: str = "max_repeat") -> Scorer:
    """An MLflow scorer failing a trace whose agent repeats a tool action (or a cycle of
    actions) more than ``max`` times in a row: a ``Scorer`` for
    ``mlflow.genai.evaluate(data=traces, scorers=[...])``.

    ``graders`` is a `MaxRepeatConfig`, several, or a config file path (read now; a bad
    one raises `ConfigError`). Raises `MissingExtraError` without ``mlflow``.
    """
    configs = load_graders(graders)
    try:
        from mlflow.genai.scorers import scorer
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "mlflow") from exc

    def max_repeat_score(trace: Any) -> Feedback:
        return feedback(verdict(trajectory_from_trace(trace), configs), name)

    made: Scorer = scorer(max_repeat_score, name=name)
    return made
