"""Phoenix / OpenInference spans as Phoenix exports them: the span JSON of its REST API
(``GET /v1/projects/{project}/spans``, ``{"data": [...]}``) and of its client
(``phoenix.client.Client().spans.get_spans(...)``, the shape ``log_spans`` takes back),
or ``get_spans_dataframe(...)`` written with ``to_json(orient="records")``.

Phoenix exports spans, not OTLP: OpenTelemetry goes in (OTLP, read by the ``otel``
reader when it has GenAI attributes), and Phoenix serves each span back as an object
with ``context.trace_id``, ``context.span_id``, ``parent_id``, ``span_kind``,
``start_time``, ``status_code``, ``status_message`` and flat OpenInference
``attributes`` (``openinference.span.kind``, ``tool.name``, ``input.value``,
``output.value``).

Layouts: a JSON array of spans, a REST page ``{"data": [...]}``, or JSONL with one span
per line (dataframe records: ``context.span_id``, ``attributes.tool.name`` columns). One
trajectory per trace, id its ``trace_id``, in the order the traces first appear; a trace
whose root is an ``EVALUATOR`` span (an evaluator's own) is left out.

What marks a model response: an ``LLM`` span. Spans are ordered by ``start_time``; the
``TOOL`` spans after one ``LLM`` span, up to the next, form its turn (before any, one
turn per parent span; `maxrepeat.readers._spantree`, the rule of the Phoenix scorer). A
``TOOL`` span inside another ``TOOL`` span is left out.

Order inside a turn: the order in which the model asked for the calls, when the trace
says it, else start order (parallel calls start in thread order). The ``LLM`` span's
``llm.output_messages.<i>.message.tool_calls.<j>.tool_call.id`` (flat, nested, or as the
dataframe's lists) lists the calls, and a ``TOOL`` span's ``tool.id`` names the call it
ran; spans without a known id keep their places.

Read as follows: tool name ``tool.name`` (else the span name); call id the span id;
arguments ``input.value`` (decoded when JSON; else ``tool.parameters``); result
``output.value`` as recorded (none when absent; a LangChain ``ToolMessage``'s JSON, as
OpenInference's LangChain instrumentor records a tool's output, is its ``content``:
`maxrepeat.readers._spantree.tool_output`). Error flag: ``status_code`` ``ERROR``,
the status message becoming the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import decode, first_json_char, iter_lines, strip_bom
from ._spantree import (
    NO_RESULT,
    Call,
    Node,
    decoded,
    events_from_turns,
    model_turns,
    tool_output,
)
from ._toolevents import type_name

__all__ = ["READER", "turns_from_spans", "traces_of", "root_of", "span_kind", "span_id"]

NAME = "openinference"
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


def _attrs(span: Mapping[str, Any]) -> Mapping[str, Any]:
    attributes = span.get("attributes")
    return attributes if isinstance(attributes, Mapping) else {}


def _context(span: Mapping[str, Any]) -> Mapping[str, Any]:
    context = span.get("context")
    return context if isinstance(context, Mapping) else {}


def _kind(span: Mapping[str, Any]) -> str:
    attributes = _attrs(span)
    kind = _attribute(attributes, "openinference.span.kind")
    if kind is _MISSING:
        kind = span.get("span_kind")
    return str(kind).upper() if kind is not None else ""


def _span_id(span: Mapping[str, Any]) -> str:
    context = _context(span)
    return str(context.get("span_id") or span.get("span_id") or span.get("id") or "")


def _start(span: Mapping[str, Any]) -> datetime:
    """When a span started (naive times taken as UTC, so that any two compare)."""
    value = span.get("start_time")
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value))
        except ValueError:
            value = datetime.min
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _call(span: Mapping[str, Any]) -> Call:
    attributes = _attrs(span)
    name = _attribute(attributes, "tool.name")
    arguments = _attribute(attributes, "input.value")
    if arguments is _MISSING:
        arguments = _attribute(attributes, "tool.parameters")
    output = _attribute(attributes, "output.value")
    error = None
    if str(span.get("status_code", "")).upper() == "ERROR":
        error = span.get("status_message") or "ERROR"
    return Call(name=str(name) if name is not _MISSING else str(span.get("name", "")),
                arguments=None if arguments is _MISSING else decoded(arguments),
                result=NO_RESULT if output is _MISSING else tool_output(output), error=error,
                id=_span_id(span) or None)


def _indexed(attributes: Mapping[str, Any], key: str) -> list[Any]:
    """The items of an OpenInference list attribute, in index order, however it is
    stored: flat (``key.0.rest``, each item the mapping of its ``rest`` keys), as a list,
    or as a mapping by index."""
    found = _attribute(attributes, key)
    if isinstance(found, list):
        return found
    items: dict[int, dict[str, Any]] = {}
    if isinstance(found, Mapping):
        items = {int(k): v for k, v in found.items() if str(k).isdecimal()}
    for name, value in attributes.items():
        index, _, rest = str(name).removeprefix(f"{key}.").partition(".")
        if str(name).startswith(f"{key}.") and index.isdecimal() and rest:
            items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]


def _asked(span: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids of the tool calls an ``LLM`` span's output messages ask for, in order.

    >>> _asked({"attributes": {
    ...     "llm.output_messages.0.message.tool_calls.1.tool_call.id": "c2",
    ...     "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1"}})
    ('c1', 'c2')
    """
    ids: list[str] = []
    for message in _indexed(_attrs(span), "llm.output_messages"):
        calls = _indexed(message, "message.tool_calls") if isinstance(message, Mapping) else []
        for call in calls:
            found = _attribute(call, "tool_call.id") if isinstance(call, Mapping) else None
            ids += [str(found)] if isinstance(found, (str, int)) else []
    return tuple(ids)


