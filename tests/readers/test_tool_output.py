"""``tool_output``, the one reading of what the model read of a LangChain tool's output:
a ``ToolMessage`` in each form a platform records it (live, dumped, LangChain-serialized,
either as JSON text) is its content, so two runs of a call that read the same text compare
equal; anything else is kept as recorded. And the OpenInference reader applies it to
``output.value``, as OpenInference's LangChain instrumentor writes a tool run's
``ToolMessage`` there (JSON of its ``model_dump()``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.readers._spantree import tool_output
from maxrepeat.readers.source import Source


def _forms(content: Any, call_id: str) -> list[Any]:
    pytest.importorskip("langchain_core")
    from langchain_core.load import dumpd
    from langchain_core.messages import ToolMessage

    message = ToolMessage(content=content, tool_call_id=call_id, name="run_tests",
                          id=f"run-{call_id}")
    dumped, serialized = message.model_dump(mode="json"), dumpd(message)
    return [message, dumped, serialized, json.dumps(dumped), json.dumps(serialized)]


@pytest.mark.parametrize("form", range(5), ids=["live", "dumped", "lc-serialized",
                                                "dumped-json", "lc-serialized-json"])
@pytest.mark.parametrize("content", ["FAILED: 1 test", [{"type": "text", "text": "x"}]])
def test_a_tool_message_is_its_content(form: int, content: Any) -> None:
    first, second = _forms(content, "c1")[form], _forms(content, "c2")[form]
    assert tool_output(first) == tool_output(second) == content


@pytest.mark.parametrize("value", [
    "FAILED", '{"type": "tool", "content": "no call id"}', {"content": "x"},
    {"type": "text", "content": "x", "tool_call_id": "c1"}, ["a"], None, 3,
    {"lc": 1, "type": "constructor", "id": ["langchain", "AIMessage"],
     "kwargs": {"content": "hi", "tool_call_id": "c1"}}, "{not json"])
def test_anything_else_is_kept_as_recorded(value: Any) -> None:
    assert tool_output(value) == value


def test_openinference_output_value_of_a_tool_message() -> None:
    """Four ``TOOL`` spans, each after an ``LLM`` span, whose ``output.value`` is the
    JSON OpenInference's LangChain instrumentor records for the ``ToolMessage`` (a call id
    of its own each time): observation mode sees the same result 4 times."""
    from maxrepeat.readers.openinference import READER

    spans = []
    for i in range(4):
        for kind, sid in (("LLM", f"m{i}"), ("TOOL", f"t{i}")):
            value = _forms("FAILED", f"c{i}")[3] if kind == "TOOL" else "{}"
            spans.append({
                "name": "run_tests" if kind == "TOOL" else "model",
                "context": {"trace_id": "t", "span_id": sid}, "parent_id": "a",
                "span_kind": kind, "status_code": "OK",
                "start_time": f"2026-01-01T00:00:{len(spans) + 1:02d}+00:00",
                "attributes": {"openinference.span.kind": kind, "output.value": value,
                               "input.value": '{"path": "tests/"}', "tool.name": "run_tests"}})
    [trajectory] = READER.read(Source.from_bytes(json.dumps(spans).encode()))
    assert not isinstance(trajectory, Exception)
    assert [e.data.result for e in trajectory.events if e.type == "tool_result"] == [
        "FAILED"] * 4
    assert not grade(trajectory, MaxRepeatConfig(max=2)).passed
