"""The DeepEval metric run through DeepEval's own entry points offline (no key, telemetry
off). Test cases: each scripted run is an ``LLMTestCase`` whose ``tools_called`` are the
calls the tools answered, through ``deepeval.evaluate``; each verdict equals ``grade()``
of the same calls, one call per turn (``tools_called`` keeps no turns), an error being the
output the agent read (no error flag). Traces: a scripted agent instrumented with
``@observe`` spans runs each golden of ``dataset.evals_iterator``; each verdict equals
``grade()`` of the run with its turns and error flags."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "0")
from maxrepeat import MaxRepeatConfig, MissingExtraError
from maxrepeat.scorers.deepeval import max_repeat
from tests.conftest import ROOT
from tests.guard_scenarios import needs
from tests.scorer_scenarios import CONFIGS, LOOPS, SCRIPTS, TOOLS, Turn, expected, run_tool

#: DeepEval is imported when a test runs, not when the module is collected
_needs = needs("deepeval", reason="needs the deepeval extra")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::FutureWarning", "ignore::UserWarning")


def _case(name: str, script: list[Turn]) -> Any:
    """The test case of a scripted run: each call, and what its tool answered."""
    from deepeval.test_case import LLMTestCase, ToolCall

    calls = []
    for turn in script:
        for tool, args in turn:
            result, error = run_tool(tool, args)
            calls.append(ToolCall(name=tool, input_parameters=args,
                                  output=error if error is not None else result))
    return LLMTestCase(name=name, input="Make the tests pass.", actual_output="done",
                       tools_called=calls)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_evaluate_verdicts_equal_grade(config: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import deepeval
    from deepeval.evaluate import DisplayConfig

    monkeypatch.chdir(tmp_path)  # deepeval writes .deepeval/ in the working directory
    cases = [_case(name, script) for name, script in SCRIPTS.items()]
    metric = max_repeat(CONFIGS[config], name="loops")
    result = deepeval.evaluate(test_cases=cases, metrics=[metric],
                               display_config=DisplayConfig(print_results=False,
                                                            show_indicator=False))
    seen = {}
    for test in result.test_results:
        [data] = test.metrics_data
        want = expected(SCRIPTS[test.name], CONFIGS[config], call_per_turn=True,
                        error_flag=False)
        assert data.name == "loops"
        assert data.success is test.success is want.passed is (not LOOPS[test.name])
        assert data.score == want.score
        assert data.reason == want.evidence
        assert json.loads(data.verbose_logs) == {"occurrences": want.occurrences,
                                                 "config": CONFIGS[config].to_dict()}
        assert data.evaluation_cost is None
        seen[test.name] = data.success
    assert set(seen) == set(SCRIPTS)


def test_each_call_is_one_step() -> None:
    """Two calls a model made at once are two steps here (DeepEval keeps no turns)."""
    from deepeval.test_case import LLMTestCase, ToolCall

    same = [ToolCall(name="read_file", input_parameters={"path": "a.py"}, output="x")] * 2
    metric = max_repeat(MaxRepeatConfig(max=1))
    assert metric.measure(LLMTestCase(input="go", tools_called=same)) == 0.0
    assert metric.reason.endswith("repeated 2 times in a row at steps 0-1 (max 1)")
    assert metric.measure(LLMTestCase(input="go", tools_called=None)) == 1.0


# --- traces: a scripted agent under @observe, each golden's trace graded ---------------

@functools.cache
def _traced_agent() -> Any:
    """The scripted agent under ``@observe`` (DeepEval imported on first use)."""
    from deepeval.tracing import observe

    #: the tools as DeepEval tool spans (the span's name is the function's)
    TRACED = {name: observe(type="tool")(tool) for name, tool in TOOLS.items()}

    @observe(type="llm")
    def _model(turn: Turn) -> Turn:
        """One model response: the turn's calls."""
        return turn

    @observe(type="agent")
    def _agent(script: list[Turn], nested: bool) -> str:
        """Runs each turn's calls after the model call that made them: beside the ``llm``
        span under the agent span, or (``nested``) inside the ``llm`` span."""
        def call(name: str, args: dict[str, Any]) -> None:
            try:
                TRACED[name](**args)
            except Exception:  # the agent reads the error and goes on
                pass

        @observe(type="llm", name="_model")
        def model_and_tools(turn: Turn) -> Turn:
            for name, args in turn:
                call(name, args)
            return turn

        for turn in script:
            if nested:
                model_and_tools(turn)
            else:
                for name, args in _model(turn):
                    call(name, args)
        return "done"

    return _agent


