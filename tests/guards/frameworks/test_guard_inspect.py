"""The Inspect guard in a real Inspect eval: a ``react()`` agent with the guard's
``on_continue`` and approval policy, driven by Inspect's ``mockllm/model`` with scripted
outputs, through a loop, a cycle and a clean run. What the model saw is read from the
model events of the log Inspect writes."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.inspect import loop_guard
from maxrepeat.readers.inspect_log import trajectory_from_messages
from tests import guard_scenarios as gs
from tests.guards.frameworks import _inspect_scripts as isc


def _run(scenario: str, config: MaxRepeatConfig, log_dir: Path,
         wiring: tuple[str, ...] = ("on_continue", "approval")) -> gs.Outcome:
    from inspect_ai.agent import react

    executed: list[str] = []
    guard = loop_guard(config)
    agent = react(tools=isc.tools(executed),
                  on_continue=guard.on_continue if "on_continue" in wiring else None,
                  approval=guard.approval if "approval" in wiring else None)
    log = isc.eval_one(agent, isc.outputs(gs.steps(scenario)), log_dir, message_limit=60)
    if len(wiring) < 2:
        return log  # type: ignore[no-any-return]
    sample = isc.sample_of(log)
    messages = isc.without_submit(sample.messages)
    return gs.Outcome(isc.contexts(sample), trajectory_from_messages(messages), len(executed),
                      isc.stopped(guard, sample))


pytestmark = isc.PYTESTMARK


@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_inspect_react_agent_is_warned_refused_and_stopped(
        scenario: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    outcome = _run(scenario, gs.NAME_ARGS, tmp_path)
    gs.check(outcome, gs.NAME_ARGS, scenario)
    if outcome.stopped is not None:
        # The results are in the sample's store, so the log shows why the agent stopped.
        assert outcome.stopped.stored == [r.to_dict() for r in outcome.stopped.results]


def test_inspect_observation_mode_warns_blocks_and_stops_after_the_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    gs.check(_run("loop", gs.OBSERVATION, tmp_path), gs.OBSERVATION, "loop")


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from maxrepeat import MissingExtraError

    monkeypatch.setitem(sys.modules, "inspect_ai.approval", None)
    with pytest.raises(MissingExtraError, match=r"maxrepeat\[inspect\]"):
        loop_guard(gs.NAME_ARGS)


def test_inspect_one_guard_tells_samples_apart(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Two samples through one guard: the second starts from nothing (the same call twice
    in each sample is no loop at max=2, though four in a row would be)."""
    from inspect_ai import Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model

    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    # each sample: the same call twice (at max=2, never a loop on its own), then submit
    outputs = []
    for n in range(2):
        outputs += [ModelOutput.for_tool_call("mockllm/model", "run_tests", {"path": "tests/"},
                                              tool_call_id=f"s{n}_{i}") for i in range(2)]
        outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "ok"},
                                                 tool_call_id=f"s{n}_submit"))
    guard = loop_guard(gs.NAME_ARGS)
    task = Task(dataset=[Sample(input="Fix a.", id="a"), Sample(input="Fix b.", id="b")],
                solver=react(tools=isc.tools([])[:1], on_continue=guard.on_continue,
                             approval=guard.approval))
    [log] = eval(task, model=get_model("mockllm/model", custom_outputs=isc.with_usage(outputs)),
                 log_dir=str(tmp_path), display="none", max_samples=1)
    gc.collect()
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2
    assert len(guard.samples) == 2 and not guard.stopped
    for sample in log.samples:
        assert not any("maxrepeat loop guard" in m.text for m in sample.messages)


def test_inspect_samples_sharing_react_system_message_are_apart() -> None:
    """react() inserts one system message object (one id) into every sample it runs, and
    samples run at the same time: the key is the first message after it."""
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    guard = loop_guard(gs.NAME_ARGS)
    system = ChatMessageSystem(content="You are a helpful agent.")
    a = [system, ChatMessageUser(content="Fix a.")]
    b = [system, ChatMessageUser(content="Fix b.")]
    key_a, state_a = guard._sample(a)
    key_b, state_b = guard._sample(b)
    assert key_a != key_b and state_a is not state_b
    assert guard._sample(a)[1] is state_a


def test_inspect_page_react_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The page's complete ``react()`` eval runs as written and the guard stops it."""
    import re

    page = (Path(__file__).parents[3] / "docs" / "integrations" / "inspect.md").read_text(
        encoding="utf-8")
    [code] = re.findall(r"^A complete eval.*?^```py\n(.*?)^```", page, re.DOTALL | re.MULTILINE)
    exec(compile(code, "docs/integrations/inspect.md", "exec"), {"__name__": "__docs__"})
    gc.collect()
    assert capsys.readouterr().out.startswith(
        'success run_tests {"path": "tests/"} repeated 5 times in a row')


@pytest.mark.parametrize("missing", ["on_continue", "approval"])
def test_inspect_partial_wiring_fails_naming_what_is_missing(
        missing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    wiring = tuple(w for w in ("on_continue", "approval") if w != missing)
    log: Any = _run("loop", gs.NAME_ARGS, tmp_path, wiring)
    assert log.status == "error"
    assert f"{missing}=guard.{missing}" in str(log.error)
