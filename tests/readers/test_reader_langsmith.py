"""The langsmith reader: ``maxrepeat grade`` of LangSmith run trees (a ``@traceable``
agent's ``RunTree`` as the ``Run`` schema serializes it, recorded offline by
tests/record_platform_fixtures.py from the scripted agent of the scorer tests) gives the
verdict the LangSmith evaluator gives the same run."""

from __future__ import annotations

import json

import pytest

from maxrepeat.readers.registry import detect
from maxrepeat.readers.source import Source
from tests.conftest import ROOT
from tests.readers.test_reader_mlflow_trace import grade_cli
from tests.scorer_scenarios import CONFIGS, LOOPS, SCRIPTS, expected

FIXTURES = ROOT / "tests" / "fixtures" / "langsmith"
CONFIG = CONFIGS["observation"]


@pytest.mark.parametrize("scenario", ["loop", "clean"])
def test_grade_of_the_export_equals_the_evaluator(scenario: str) -> None:
    path = FIXTURES / f"{scenario}.json"
    assert detect(Source.from_path(str(path))).name == "langsmith"
    result = grade_cli(str(path))
    want = expected(SCRIPTS[scenario], CONFIG)
    assert result["passed"] is want.passed is (not LOOPS[scenario])
    assert result["evidence"] == want.evidence
    pytest.importorskip("langsmith", reason="needs the langsmith extra")
    from langsmith import schemas

    from maxrepeat.scorers.langsmith import max_repeat

    run = schemas.Run.model_validate_json(path.read_text(encoding="utf-8"))
    evaluated = max_repeat(CONFIG)(run)
    assert evaluated.score == (1.0 if result["passed"] else 0.0)
    assert evaluated.comment == result["evidence"]
    assert result["trajectory"] == str(run.id)


def test_errors_nested_tools_and_bad_records() -> None:
    from maxrepeat.readers.langsmith import READER

    run = {"id": "a", "run_type": "chain", "child_runs": [
        {"id": "m", "run_type": "llm", "start_time": "2026-01-01T00:00:01+00:00"},
        {"id": "t", "name": "outer", "run_type": "tool", "inputs": {"q": 1},
         "start_time": "2026-01-01T00:00:02+00:00", "child_runs": [
             {"id": "u", "name": "inner", "run_type": "tool",
              "start_time": "2026-01-01T00:00:03+00:00"}]},
        {"id": "e", "name": "fails", "run_type": "tool", "error": "boom",
         "start_time": "2026-01-01T00:00:04+00:00"}]}
    bad = {"id": "b", "run_type": "chain", "child_runs": 3}
    [good, err, other] = READER.read(Source.from_bytes(json.dumps([run, bad, 7]).encode()))
    assert not isinstance(good, Exception) and good.id == "a"
    assert [(e.type, e.data.result if e.type == "tool_result" else None)
            for e in good.events][-2:] == [("tool_result", "boom"), ("turn_end", None)]
    assert "child_runs must be an array" in str(err) and "must be an object" in str(other)