def _evals_iterator(scripts: dict[str, list[Turn]], metric: Any, *,
                    nested: bool = False) -> dict[str, Any]:
    """Each script run by the agent for its golden of ``evals_iterator``: the test results
    by script name (the ``EvaluationResult`` the iterator returns)."""
    from deepeval.dataset import EvaluationDataset, Golden
    from deepeval.evaluate import AsyncConfig, DisplayConfig

    _agent = _traced_agent()
    dataset = EvaluationDataset(goldens=[Golden(input=name) for name in scripts])
    iterator = dataset.evals_iterator(
        metrics=[metric], async_config=AsyncConfig(run_async=False),
        display_config=DisplayConfig(print_results=False, show_indicator=False))
    try:
        while True:
            golden = next(iterator)
            _agent(scripts[golden.input], nested)
    except StopIteration as done:
        return {test.input: test for test in done.value.test_results}


@pytest.mark.parametrize("nested", [False, True], ids=["beside", "nested"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trace_verdicts_equal_grade(config: str, nested: bool, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The trace's turns and error flags are kept: the verdict is ``grade()`` of the run."""
    monkeypatch.chdir(tmp_path)
    results = _evals_iterator(SCRIPTS, max_repeat(CONFIGS[config], name="loops"),
                              nested=nested)
    assert set(results) == set(SCRIPTS)
    for name, test in results.items():
        [data] = test.metrics_data
        want = expected(SCRIPTS[name], CONFIGS[config])
        assert data.success is test.success is want.passed is (not LOOPS[name])
        assert (data.score, data.reason) == (want.score, want.evidence)
        assert json.loads(data.verbose_logs)["occurrences"] == want.occurrences


#: parallel calls of one model turn: per call and per turn the verdicts differ
PARALLEL: dict[str, list[Turn]] = {
    # three identical calls in one turn: one step (passes), three per call (loops)
    "same_in_one_turn": [[("read_file", {"path": "a.py"})] * 3],
    # the same pair in three turns: a step repeated three times (loops); per call a, b,
    # a, b, a, b repeats nothing (passes)
    "pair_per_turn": [[("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})]] * 3,
}


def test_trace_groups_parallel_calls_by_model_turn(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = MaxRepeatConfig(max=2)
    results = _evals_iterator(PARALLEL, max_repeat(config))
    for name, script in PARALLEL.items():
        per_turn, per_call = expected(script, config), expected(script, config,
                                                                  call_per_turn=True)
        assert per_turn.passed is not per_call.passed  # the case tells them apart
        [data] = results[name].metrics_data
        assert (data.success, data.reason) == (per_turn.passed, per_turn.evidence)
    assert results["pair_per_turn"].success is False


def test_trace_without_tool_spans_falls_back_to_tools_called() -> None:
    """A trace dict with no tool span: the test case's ``tools_called`` are graded."""
    from deepeval.test_case import LLMTestCase, ToolCall

    metric = max_repeat(MaxRepeatConfig(max=1))
    case = LLMTestCase(input="go", tools_called=[ToolCall(name="ls", output="a")] * 2)
    case._trace_dict = {"name": "agent", "type": "agent", "children": []}
    assert metric.measure(case) == 0.0
    case._trace_dict = {"name": "agent", "type": "agent",
                        "children": [{"name": "ls", "type": "tool", "output": "a",
                                      "children": []}]}
    assert metric.measure(case) == 1.0


def test_page_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """The runnable example of docs/integrations/deepeval.md, as written."""
    monkeypatch.chdir(tmp_path)
    page = (ROOT / "docs" / "integrations" / "deepeval.md").read_text(encoding="utf-8")
    [code] = re.findall(r"^A complete run.*?^```py\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    exec(compile(code, "docs/integrations/deepeval.md", "exec"), {"__name__": "__docs__"})
    [shown] = re.findall(r"^It prints.*?^```text\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    printed = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith(("True ", "False "))]  # evaluate() prints its summary too
    assert printed == shown.splitlines()


def test_page_trace_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The traced example of docs/integrations/deepeval.md, as written."""
    monkeypatch.chdir(tmp_path)
    page = (ROOT / "docs" / "integrations" / "deepeval.md").read_text(encoding="utf-8")
    [code] = re.findall(r"^A traced run.*?^```py\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    exec(compile(code, "docs/integrations/deepeval.md", "exec"), {"__name__": "__docs__"})
    [shown] = re.findall(r"^The traced run prints.*?^```text\n(.*?)^```", page,
                         re.DOTALL | re.MULTILINE)
    printed = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith(("looping ", "clean "))]
    assert printed == shown.splitlines()


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import maxrepeat.scorers.deepeval as module

    monkeypatch.setattr(module, "_CLASS", None)
    monkeypatch.setitem(sys.modules, "deepeval.metrics", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'maxrepeat\[deepeval\]'"):
        max_repeat(MaxRepeatConfig(max=3))


