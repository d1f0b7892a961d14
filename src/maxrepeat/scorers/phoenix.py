"""The ``max-repeat`` grader over Arize Phoenix traces (the ``maxrepeat[phoenix]`` extra).

Phoenix stores OpenInference spans. A trace's tool calls are its spans whose
``openinference.span.kind`` is ``TOOL``: the tool name is ``tool.name`` (else the span
name), the arguments ``input.value`` (decoded when JSON; else ``tool.parameters``), the
result ``output.value`` as recorded (a LangChain ``ToolMessage``'s JSON its ``content``),
and a span with status ``ERROR`` failed with its status message. Spans are read in
start-time order; the tool spans after one ``LLM`` span, up to the next, form its model
turn (before any ``LLM`` span, one turn per parent span; `maxrepeat.readers._spantree`,
the rule of the ``openinference`` reader). A ``TOOL`` span inside another ``TOOL`` span is
the outer tool's work, not a call of the model, and is left out. Inside a turn the calls
are in the order the model asked for them (each ``tool_call.id`` of the ``LLM`` span's
output, matched with a ``TOOL`` span's ``tool.id``), not in the order parallel threads
started them; without ids, in start order.

`max_repeat` is a Phoenix ``Evaluator`` (``phoenix.evals``) over one trace's spans; its
``Score`` is ``1.0``/``"pass"`` or ``0.0``/``"fail"``, with the evidence as explanation
and the config and figure as metadata. `annotate_traces` reads a project's spans from a
Phoenix server, scores each trace and logs the score as an annotation of the trace's root
span (``annotator_kind="CODE"``), where Phoenix's UI shows it beside its other evals.
Phoenix is imported only inside these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ..readers.openinference import root_of, traces_of, turns_from_spans
from ..readers.openinference import span_id as _span_id
from ..readers.openinference import span_kind as _kind
from ._common import Graders, Verdict, load_graders, trajectory_from_turns
from ._common import verdict as grade_turns

if TYPE_CHECKING:
    from phoenix.client import Client
    from phoenix.evals import Evaluator

__all__ = ["turns_from_spans", "trajectory_from_spans", "verdict", "max_repeat",
           "annotate_traces", "traces_of", "traces_frame"]

_EXTRA = "phoenix"


def trajectory_from_spans(spans: Iterable[Mapping[str, Any]], *,
                          id: str | None = None) -> Trajectory:
    """A `Trajectory` of one trace's spans (`turns_from_spans`)."""
    return trajectory_from_turns(turns_from_spans(spans), id=id, source=id)


def verdict(spans: Iterable[Mapping[str, Any]], graders: Graders) -> Verdict:
    """The `Verdict` of one trace's spans: ``grade()`` of their events with each config."""
    return grade_turns(turns_from_spans(spans), graders)


def traces_frame(spans: Iterable[Mapping[str, Any]]) -> Any:
    """A pandas ``DataFrame`` with one row per trace, for ``phoenix.evals``'
    ``evaluate_dataframe``: ``span_id`` (the trace's root span, where
    ``to_annotation_dataframe`` puts the score), ``trace_id`` and ``spans`` (the trace's
    span dicts, `max_repeat`'s input). Evaluators' own traces are left out."""
    from importlib import import_module

    pd: Any = import_module("pandas")  # phoenix.evals' own dependency (untyped)
    rows = []
    for trace_id, members in traces_of(spans).items():
        root = root_of(members)
        if _kind(root) != "EVALUATOR":
            rows.append({"span_id": _span_id(root), "trace_id": trace_id,
                         "spans": [dict(s) for s in members]})
    return pd.DataFrame(rows, columns=["span_id", "trace_id", "spans"])


def _label(found: Verdict) -> str:
    return "pass" if found.passed else "fail"


def max_repeat(graders: Graders, *, name: str = "max_repeat") -> Evaluator:
    """A Phoenix evaluator (``phoenix.evals.Evaluator``, kind ``"code"``) grading one
    trace: its input is ``{"spans": [...]}``, the trace's span dicts.

    ``evaluator.evaluate({"spans": spans})`` returns one ``Score`` named ``name``:
    ``score`` 1.0 and ``label`` ``"pass"`` when every config passes, else 0.0 and
    ``"fail"``; ``explanation`` is the evidence, ``metadata`` the config, the largest
    repeat (``occurrences``) and each result. Raises `MissingExtraError` without
    ``arize-phoenix-evals``.
    """
    configs = load_graders(graders)
    try:
        from phoenix.evals import Evaluator, Score
        from pydantic import BaseModel
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "arize-phoenix-evals") from exc

    class TraceSpans(BaseModel):
        spans: list[dict[str, Any]]

    class MaxRepeat(Evaluator):  # type: ignore[misc]  # phoenix is not type-checked here
        """Phoenix's view of the grader: one ``Score`` per trace."""

        def _evaluate(self, eval_input: Mapping[str, Any]) -> list[Score]:
            found = verdict(eval_input["spans"], configs)
            return [Score(name=self.name, score=found.score,
                          label=_label(found),
                          explanation=found.evidence, metadata=found.metadata,
                          kind="code", direction="maximize")]

    return MaxRepeat(name=name, kind="code", direction="maximize", input_schema=TraceSpans)


def annotate_traces(client: Client, project: str, graders: Graders, *,
                    name: str = "max_repeat", limit: int = 10_000,
                    log: bool = True) -> dict[str, Verdict]:
    """Grade every trace of a Phoenix project and log each verdict as an annotation.

    Reads the project's spans (at most ``limit``) with ``client.spans.get_spans``, grades
    each trace's spans (the verdict `max_repeat` scores) and, unless ``log`` is false,
    logs the score as a span annotation named ``name`` on the trace's root span with
    ``client.spans.log_span_annotations``. Traces whose root is an ``EVALUATOR`` span
    (evaluators' own, as ``phoenix.evals`` traces them) are left out. Returns the
    verdicts by trace id.
    """
    configs = load_graders(graders)
    spans = client.spans.get_spans(project_identifier=project, limit=limit)
    verdicts: dict[str, Verdict] = {}
    annotations: list[Any] = []
    for trace_id, members in traces_of(spans).items():
        root = root_of(members)
        if _kind(root) == "EVALUATOR":  # an evaluator's own trace (phoenix.evals traces)
            continue
        found = verdicts[trace_id] = verdict(members, configs)
        annotations.append({
            "name": name, "annotator_kind": "CODE", "span_id": _span_id(root),
            "result": {"label": _label(found), "score": found.score,
                       "explanation": found.evidence},
            "metadata": found.metadata})
    if log and annotations:
        client.spans.log_span_annotations(span_annotations=annotations, sync=True)
    return verdicts
