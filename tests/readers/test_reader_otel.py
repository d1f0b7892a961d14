"""The otel reader orders a model call's parallel ``execute_tool`` spans as the model
asked for them (``gen_ai.output.messages``), not as their threads happened to start."""

from __future__ import annotations

import json
from typing import Any

import pytest

from maxrepeat.readers.otel import READER
from maxrepeat.readers.source import Source


def _attribute(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _export(messages: list[dict[str, Any]] | None) -> bytes:
    """A chat span whose output asks for ``run_tests`` (c1) then ``edit`` (c2); the
    ``edit`` tool span starts first, as a second thread may make it."""
    chat = [_attribute("gen_ai.operation.name", "chat")]
    if messages is not None:
        chat.append(_attribute("gen_ai.output.messages", json.dumps(messages)))

    def span(sid: str, start: int, attributes: list[dict[str, Any]]) -> dict[str, Any]:
        return {"traceId": "T", "spanId": sid, "parentSpanId": "agent", "name": sid,
                "startTimeUnixNano": str(start), "attributes": attributes}

    def tool(sid: str, start: int, name: str, call_id: str) -> dict[str, Any]:
        return span(sid, start, [_attribute("gen_ai.operation.name", "execute_tool"),
                                 _attribute("gen_ai.tool.name", name),
                                 _attribute("gen_ai.tool.call.id", call_id),
                                 _attribute("gen_ai.tool.call.result", f"{name} done")])

    spans = [span("chat", 1, chat), tool("t2", 2, "edit", "c2"),
             tool("t1", 3, "run_tests", "c1"), span("chat2", 4, chat[:1])]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def _names(data: bytes) -> list[str]:
    [trajectory] = READER.read(Source.from_bytes(data))
    assert not isinstance(trajectory, Exception)
    return [str(e.data.tool_name) for e in trajectory.events if e.type == "tool_call"]


PARTS = [{"role": "assistant", "parts": [
    {"type": "tool_call", "id": "c1", "name": "run_tests", "arguments": {}},
    {"type": "tool_call", "id": "c2", "name": "edit", "arguments": {}}]}]
OPENAI = [{"role": "assistant", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "run_tests"}},
    {"id": "c2", "type": "function", "function": {"name": "edit"}}]}]


@pytest.mark.parametrize("messages", [PARTS, OPENAI], ids=["parts", "tool_calls"])
def test_parallel_tool_spans_are_in_the_model_order(messages: list[dict[str, Any]]) -> None:
    assert _names(_export(messages)) == ["run_tests", "edit"]


def test_without_output_messages_the_start_order() -> None:
    assert _names(_export(None)) == ["edit", "run_tests"]
