"""The Braintrust scorer in a real ``braintrust.Eval`` run locally (``no_send_logs=True``,
no API key): the task is a scripted agent returning its OpenAI-style messages; each score
equals ``grade()`` of the same run (tests/scorer_scenarios) and ``maxrepeat grade`` of
the output saved as JSON."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

braintrust = pytest.importorskip("braintrust", reason="needs the braintrust extra")

import maxrepeat
from maxrepeat import MaxRepeatConfig, MissingExtraError
from maxrepeat.scorers.braintrust import max_repeat
from tests.conftest import ROOT
from tests.scorer_scenarios import CONFIGS, LOOPS, SCRIPTS, Turn, expected, run_tool

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::FutureWarning", "ignore::UserWarning")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("BRAINTRUST_API_KEY", "BRAINTRUST_API_URL", "BRAINTRUST_APP_URL"):
        monkeypatch.delenv(key, raising=False)


def agent(script: list[Turn]) -> list[dict[str, Any]]:
    """A scripted agent: per turn, the model's message asking for the calls, then the
    tools' answers; returns the conversation (the chat-completions shape)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Make the tests pass."}]
    for t, turn in enumerate(script):
        calls = [{"id": f"call_{t}_{i}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args)}}
                 for i, (name, args) in enumerate(turn)]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call, (name, args) in zip(calls, turn, strict=False):
            result, error = run_tool(name, args)
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": error if error is not None else result})
    messages.append({"role": "assistant", "content": "Done."})
    return messages


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_eval_scores_equal_grade(config: str, tmp_path: Path) -> None:
    scorer = max_repeat(CONFIGS[config], name="loops")
    result = braintrust.Eval("maxrepeat-scorer", data=[{"input": n} for n in SCRIPTS],
                             task=lambda input: agent(SCRIPTS[input]), scores=[scorer],
                             no_send_logs=True)
    assert {r.input for r in result.results} == set(SCRIPTS)
    for run in result.results:
        assert run.error is None
        want = expected(SCRIPTS[run.input], CONFIGS[config], error_flag=False)
        assert run.scores["loops"] == want.score == (0.0 if LOOPS[run.input] else 1.0)
        score = scorer(input=run.input, output=run.output)
        assert score.name == "loops" and score.score == want.score
        assert score.metadata["evidence"] == want.evidence
        assert score.metadata["occurrences"] == want.occurrences
        assert score.metadata["config"] == CONFIGS[config].to_dict()
        # the output saved as JSON, read back by `maxrepeat grade`'s reader
        saved = tmp_path / f"{run.input}.json"
        saved.write_text(json.dumps(run.output), encoding="utf-8")
        [read] = maxrepeat.read_trajectories(saved)
        assert maxrepeat.grade(read, CONFIGS[config]).evidence == want.evidence


def test_output_must_be_messages() -> None:
    scorer = max_repeat(MaxRepeatConfig(max=3))
    with pytest.raises(TypeError, match="must be a list of chat messages"):
        scorer(input="x", output="I fixed it.")
    assert scorer(output={"messages": agent(SCRIPTS["loop"])}).score == 0.0


def test_page_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The runnable example of docs/integrations/braintrust.md, as written."""
    page = (ROOT / "docs" / "integrations" / "braintrust.md").read_text(encoding="utf-8")
    [code] = re.findall(r"^A complete run.*?^```py\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    exec(compile(code, "docs/integrations/braintrust.md", "exec"), {"__name__": "__docs__"})
    [shown] = re.findall(r"^It prints.*?^```text\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    printed = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith(("looping ", "clean "))]  # Eval prints its summary too
    assert printed == shown.splitlines()


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "braintrust", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'maxrepeat\[braintrust\]'"):
        max_repeat(MaxRepeatConfig(max=3))
