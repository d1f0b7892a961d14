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


def _lc(kind: str, **kwargs: object) -> dict[str, object]:
    """A LangChain message as LangSmith serializes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind],
            "kwargs": kwargs}


def _parallel_turn(asked: list[tuple[str, str]], started: list[tuple[str, str]],
                   second: int = 0) -> list[dict[str, object]]:
    """A LangGraph ``model`` node whose ``llm`` run asks for ``asked`` (name, id) calls,
    then one ``tools`` node per call, started in the order of ``started``."""
    at = f"2026-01-01T00:{second:02d}:%02d+00:00"
    message = _lc("AIMessage", content="", type="ai", tool_calls=[
        {"name": n, "args": {"n": i}, "id": i, "type": "tool_call"} for n, i in asked])
    runs: list[dict[str, object]] = [
        {"id": f"model{second}", "name": "model", "run_type": "chain", "start_time": at % 1,
         "child_runs": [{"id": f"llm{second}", "name": "Scripted", "run_type": "llm",
                         "start_time": at % 2, "outputs": {"generations": [[
                             {"type": "ChatGeneration", "message": message}]]}}]}]
    for k, (name, call_id) in enumerate(started):
        tool = {"id": f"run-{call_id}", "name": name, "run_type": "tool",
                "inputs": {"n": call_id}, "start_time": at % (3 + k), "outputs": {
                    "output": _lc("ToolMessage", content=f"{name} done", tool_call_id=call_id)}}
        runs.append({"id": f"tools-{call_id}", "name": "tools", "run_type": "chain",
                     "start_time": at % (3 + k), "child_runs": [tool]})
    return runs


def test_parallel_tool_runs_are_in_the_model_order_not_the_start_order() -> None:
    """LangGraph runs a response's calls in threads: here each turn's ``edit`` run
    starts before the ``run_tests`` run the model asked for first. The turn lists the
    calls as the model's ``tool_calls`` do, read from the file and by the scorer alike."""
    from maxrepeat.readers.langsmith import READER
    from maxrepeat.scorers.langsmith import turns_from_run

    first, second = [("run_tests", "c0"), ("edit", "c1")], [("edit", "d0"), ("run_tests", "d1")]
    run = {"id": "root", "name": "LangGraph", "run_type": "chain", "child_runs": [
        *_parallel_turn(first, first[::-1], 0), *_parallel_turn(second, second[::-1], 1)]}
    turns = turns_from_run(run)
    assert [[c.name for c in turn] for turn in turns] == [["run_tests", "edit"],
                                                        ["edit", "run_tests"]]
    [trajectory] = READER.read(Source.from_bytes(json.dumps(run).encode()))
    assert not isinstance(trajectory, Exception)
    assert [e.data.tool_name for e in trajectory.events if e.type == "tool_call"] == [
        "run_tests", "edit", "edit", "run_tests"]


def test_the_model_order_from_extra_or_openai_choices_else_start_order() -> None:
    """A tool run may name its call only in ``extra.tool_call_id`` (a failed run has no
    ``ToolMessage``); an OpenAI-style ``llm`` run lists its calls under ``choices``; an
    ``llm`` run that names no call ids leaves the start order."""
    from maxrepeat.readers.langsmith import turns_from_run

    def run(outputs: dict[str, object]) -> dict[str, object]:
        return {"id": "a", "run_type": "chain", "child_runs": [
            {"id": "m", "run_type": "llm", "start_time": "2026-01-01T00:00:01",
             "outputs": outputs},
            {"id": "t2", "name": "second", "run_type": "tool", "error": "boom",
             "extra": {"tool_call_id": "k2"}, "start_time": "2026-01-01T00:00:02"},
            {"id": "t1", "name": "first", "run_type": "tool", "outputs": {"output": "x"},
             "extra": {"tool_call_id": "k1"}, "start_time": "2026-01-01T00:00:03"}]}

    calls = [{"id": "k1", "type": "function", "function": {"name": "first"}},
             {"id": "k2", "type": "function", "function": {"name": "second"}}]
    ordered = run({"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]})
    assert [c.name for c in turns_from_run(ordered)[0]] == ["first", "second"]
    unnamed = run({"tool_calls": [{"name": "first"}, {"name": "second"}]})
    assert [c.name for c in turns_from_run(unnamed)[0]] == ["second", "first"]
