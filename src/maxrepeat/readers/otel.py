"""OpenTelemetry GenAI spans exported as OTLP JSON (``{"resourceSpans": [...]}``).

Layouts: one OTLP JSON export object, or JSONL with one export object per line (the
collector's file exporter); JSONL is read line by line. Spans are
``resourceSpans[].scopeSpans[].spans[]`` with ``attributes`` as OTLP ``{key, value:
{stringValue|intValue|doubleValue|boolValue|arrayValue|kvlistValue}}`` lists.

Runs: one trajectory per ``gen_ai.conversation.id`` (taken from the span or its nearest
ancestor in the trace), else per trace, named ``file#conversation:<id>`` or
``file#trace:<traceId>``. Spans are ordered by start time (file order breaks ties).

What marks a model response: a model-call span (``gen_ai.operation.name`` ``chat``,
``generate_content`` or ``text_completion``, or a span name starting with one of these).
The ``execute_tool`` spans that follow one model call, up to the next model call, form its
turn. Tool spans before any model call stand on their own.

Order inside a turn: the order in which the model asked for the calls, when the trace
says it, else start order (an agent may run a response's calls in parallel threads). The
model span's ``gen_ai.output.messages`` (the GenAI JSON messages, ``tool_call`` parts or
``tool_calls`` with ids) lists the calls, and a tool span's ``gen_ai.tool.call.id`` names
the one it ran; tool spans without a known id keep their places.

Read as follows: a tool span is one whose ``gen_ai.operation.name`` is ``execute_tool``
(or whose name starts ``execute_tool``); tool name ``gen_ai.tool.name`` (else the rest of
the span name); call id ``gen_ai.tool.call.id`` (else the span id); arguments
``gen_ai.tool.call.arguments`` (decoded when a JSON string) and result
``gen_ai.tool.call.result`` (kept as recorded) are opt-in and often absent: a span without
a recorded result has no ``tool_result`` unless it failed. Error flag: span status
``ERROR`` (code 2) or an ``error.type`` attribute; a failed span without a recorded
result gets the status message (or ``error.type``) as its result.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import decode, first_json_char, iter_lines, strip_bom
from ._spantree import Node, asked_order
from ._toolevents import EventBuilder, decode_arguments, type_name

__all__ = ["READER"]

_MODEL_OPS = ("chat", "generate_content", "text_completion")
_NO_VALUE = object()


def _any_value(value: Any) -> Any:
    """A Python value for an OTLP JSON ``AnyValue``."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        items = value["arrayValue"].get("values", []) if isinstance(
            value["arrayValue"], dict) else []
        return [_any_value(v) for v in items]
    if "kvlistValue" in value:
        pairs = value["kvlistValue"].get("values", []) if isinstance(
            value["kvlistValue"], dict) else []
        return _attributes(pairs)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for kv in raw:
            if isinstance(kv, dict) and isinstance(kv.get("key"), str):
                out[kv["key"]] = _any_value(kv.get("value"))
    return out


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class _Span:
    order: int
    trace: str
    span: str
    parent: str
    start: int
    model: bool
    tool: str | None
    call_id: str | None
    arguments: Any
    result: Any
    ok: bool
    conversation: str | None
    asks: tuple[str, ...] = ()
    answers: str | None = None


