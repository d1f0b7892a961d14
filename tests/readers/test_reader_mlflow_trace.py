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
