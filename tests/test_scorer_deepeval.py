"""The DeepEval metric run through ``deepeval.evaluate`` offline (no key, telemetry off):
each scripted run is an ``LLMTestCase`` whose ``tools_called`` are the calls the tools
answered; each verdict equals ``grade()`` of the same calls, one call per turn (DeepEval
keeps no turns), an error being the output the agent read (DeepEval keeps no error flag)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "0")
deepeval = pytest.importorskip("deepeval", reason="needs the deepeval extra")

from deepeval.evaluate import DisplayConfig
from deepeval.test_case import LLMTestCase, ToolCall

from maxrepeat import MaxRepeatConfig, MissingExtraError
from maxrepeat.scorers.deepeval import max_repeat

from .conftest import ROOT
from .scorer_scenarios import CONFIGS, LOOPS, SCRIPTS, Turn, expected, run_tool

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::FutureWarning", "ignore::UserWarning")


def _case(name: str, script: list[Turn]) -> LLMTestCase:
    """The test case of a scripted run: each call, and what its tool answered."""
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
    same = [ToolCall(name="read_file", input_parameters={"path": "a.py"}, output="x")] * 2
    metric = max_repeat(MaxRepeatConfig(max=1))
    assert metric.measure(LLMTestCase(input="go", tools_called=same)) == 0.0
    assert metric.reason.endswith("repeated 2 times in a row at steps 0-1 (max 1)")
    assert metric.measure(LLMTestCase(input="go", tools_called=None)) == 1.0


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


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import maxrepeat.scorers.deepeval as module

    monkeypatch.setattr(module, "_CLASS", None)
    monkeypatch.setitem(sys.modules, "deepeval.metrics", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'maxrepeat\[deepeval\]'"):
        max_repeat(MaxRepeatConfig(max=3))