def _node(span: Mapping[str, Any]) -> Node:
    kind = {"LLM": "model", "TOOL": "tool"}.get(_kind(span), "other")
    tool_id = _attribute(_attrs(span), "tool.id")
    asks = _asked(span) if kind == "model" else \
        str(tool_id) if kind == "tool" and isinstance(tool_id, (str, int)) else None
    return Node(_span_id(span), str(span.get("parent_id") or ""), kind,
                _call(span) if kind == "tool" else None, asks)


def turns_from_spans(spans: Iterable[Mapping[str, Any]]) -> list[list[Call]]:
    """The tool calls of one trace's OpenInference spans, grouped by model turn, each
    turn's calls in the order the model asked for them when the trace says it, else in
    start order.

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
    return model_turns([_node(s) for s in ordered])


def traces_of(spans: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Spans grouped by trace id, in the order the traces first appear."""
    traces: dict[str, list[Mapping[str, Any]]] = {}
    for span in spans:
        context = _context(span)
        traces.setdefault(str(context.get("trace_id", "")), []).append(span)
    return traces


def root_of(spans: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The root span of one trace's spans (the earliest whose parent is not among them)."""
    ids = {_span_id(s) for s in spans}
    roots = [s for s in spans if str(s.get("parent_id") or "") not in ids]
    return min(roots or spans, key=_start)


span_kind = _kind
span_id = _span_id


def _nested(span: Mapping[str, Any]) -> Mapping[str, Any]:
    """A dataframe record (``context.span_id``, ``attributes.tool.name`` columns) as the
    span object the REST API serves; a span object as it is."""
    if "context.span_id" not in span:
        return span
    out = {k: v for k, v in span.items() if "." not in k}
    out["context"] = {"span_id": span.get("context.span_id"),
                      "trace_id": span.get("context.trace_id")}
    out["attributes"] = {k[len("attributes."):]: v for k, v in span.items()
                         if k.startswith("attributes.") and v is not None}
    return out


def _spans_of(doc: Any, where: str) -> list[Mapping[str, Any]]:
    items = doc.get("data") if isinstance(doc, Mapping) and "data" in doc else doc
    if isinstance(items, Mapping):
        items = [items]
    if not isinstance(items, list):
        raise TrajectoryFormatError(where, f"spans must be an array (got {type_name(items)})")
    return [_nested(s) for s in items if isinstance(s, Mapping)]


def _read(source: Source) -> Iterator[Item]:
    spans: list[Mapping[str, Any]] = []
    lenient = False
    try:
        if source.is_jsonl():
            with source.open() as fh:
                for n, line in iter_lines(fh):
                    try:
                        rec, loose = decode(line.rstrip(b"\r\n"), source.name, line0=n - 1)
                        spans += _spans_of(rec, f"{source.name}:{n}")
                        lenient = lenient or loose
                    except TrajectoryFormatError as err:
                        yield err
        else:
            doc, lenient = decode(source.read_bytes(), source.name)
            spans = _spans_of(doc, source.name)
    except TrajectoryFormatError as err:
        yield err
        return
    traces = {t: m for t, m in traces_of(spans).items() if _kind(root_of(m)) != "EVALUATOR"}
    if not traces:  # no spans (or only evaluators'): a run without calls, as otel reads it
        yield Trajectory(events=(), source=source.name, format=NAME, lenient=lenient)
    for trace_id, members in traces.items():
        yield Trajectory(events=events_from_turns(turns_from_spans(members)), id=trace_id,
                         source=f"{source.name}#trace:{trace_id}", format=NAME,
                         lenient=lenient)


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) not in (b"{", b"["):
        return 0
    text = strip_bom(head)[:65536]
    if b'"openinference.span.kind"' not in text and b'"span_kind"' not in text:
        return 0
    return 92 if b'"context' in text else 60


READER = Reader(
    name=NAME,
    description="Phoenix / OpenInference spans as Phoenix exports them (REST / client span "
    "JSON or JSONL; TOOL spans, turns from LLM spans; one trajectory per trace)",
    extensions=(".json", ".jsonl"),
    markers=(b'"openinference.span.kind"', b'"span_kind"'),
    top=92,
    order=160,
    sniff=_sniff,
    read=_read,
)
