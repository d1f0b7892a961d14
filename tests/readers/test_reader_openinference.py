"""The openinference reader: ``maxrepeat grade`` of the spans a Phoenix server stored for
an OpenInference-instrumented agent (read back with ``Client().spans.get_spans``, recorded
by tests/record_platform_fixtures.py with tests/scorers/test_scorer_phoenix.py's server and
scripted agent) gives the verdict the Phoenix evaluator gives the same trace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from maxrepeat import grade, read_trajectories
from maxrepeat.readers.registry import detect
from maxrepeat.readers.source import Source
from tests.conftest import ROOT
from tests.guard_scenarios import OBSERVATION
from tests.readers.test_reader_mlflow_trace import grade_cli

FIXTURES = ROOT / "tests" / "fixtures" / "openinference"
LOOPS = {"loop": True, "clean": False}


@pytest.mark.parametrize("scenario", ["loop", "clean"])
def test_grade_of_the_export_equals_the_evaluator(scenario: str) -> None:
    path = FIXTURES / f"{scenario}.jsonl"
    assert detect(Source.from_path(str(path))).name == "openinference"
    result = grade_cli(str(path))
    spans = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert result["trajectory"] == spans[0]["context"]["trace_id"]
    assert result["passed"] is (not LOOPS[scenario])
    pytest.importorskip("phoenix.evals", reason="needs the phoenix extra")
    from maxrepeat.scorers.phoenix import max_repeat

    [score] = max_repeat(OBSERVATION).evaluate({"spans": spans})
    assert score.label == ("pass" if result["passed"] else "fail")
    assert score.explanation == result["evidence"]


def test_the_expected_run() -> None:
    """The loop fixture is the scripted run of the Phoenix scorer's tests."""
    from tests.scorers.test_scorer_phoenix import STEPS, _expected

    [trajectory] = list(read_trajectories(FIXTURES / "loop.jsonl"))
    assert grade(trajectory, OBSERVATION).evidence == grade(
        _expected(STEPS["loop"]), OBSERVATION).evidence


def test_a_rest_page_dataframe_records_and_an_evaluator_trace() -> None:
    from maxrepeat.readers.openinference import READER

    def span(sid: str, kind: str, start: int, trace: str = "t1", **attributes: str
             ) -> dict[str, object]:
        return {"context": {"trace_id": trace, "span_id": sid},
                "parent_id": None if kind in ("AGENT", "EVALUATOR") else "a",
                "span_kind": kind, "status_code": "ERROR" if sid == "x" else "OK",
                "status_message": "boom", "start_time": f"2026-01-01T00:00:{start:02d}+00:00",
                "attributes": {"openinference.span.kind": kind, **attributes}}

    page = {"data": [span("a", "AGENT", 0), span("m", "LLM", 1),
                     span("x", "TOOL", 2, **{"tool.name": "deploy"}),
                     span("e", "EVALUATOR", 3, trace="t2")], "next_cursor": None}
    [run] = READER.read(Source.from_bytes(json.dumps(page).encode()))
    assert not isinstance(run, Exception) and run.id == "t1"
    assert [(e.type, getattr(e.data, "success", None)) for e in run.events][2] == (
        "tool_result", False)
    flat = {"context.trace_id": "t3", "context.span_id": "y", "parent_id": None,
            "span_kind": "TOOL", "start_time": "2026-01-01T00:00:00+00:00",
            "attributes.openinference.span.kind": "TOOL", "attributes.tool.name": "ls"}
    [df] = READER.read(Source.from_bytes(json.dumps([flat]).encode()))
    assert not isinstance(df, Exception) and df.events[1].data.tool_name == "ls"


def _parallel_trace(layout: str) -> list[dict[str, Any]]:
    """An LLM span asking for ``run_tests`` then ``edit``, whose TOOL spans (``tool.id``
    the call they ran) start in the opposite order, its output messages stored as
    ``layout`` says: flat keys, nested objects, or the dataframe's lists."""
    ids: dict[str, Any] = {"llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
           "llm.output_messages.0.message.tool_calls.1.tool_call.id": "c2"}
    if layout == "nested":
        ids = {"llm": {"output_messages": [{"message": {"tool_calls": [
            {"tool_call": {"id": "c1"}}, {"tool_call": {"id": "c2"}}]}}]}}
    elif layout == "lists":
        ids = {"llm.output_messages": [{"message.role": "assistant", "message.tool_calls": [
            {"tool_call.id": "c1"}, {"tool_call.id": "c2"}]}]}

    def span(sid: str, start: int, **attributes: object) -> dict[str, Any]:
        return {"name": sid, "context": {"trace_id": "T", "span_id": sid},
                "parent_id": "agent", "start_time": f"2026-01-01T00:00:0{start}+00:00",
                "status_code": "OK", "attributes": attributes}

    return [span("agent", 0, **{"openinference.span.kind": "AGENT"}),
            span("m", 1, **{"openinference.span.kind": "LLM"}, **ids),
            span("t2", 2, **{"openinference.span.kind": "TOOL", "tool.name": "edit",
                             "tool.id": "c2", "output.value": "wrote a.py"}),
            span("t1", 3, **{"openinference.span.kind": "TOOL", "tool.name": "run_tests",
                             "tool.id": "c1", "output.value": "FAILED"})]


@pytest.mark.parametrize("layout", ["flat", "nested", "lists"])
def test_parallel_tool_spans_are_in_the_model_order_not_the_start_order(
        layout: str) -> None:
    """The TOOL spans of one LLM span start in thread order; the turn lists the calls
    in the order of the LLM span's output tool calls, read from an export and by the
    Phoenix scorer's `turns_from_spans` alike. Without ``tool.id``, start order."""
    from maxrepeat.readers.openinference import READER, turns_from_spans

    spans = _parallel_trace(layout)
    assert [c.name for c in turns_from_spans(spans)[0]] == ["run_tests", "edit"]
    [trajectory] = READER.read(Source.from_bytes(json.dumps(spans).encode()))
    assert not isinstance(trajectory, Exception)
    assert [e.data.tool_name for e in trajectory.events if e.type == "tool_call"] == [
        "run_tests", "edit"]
    for span in spans:
        span["attributes"].pop("tool.id", None)
    assert [c.name for c in turns_from_spans(spans)[0]] == ["edit", "run_tests"]