def _str(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


def _asked(messages: Any) -> tuple[str, ...]:
    """The ids of the tool calls a model span's ``gen_ai.output.messages`` ask for, in
    order: ``tool_call`` parts (the GenAI message schema) or OpenAI-style ``tool_calls``.

    >>> _asked('[{"role": "assistant", "parts": [{"type": "tool_call", "id": "c2"},'
    ...        ' {"type": "tool_call", "id": "c1"}]}]')
    ('c2', 'c1')
    """
    messages = decode_arguments(messages)
    ids: list[str] = []
    for message in messages if isinstance(messages, list) else ():
        parts = message.get("parts") if isinstance(message, dict) else None
        calls = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call"] \
            if isinstance(parts, list) else []
        listed = message.get("tool_calls") if isinstance(message, dict) else None
        calls += [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
        ids += [str(c["id"]) for c in calls if isinstance(c.get("id"), (str, int))]
    return tuple(ids)


def _span(order: int, raw: dict[str, Any]) -> _Span:
    attrs = _attributes(raw.get("attributes"))
    name = _str(raw, "name")
    op = attrs.get("gen_ai.operation.name")
    first = name.split(" ", 1)[0]
    model = op in _MODEL_OPS or (op is None and first in _MODEL_OPS)
    tool: str | None = None
    if op == "execute_tool" or (op is None and first == "execute_tool"):
        tool_name = attrs.get("gen_ai.tool.name")
        if not isinstance(tool_name, str):
            rest = name.split(" ", 1)
            tool_name = rest[1].strip() if len(rest) == 2 and rest[1].strip() else None
        tool = tool_name
    status_raw = raw.get("status")
    status: dict[str, Any] = status_raw if isinstance(status_raw, dict) else {}
    failed = status.get("code") in (2, "STATUS_CODE_ERROR") or "error.type" in attrs
    result: Any = attrs.get("gen_ai.tool.call.result", _NO_VALUE)
    if result is _NO_VALUE and failed:
        message = status.get("message")
        result = message if isinstance(message, str) and message else attrs.get("error.type")
    span_id = _str(raw, "spanId") or f"#{order}"
    recorded = attrs.get("gen_ai.tool.call.id")
    call_id = str(recorded) if recorded not in (None, "") else None
    conversation = attrs.get("gen_ai.conversation.id")
    return _Span(
        order=order,
        trace=_str(raw, "traceId"),
        span=span_id,
        parent=_str(raw, "parentSpanId"),
        start=_nanos(raw.get("startTimeUnixNano")),
        model=model,
        tool=tool,
        call_id=call_id or span_id,
        arguments=decode_arguments(attrs.get("gen_ai.tool.call.arguments")),
        result=result,
        ok=not failed,
        conversation=str(conversation) if conversation not in (None, "") else None,
        asks=_asked(attrs.get("gen_ai.output.messages")),
        answers=call_id,
    )


def _spans_of(export: Any, where: str, source: str, start: int) -> list[_Span]:
    if not isinstance(export, dict):
        raise TrajectoryFormatError(source, f"{where} must be an object (got {type_name(export)})")
    resource_spans = export.get("resourceSpans")
    if not isinstance(resource_spans, list):
        raise TrajectoryFormatError(source, f"{where}.resourceSpans must be an array "
                                    f"(got {type_name(resource_spans)})")
    out: list[_Span] = []
    for rs in resource_spans:
        scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans")) if isinstance(
            rs, dict) else None
        for ss in scopes if isinstance(scopes, list) else []:
            spans = ss.get("spans") if isinstance(ss, dict) else None
            for raw in spans if isinstance(spans, list) else []:
                if isinstance(raw, dict):
                    out.append(_span(start + len(out), raw))
    return out


def _group_key(span: _Span, by_id: dict[tuple[str, str], _Span]) -> str:
    node: _Span | None = span
    seen = 0
    while node is not None and seen < 1000:
        if node.conversation is not None:
            return f"conversation:{node.conversation}"
        node = by_id.get((node.trace, node.parent)) if node.parent else None
        seen += 1
    return f"trace:{span.trace}"


def _trajectories(spans: list[_Span], source: Source, lenient: bool) -> Iterator[Trajectory]:
    by_id = {(s.trace, s.span): s for s in spans}
    groups: dict[str, list[_Span]] = {}
    for s in spans:
        if s.model or s.tool is not None:
            groups.setdefault(_group_key(s, by_id), []).append(s)
    if not groups:
        yield Trajectory(events=(), source=source.name, format="otel", lenient=lenient)
        return
    ordered = sorted(groups.items(), key=lambda kv: min((s.start, s.order) for s in kv[1]))
    for key, members in ordered:
        b = EventBuilder()
        response: str | None = None
        for s in _in_asked_order(sorted(members, key=lambda s: (s.start, s.order))):
            if s.model:
                b.end_turn()
                response = s.span
            elif s.tool is not None:
                if response is not None:
                    b.start_turn(response)
                    response = None
                b.add_call(s.tool, s.call_id, s.arguments)
                if s.result is not _NO_VALUE and s.call_id is not None:
                    b.add_result(s.call_id, s.result, s.ok)
        kind, _, ident = key.partition(":")
        yield Trajectory(events=b.events(), source=f"{source.name}#{key}", format="otel",
                         lenient=lenient, metadata={f"{kind}_id": ident})


def _in_asked_order(spans: list[_Span]) -> list[_Span]:
    """Spans in start order, the tool spans after each model span put in the order its
    output messages asked for them (`maxrepeat.readers._spantree.asked_order`)."""
    out: list[_Span] = []
    asked: tuple[str, ...] = ()
    turn: list[Node] = []
    for s in [*spans, None]:
        if s is not None and not s.model and s.tool is not None:
            turn.append(Node(s.span, s.parent, "tool", s, s.answers))
            continue
        out += asked_order(turn, asked)
        turn = []
        if s is not None:
            out.append(s)
            asked = s.asks if s.model else asked
    return out


def _read(source: Source) -> Iterator[Item]:
    spans: list[_Span] = []
    lenient = False
    if source.is_jsonl():
        with source.open() as fh:
            for n, line in iter_lines(fh):
                # A bad line is reported and skipped: the other lines' traces still count.
                try:
                    rec, loose = decode(line.rstrip(b"\r\n"), source.name, line0=n - 1)
                    lenient = lenient or loose
                    spans.extend(_spans_of(rec, f"line {n}", source.name, len(spans)))
                except TrajectoryFormatError as err:
                    yield err
    else:
        try:
            doc, lenient = decode(source.read_bytes(), source.name)
            spans = _spans_of(doc, "the export", source.name, 0)
        except TrajectoryFormatError as err:
            yield err
            return
    yield from _trajectories(spans, source, lenient)


_RESOURCE_SPANS = re.compile(rb'^\s*\{\s*"resourceSpans"\s*:|"resourceSpans"\s*:\s*\[')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    return 90 if _RESOURCE_SPANS.search(strip_bom(head)[:8192]) else 0


READER = Reader(
    name="otel",
    description="OpenTelemetry GenAI spans as OTLP JSON (execute_tool spans; turns from "
    "model-call spans; one trajectory per conversation or trace)",
    extensions=(".json", ".jsonl"),
    markers=(b'"resourceSpans"',),
    top=90,
    order=130,
    sniff=_sniff,
    read=_read,
)
