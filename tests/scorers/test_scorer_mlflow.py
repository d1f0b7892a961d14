"""The MLflow scorer over real MLflow traces: a scripted agent instrumented with
``@mlflow.trace`` (an ``AGENT`` span, an ``LLM`` span per model response, ``TOOL`` spans)
logs to a local SQLite tracking store, and ``mlflow.genai.evaluate`` runs the scorer on
the stored traces. Each verdict equals ``grade()`` of the same run (tests/scorer_scenarios)."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, MissingExtraError, grade
from maxrepeat.scorers.mlflow import max_repeat, trajectory_from_trace
from tests.conftest import ROOT
from tests.scorer_scenarios import (
    CONFIGS,
    LOOPS,
    SCRIPTS,
    TOOLS,
    Turn,
    expected,
    run_tool,
    scripted_langchain_agent,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::FutureWarning", "ignore::UserWarning")


#: how the agent's spans nest: tools inside the model's span, beside it under the agent's
#: span, or no model span at all (the model calls not traced: one turn per call)
LAYOUTS = ("beside", "nested", "no-model")


@pytest.fixture(scope="module", autouse=True)
def mlflow() -> Any:
    """MLflow, imported when a test runs (not when the module is collected); the
    module's tests are skipped without it."""
    return pytest.importorskip("mlflow", reason="needs the mlflow extra")


@functools.cache
def _traced_agent() -> Any:
    """The scripted agent under ``@mlflow.trace`` (MLflow imported on first use)."""
    import mlflow
    from mlflow.entities import SpanType

    def _tool(name: str) -> Any:
        return mlflow.trace(TOOLS[name], name=name, span_type=SpanType.TOOL)

    def _act(turn: Turn) -> None:
        for name, args in turn:
            try:
                _tool(name)(**args)
            except Exception:  # the agent reads the error and goes on
                pass

    @mlflow.trace(span_type=SpanType.LLM)
    def _model_nested(turn: Turn) -> str:
        """A model response whose tool calls run inside its span."""
        _act(turn)
        return "done"

    @mlflow.trace(span_type=SpanType.LLM)
    def _model(turn: Turn) -> list[str]:
        """A model response: the calls it asks for (they run beside it, under the agent)."""
        return [name for name, _ in turn]

    @mlflow.trace(span_type=SpanType.AGENT)
    def agent(script: list[Turn], layout: str) -> str:
        for turn in script:
            if layout == "nested":
                _model_nested(turn)
            else:
                if layout == "beside":
                    _model(turn)
                _act(turn)
        return "finished"

    return agent


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory,
          mlflow: Any) -> Iterator[dict[tuple[str, str], str]]:
    """One SQLite store for the module: each script traced in each layout (trace ids)."""
    previous = mlflow.get_tracking_uri()
    path = tmp_path_factory.mktemp("mlflow") / "mlflow.db"
    mlflow.set_tracking_uri(f"sqlite:///{path}")
    # the artifacts (traces' spans) beside the store: a SQLite store's default is ./mlruns
    # in the working directory, the checkout
    mlflow.set_experiment(experiment_id=mlflow.create_experiment(
        "maxrepeat-scorer", artifact_location=(path.parent / "artifacts").as_uri()))
    ids = {}
    for scenario, script in SCRIPTS.items():
        for layout in LAYOUTS:
            _traced_agent()(script, layout)
            ids[scenario, layout] = mlflow.get_last_active_trace_id()
    mlflow.flush_trace_async_logging()  # traces are written in the background
    yield ids
    mlflow.set_tracking_uri(previous)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scenario", sorted(SCRIPTS))
def test_feedback_equals_grade_of_the_same_run(store: dict[tuple[str, str], str],
                                               scenario: str, layout: str, config: str,
                                               mlflow: Any) -> None:
    trace = mlflow.get_trace(store[scenario, layout])
    want = expected(SCRIPTS[scenario], CONFIGS[config], call_per_turn=layout == "no-model")
    scorer = max_repeat(CONFIGS[config], name="loops")
    feedback = scorer(trace=trace)
    assert feedback.name == "loops"
    assert feedback.value is want.passed is (not LOOPS[scenario])
    assert feedback.rationale == want.evidence
    assert json.loads(feedback.metadata["config"]) == CONFIGS[config].to_dict()
    assert feedback.metadata["occurrences"] == str(want.occurrences)
    assert feedback.metadata["status"] == "ok"


