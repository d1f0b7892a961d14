"""MLflow traces as MLflow exports them: ``mlflow.get_trace(id).to_json()``,
``Trace.to_dict()``, the JSON the MLflow UI's trace view downloads.

Layouts: one trace (``{"info": {...}, "data": {"spans": [...]}}``), a JSON array of
traces, or JSONL with one trace per line. One trajectory per trace, id ``info.trace_id``
(MLflow 2's ``info.request_id``).

Spans (MLflow 3: ``span_id``, ``parent_span_id``, ``start_time_unix_nano``, ``status.code``;
MLflow 2: ``context.span_id``, ``parent_id``, ``start_time``, ``status_code``) keep their
MLflow attributes JSON-encoded: the span type is ``mlflow.spanType``, the inputs
``mlflow.spanInputs`` and the outputs ``mlflow.spanOutputs``.

What marks a model response: an ``LLM`` or ``CHAT_MODEL`` span. In start order, the
``TOOL`` spans after one model span, up to the next, form its turn, whether they run
under the model span or beside it; a trace without model spans before its tools has one
turn per call (`maxrepeat.readers._spantree`, the rule of the MLflow scorer). Spans inside a
``TOOL`` span are that tool's own work and are left out.

Order inside a turn: the order in which the model asked for the calls, when the trace
says it, else start order (LangGraph runs a response's calls in parallel threads). A
model span's outputs list the calls with their ids (``choices[].message.tool_calls``, as
MLflow's LangChain and OpenAI autologging record them, or a LangChain ``LLMResult``), and
a ``TOOL`` span names the call it ran (its ``tool_call_id`` attribute, as LangChain
autologging sets it, else the ``tool_call_id`` of the ``ToolMessage`` it returned);
spans without a known id keep their places.

Read as follows: tool name the span ``name``; call id the span id; arguments the decoded
``mlflow.spanInputs``; result the decoded ``mlflow.spanOutputs`` (``null`` when absent;
a LangChain ``ToolMessage``, as LangChain autologging records a tool's output, is its
``content``: `maxrepeat.readers._spantree.tool_output`). Error flag: status ``ERROR``;
the result of a failed span is its ``exception`` event's ``exception.message``, else the
status message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import first_json_char, first_jsonl_record, strip_bom
from ._spantree import (
    Call,
    Node,
    answered_call_id,
    asked_call_ids,
    decoded,
    events_from_turns,
    model_turns,
    read_records,
    tool_output,
)
from ._toolevents import type_name

__all__ = ["READER", "tool_call_id"]

NAME = "mlflow-trace"
_MODEL_SPANS = frozenset({"LLM", "CHAT_MODEL"})


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _error(span: Mapping[str, Any]) -> str | None:
    status = span.get("status")
    code = _map(status).get("code") if isinstance(status, Mapping) else span.get("status_code")
    if str(code).upper() not in ("STATUS_CODE_ERROR", "ERROR", "2"):
        return None
    events = span.get("events")
    for event in events if isinstance(events, list) else ():
        if _map(event).get("name") == "exception":
            message = _map(_map(event).get("attributes")).get("exception.message")
            if message:
                return str(message)
    message = _map(status).get("message") if isinstance(status, Mapping) else span.get(
        "status_message")
    return str(message or "error")


def _node(span: Mapping[str, Any]) -> tuple[Any, str, Node]:
    attributes = _map(span.get("attributes"))
    context = _map(span.get("context"))
    span_id = str(span.get("span_id") or context.get("span_id") or "")
    parent = str(span.get("parent_span_id") or span.get("parent_id") or "")
    kind = str(decoded(attributes.get("mlflow.spanType", span.get("span_type"))) or "")
    start = span.get("start_time_unix_nano", span.get("start_time"))
    call, outputs = None, decoded(attributes.get("mlflow.spanOutputs"))
    asks: Any = asked_call_ids(outputs) if kind in _MODEL_SPANS else None
    if kind == "TOOL":
        call = Call(str(span.get("name") or ""), decoded(attributes.get("mlflow.spanInputs")),
                    tool_output(outputs), _error(span), span_id)
        asks = tool_call_id(decoded(attributes.get("tool_call_id")), outputs)
    node_kind = "model" if kind in _MODEL_SPANS else "tool" if kind == "TOOL" else "other"
    return start if isinstance(start, (int, float)) else 0, span_id, Node(
        span_id, parent, node_kind, call, asks)


def tool_call_id(attribute: Any, outputs: Any) -> str | None:
    """The id of the call a ``TOOL`` span ran: its ``tool_call_id`` attribute, else its
    outputs' ``ToolMessage``'s (None when neither says)."""
    if isinstance(attribute, (str, int)) and attribute != "":
        return str(attribute)
    return answered_call_id(outputs)


def _trajectory(trace: Any, where: str, lenient: bool) -> Trajectory:
    if not isinstance(trace, Mapping):
        raise TrajectoryFormatError(where, f"a trace must be an object (got {type_name(trace)})")
    spans = _map(trace.get("data")).get("spans")
    if not isinstance(spans, list):
        raise TrajectoryFormatError(where, "data.spans must be an array "
                                    f"(got {type_name(spans)})")
    info = _map(trace.get("info"))
    trace_id = info.get("trace_id") or info.get("request_id")
    nodes = sorted((_node(s) for s in spans if isinstance(s, Mapping)),
                   key=lambda n: (n[0], n[1]))
    turns = model_turns([n for _, _, n in nodes], untraced="call")
    return Trajectory(events=events_from_turns(turns),
                      id=str(trace_id) if trace_id is not None else None,
                      source=where, format=NAME, lenient=lenient)


def _read(source: Source) -> Iterator[Item]:
    yield from read_records(source, _trajectory)


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) not in (b"{", b"["):
        return 0
    text = strip_bom(head)[:65536]
    if b'"spans"' not in text or b'"info"' not in text:
        return 0
    if b'"mlflow.spanType"' in text or b'"mlflow.trace' in text:
        return 95
    record = first_jsonl_record(head)
    return 60 if isinstance(record, dict) and "data" in record else 0


READER = Reader(
    name=NAME,
    description="MLflow traces (Trace.to_json(): info + data.spans; TOOL spans, turns "
    "from LLM / CHAT_MODEL spans; one trajectory per trace)",
    extensions=(".json", ".jsonl"),
    markers=(b'"spans"',),
    top=95,
    order=140,
    sniff=_sniff,
    read=_read,
)
