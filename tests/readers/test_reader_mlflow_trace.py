"""The mlflow-trace reader: ``maxrepeat grade`` of traces MLflow exported
(``mlflow.get_trace(id).to_json()``, recorded by tests/record_platform_fixtures.py from the
scripted agent of tests/scorers/test_scorer_mlflow.py) gives the verdict the MLflow scorer gives
the same trace."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from maxrepeat.readers.registry import detect
from maxrepeat.readers.source import Source
from tests.conftest import ROOT
from tests.scorer_scenarios import CONFIGS, LOOPS, SCRIPTS, expected

FIXTURES = ROOT / "tests" / "fixtures" / "mlflow-trace"
CONFIG = CONFIGS["observation"]


def grade_cli(path: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-m", "maxrepeat", "grade", path, "--max", "2",
                          "--max-cycle-period", "2", "-o", "jsonl"], capture_output=True,
                         text=True, check=False, timeout=120)
    [line] = out.stdout.splitlines()
    result: dict[str, object] = json.loads(line)
    return result


@pytest.mark.parametrize("scenario", ["loop", "clean"])
def test_grade_of_the_export_equals_the_scorer(scenario: str) -> None:
    path = FIXTURES / f"{scenario}.json"
    assert detect(Source.from_path(str(path))).name == "mlflow-trace"
    result = grade_cli(str(path))
    want = expected(SCRIPTS[scenario], CONFIG)
    assert result["passed"] is want.passed is (not LOOPS[scenario])
    assert result["evidence"] == want.evidence
    mlflow = pytest.importorskip("mlflow", reason="needs the mlflow extra")
    from maxrepeat.scorers.mlflow import max_repeat

    trace = mlflow.entities.Trace.from_json(path.read_text(encoding="utf-8"))
    feedback = max_repeat(CONFIG)(trace=trace)
    assert feedback.value is result["passed"]
    assert feedback.rationale == result["evidence"]
    assert result["trajectory"] == trace.info.trace_id


def test_a_failed_tool_span_and_a_trace_list() -> None:
    """MLflow 2's span keys, an error span (its exception event), and a JSON array."""
    from maxrepeat.readers.mlflow_trace import READER

    def span(sid: str, kind: str, start: int, **extra: object) -> dict[str, object]:
        return {"name": "deploy" if kind == "TOOL" else kind, "context": {"span_id": sid},
                "parent_id": "root", "start_time": start,
                "attributes": {"mlflow.spanType": json.dumps(kind),
                               "mlflow.spanInputs": '{"env": "prod"}'}, **extra}

    failed = {"status_code": "ERROR", "status_message": "boom", "events": [
        {"name": "exception", "attributes": {"exception.message": "denied"}}]}
    trace = {"info": {"request_id": "tr-1"}, "data": {"spans": [
        span("m", "LLM", 1), span("t", "TOOL", 2, **failed), span("u", "TOOL", 3)]}}
    [good, bad] = READER.read(Source.from_bytes(json.dumps([trace, 3]).encode()))
    assert not isinstance(good, Exception) and good.id == "tr-1"
    assert [e.type for e in good.events] == ["turn_start", "tool_call", "tool_call",
                                             "tool_result", "tool_result", "turn_end"]
    assert (good.events[3].data.result, good.events[3].data.success) == ("denied", False)
    assert "must be an object" in str(bad)


def _parallel_trace(with_ids: bool) -> dict[str, object]:
    """An MLflow 3 trace as LangChain autologging records a LangGraph agent's response
    with two calls: the ``CHAT_MODEL`` span's outputs ask for ``run_tests`` (c1) then
    ``edit`` (c2), and the ``edit`` TOOL span starts first (its thread was quicker)."""
    def span(sid: str, start: int, kind: str, outputs: object, **extra: str) -> dict[str, object]:
        attributes = {"mlflow.spanType": json.dumps(kind),
                      "mlflow.spanOutputs": json.dumps(outputs),
                      **{k: json.dumps(v) for k, v in extra.items()}}
        return {"name": sid, "span_id": sid, "parent_span_id": "agent",
                "start_time_unix_nano": start, "status": {"code": "STATUS_CODE_OK"},
                "attributes": attributes}

    calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}}
             for n, i in (("run_tests", "c1"), ("edit", "c2"))] if with_ids else None
    model = {"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]}
    ids = {"edit": {"tool_call_id": "c2"}, "run_tests": {}} if with_ids else {}
    tool_message = {"type": "tool", "content": "FAILED", "tool_call_id": "c1"} \
        if with_ids else "FAILED"
    return {"info": {"trace_id": "tr-parallel"}, "data": {"spans": [
        span("agent", 0, "AGENT", None),
        span("model", 1, "CHAT_MODEL", model),
        span("edit", 2, "TOOL", "wrote a.py", **ids.get("edit", {})),
        span("run_tests", 3, "TOOL", tool_message)]}}


@pytest.mark.parametrize("with_ids", [True, False], ids=["model-order", "start-order"])
def test_parallel_tool_spans_are_in_the_model_order(with_ids: bool) -> None:
    """With call ids (``run_tests`` named only by its ``ToolMessage``, ``edit`` by its
    ``tool_call_id`` attribute) the turn is in the model's order; without, start order."""
    from maxrepeat.readers.mlflow_trace import READER

    data = json.dumps(_parallel_trace(with_ids)).encode()
    [trajectory] = READER.read(Source.from_bytes(data))
    assert not isinstance(trajectory, Exception)
    names = [e.data.tool_name for e in trajectory.events if e.type == "tool_call"]
    assert names == (["run_tests", "edit"] if with_ids else ["edit", "run_tests"])
