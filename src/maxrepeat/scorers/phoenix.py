"""The ``max-repeat`` grader over Arize Phoenix traces (the ``maxrepeat[phoenix]`` extra).

Phoenix stores OpenInference spans. A trace's tool calls are its spans whose
``openinference.span.kind`` is ``TOOL``: the tool name is ``tool.name`` (else the span
name), the arguments ``input.value`` (decoded when JSON; else ``tool.parameters``), the
result ``output.value`` as recorded, and a span with status ``ERROR`` failed with its
status message. Spans are read in start-time order; the tool spans after one ``LLM`` span,
up to the next, form its model turn (before any ``LLM`` span, one turn per parent span;
`maxrepeat.scorers._tree`, the rule the OpenTelemetry reader applies to GenAI spans). A ``TOOL`` span inside another ``TOOL`` span is the outer tool's work, not a call
of the model, and is left out.

`max_repeat` is a Phoenix ``Evaluator`` (``phoenix.evals``) over one trace's spans; its
``Score`` is ``1.0``/``"pass"`` or ``0.0``/``"fail"``, with the evidence as explanation
and the config and figure as metadata. `annotate_traces` reads a project's spans from a
Phoenix server, scores each trace and logs the score as an annotation of the trace's root
span (``annotator_kind="CODE"``), where Phoenix's UI shows it beside its other evals.
Phoenix is imported only inside these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ._common import NO_RESULT, Call, Graders, Verdict, load_graders, trajectory_from_turns
from ._common import verdict as grade_turns
from ._tree import Node, model_turns

if TYPE_CHECKING:
    from phoenix.client import Client
    from phoenix.evals import Evaluator

__all__ = ["turns_from_spans", "trajectory_from_spans", "verdict", "max_repeat",
           "annotate_traces", "traces_of", "traces_frame"]

_EXTRA = "phoenix"
_MISSING = object()


def _attribute(attributes: Mapping[str, Any], key: str) -> Any:
    """An attribute by its dotted OpenInference key, whether the span stores it flat
    (``{"tool.name": ...}``) or nested (``{"tool": {"name": ...}}``)."""
    if key in attributes:
        return attributes[key]
    node: Any = attributes
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        import json

        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _kind(span: Mapping[str, Any]) -> str:
    attributes = span.get("attributes") or {}
    kind = _attribute(attributes, "openinference.span.kind")
    if kind is _MISSING:
        kind = span.get("span_kind")
    return str(kind).upper() if kind is not None else ""


def _span_id(span: Mapping[str, Any]) -> str:
    context = span.get("context") or {}
    return str(context.get("span_id") or span.get("span_id") or span.get("id") or "")


def _start(span: Mapping[str, Any]) -> datetime:
    value = span.get("start_time")
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return datetime.min


def _call(span: Mapping[str, Any]) -> Call:
    attributes = span.get("attributes") or {}
    name = _attribute(attributes, "tool.name")
    arguments = _attribute(attributes, "input.value")
    if arguments is _MISSING:
        arguments = _attribute(attributes, "tool.parameters")
    output = _attribute(attributes, "output.value")
    error = None
    if str(span.get("status_code", "")).upper() == "ERROR":
        error = span.get("status_message") or "ERROR"
    return Call(name=str(name) if name is not _MISSING else str(span.get("name", "")),
                arguments=None if arguments is _MISSING else _decoded(arguments),
                result=NO_RESULT if output is _MISSING else output, error=error,
                id=_span_id(span) or None)


def turns_from_spans(spans: Iterable[Mapping[str, Any]]) -> list[list[Call]]:
    """The tool calls of one trace's OpenInference spans, grouped by model turn.

    ``spans`` are Phoenix span dicts (``phoenix.client.Client().spans.get_spans(...)``:
    ``context.span_id``, ``parent_id``, ``start_time``, ``status_code``, ``attributes``).

    >>> def span(sid, kind, start, parent="agent", **attributes):
    ...     return {"context": {"span_id": sid}, "parent_id": parent, "status_code": "OK",
    ...             "start_time": f"2026-01-01T00:00:{start:02d}+00:00",
    ...             "attributes": {"openinference.span.kind": kind, **attributes}}
    >>> turns = turns_from_spans([
    ...     span("m1", "LLM", 1),
    ...     span("t1", "TOOL", 2, **{"tool.name": "bash", "input.value": '{"cmd": "ls"}',
    ...                              "output.value": "a.txt"}),
    ...     span("t2", "TOOL", 3, **{"tool.name": "bash", "input.value": '{"cmd": "pwd"}'}),
    ...     span("m2", "LLM", 4)])
    >>> [[(c.name, c.arguments, c.result) for c in turn] for turn in turns]
    [[('bash', {'cmd': 'ls'}, 'a.txt'), ('bash', {'cmd': 'pwd'}, NO_RESULT)]]
    """
    ordered = [s for _, s in sorted(enumerate(spans), key=lambda i: (_start(i[1]), i[0]))]
    kinds = {"LLM": "model", "TOOL": "tool"}
    return model_turns([Node(_span_id(s), str(s.get("parent_id") or ""),
                             kinds.get(_kind(s), "other"),
                             _call(s) if _kind(s) == "TOOL" else None) for s in ordered])


def trajectory_from_spans(spans: Iterable[Mapping[str, Any]], *,
                          id: str | None = None) -> Trajectory:
    """A `Trajectory` of one trace's spans (`turns_from_spans`)."""
    return trajectory_from_turns(turns_from_spans(spans), id=id, source=id)


def verdict(spans: Iterable[Mapping[str, Any]], graders: Graders) -> Verdict:
    """The `Verdict` of one trace's spans: ``grade()`` of their events with each config."""
    return grade_turns(turns_from_spans(spans), graders)


def traces_of(spans: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Spans grouped by trace id, in the order the traces first appear."""
    traces: dict[str, list[Mapping[str, Any]]] = {}
    for span in spans:
        context = span.get("context") or {}
        traces.setdefault(str(context.get("trace_id", "")), []).append(span)
    return traces


def traces_frame(spans: Iterable[Mapping[str, Any]]) -> Any:
    """A pandas ``DataFrame`` with one row per trace, for ``phoenix.evals``'
    ``evaluate_dataframe``: ``span_id`` (the trace's root span, where
    ``to_annotation_dataframe`` puts the score), ``trace_id`` and ``spans`` (the trace's
    span dicts, `max_repeat`'s input). Evaluators' own traces are left out."""
    from importlib import import_module

    pd: Any = import_module("pandas")  # phoenix.evals' own dependency (untyped)
    rows = []
    for trace_id, members in traces_of(spans).items():
        root = _root(members)
        if _kind(root) != "EVALUATOR":
            rows.append({"span_id": _span_id(root), "trace_id": trace_id,
                         "spans": [dict(s) for s in members]})
    return pd.DataFrame(rows, columns=["span_id", "trace_id", "spans"])


def _root(spans: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    ids = {_span_id(s) for s in spans}
    roots = [s for s in spans if str(s.get("parent_id") or "") not in ids]
    return min(roots or spans, key=_start)


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
        root = _root(members)
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