def test_tool_spans_become_one_turn_per_model_call(store: dict[tuple[str, str], str],
                                                    mlflow: Any) -> None:
    """Two calls of one model response are one step; an error is a failed result."""
    events = trajectory_from_trace(mlflow.get_trace(store["clean", "beside"])).events
    assert [e.type for e in events[:6]] == ["turn_start", "tool_call", "tool_call",
                                            "tool_result", "tool_result", "turn_end"]
    failed = trajectory_from_trace(mlflow.get_trace(store["errors", "nested"])).events
    assert (failed[2].data.result, failed[2].data.success) == ("cannot deploy to prod", False)


def test_evaluate_logs_the_feedback_on_each_trace(store: dict[tuple[str, str], str],
                                                  mlflow: Any) -> None:
    """``mlflow.genai.evaluate`` over the stored traces: one value per trace, the
    evidence as the rationale, and the feedback stored as an assessment of the trace."""
    traces = mlflow.search_traces(return_type="list")
    assert len(traces) == len(store)
    config = CONFIGS["observation"]
    result = mlflow.genai.evaluate(data=traces, scorers=[max_repeat(config)])
    rows = {row["trace_id"]: row for row in result.result_df.to_dict("records")}
    for (scenario, layout), trace_id in store.items():
        want = expected(SCRIPTS[scenario], config, call_per_turn=layout == "no-model")
        assert bool(rows[trace_id]["max_repeat/value"]) is want.passed
        assert rows[trace_id]["max_repeat/rationale"] == want.evidence
    stored = mlflow.get_trace(store["loop", "beside"]).info.assessments
    [assessment] = [a for a in stored if a.name == "max_repeat"]
    assert assessment.value is False
    assert assessment.metadata["occurrences"] == "5"


def test_page_example_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch, mlflow: Any) -> None:
    """The runnable example of docs/integrations/mlflow.md, as written (its own store), in
    a fresh folder as a user would run it (its store and artifacts are written there)."""
    monkeypatch.chdir(tmp_path)
    page = (ROOT / "docs" / "integrations" / "mlflow.md").read_text(encoding="utf-8")
    [code] = re.findall(r"^A complete run.*?^```py\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    previous = mlflow.get_tracking_uri()
    try:
        exec(compile(code, "docs/integrations/mlflow.md", "exec"), {"__name__": "__docs__"})
    finally:
        mlflow.set_tracking_uri(previous)
    [shown] = re.findall(r"^It prints.*?^```text\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    printed = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith(("True ", "False "))]  # evaluate() prints a banner too
    assert sorted(printed) == sorted(shown.splitlines())


def test_bad_config_raises_when_the_scorer_is_made(tmp_path: Path) -> None:
    from maxrepeat import ConfigError

    bad = tmp_path / "maxrepeat.yaml"
    bad.write_text("graders:\n  - type: max-repeat\n    config: {max: 0}\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        max_repeat(os.fspath(bad))


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mlflow.genai.scorers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'maxrepeat\[mlflow\]'"):
        max_repeat(MaxRepeatConfig(max=3))


def test_parallel_tool_spans_are_graded_in_the_model_order(tmp_path: Path,
                                                           mlflow: Any) -> None:
    """A real MLflow trace shaped as LangChain autologging records a LangGraph agent
    (``CHAT_MODEL`` outputs ``choices[].message.tool_calls`` with ids, ``TOOL`` spans with a
    ``tool_call_id`` attribute), whose parallel ``edit`` span starts before the
    ``run_tests`` span the model asked for first: each turn is in the model's order."""
    import time

    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'parallel.db'}")  # not the module's store
    try:
        client = mlflow.MlflowClient()
        experiment = client.create_experiment(
            "parallel", artifact_location=(tmp_path / "artifacts").as_uri())
        t0 = time.time_ns()
        root = client.start_trace("agent", span_type="AGENT", experiment_id=experiment,
                                  start_time_ns=t0)
        for turn in range(2):
            at = t0 + 1000 * (turn + 1)
            calls = [{"id": f"c{turn}_{j}", "type": "function",
                      "function": {"name": name, "arguments": "{}"}}
                     for j, name in enumerate(("run_tests", "edit"))]
            model = client.start_span("Scripted", root.trace_id, root.span_id,
                                      span_type="CHAT_MODEL", start_time_ns=at)
            client.end_span(root.trace_id, model.span_id, end_time_ns=at + 10, outputs={
                "choices": [{"message": {"role": "assistant", "tool_calls": calls}}]})
            for k, (j, name) in enumerate(((1, "edit"), (0, "run_tests"))):
                tool = client.start_span(name, root.trace_id, root.span_id, span_type="TOOL",
                                         inputs={"path": "a.py"}, start_time_ns=at + 100 + k,
                                         attributes={"tool_call_id": f"c{turn}_{j}"})
                client.end_span(root.trace_id, tool.span_id, outputs=f"{name} done",
                                end_time_ns=at + 200)
        client.end_trace(root.trace_id, end_time_ns=t0 + 5000)
        mlflow.flush_trace_async_logging()
        trace = mlflow.get_trace(root.trace_id)
    finally:
        mlflow.set_tracking_uri(previous)
    events = trajectory_from_trace(trace).events
    assert [e.data.tool_name for e in events if e.type == "tool_call"] == [
        "run_tests", "edit", "run_tests", "edit"]
    feedback = max_repeat(MaxRepeatConfig(max=1, match="name"))(trace=trace)
    assert feedback.value is False
    assert feedback.rationale.startswith("run_tests + edit repeated 2 times")


def test_a_langchain_agent_autologged_is_graded_on_what_it_read(tmp_path: Path,
                                                                 mlflow: Any) -> None:
    """A real LangChain v1 agent (``create_agent``) traced by ``mlflow.langchain.autolog()``,
    its fake chat model scripted to run the same tests 4 times: each ``TOOL`` span's
    outputs are the whole ``ToolMessage``, with a ``tool_call_id`` of its own, yet the
    agent read the same text each time, so observation mode finds the loop. The scorer
    and the ``mlflow-trace`` reader (of ``to_json()``) both give ``grade()`` of the run."""
    pytest.importorskip("langchain")
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from maxrepeat.readers.mlflow_trace import READER
    from maxrepeat.readers.source import Source

    @tool
    def run_tests(path: str) -> str:
        """Run the tests under path."""
        return str(run_tool("run_tests", {"path": path})[0])

    step = [("run_tests", {"path": "tests/"})]
    responses = [[{"id": f"c{i}", "name": name, "args": args} for name, args in step]
                 for i in range(4)]
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'autolog.db'}")  # not the module's store
    try:
        mlflow.set_experiment(experiment_id=mlflow.create_experiment(
            "autolog", artifact_location=(tmp_path / "artifacts").as_uri()))
        mlflow.langchain.autolog()
        try:
            agent = scripted_langchain_agent(responses, [run_tests])
            agent.invoke({"messages": [HumanMessage("Make the tests pass.")]})
        finally:
            mlflow.langchain.autolog(disable=True)
        mlflow.flush_trace_async_logging()
        trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
    finally:
        mlflow.set_tracking_uri(previous)
    tools = [s for s in trace.data.spans if s.span_type == "TOOL"]
    assert [s.outputs["tool_call_id"] for s in tools] == ["c0", "c1", "c2", "c3"]
    want = expected([step] * 4, CONFIGS["observation"])
    assert not want.passed
    feedback = max_repeat(CONFIGS["observation"])(trace=trace)
    assert (feedback.value, feedback.rationale) == (False, want.evidence)
    [read] = READER.read(Source.from_bytes(trace.to_json().encode()))
    assert not isinstance(read, Exception)
    assert grade(read, CONFIGS["observation"]).evidence == want.evidence
