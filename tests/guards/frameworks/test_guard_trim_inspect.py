"""The Inspect guard when ``react()`` truncates the history during the run: a real eval
whose ``mockllm/model`` answers ``stop_reason="model_length"`` (the context window
overflowed) before each step from the third on, so ``react()`` replaces
``state.messages`` with its ``truncation`` filter's shorter list long before the loop is
caught: Inspect's own ``"auto"`` (``trim_messages``: system and input kept, the oldest 30%
of the rest dropped) and a custom filter keeping only the last four messages after a note
standing for the rest (the system prompt and the input gone too; ``react()`` waits for an
operator when no user message is left). The guard must still warn, refuse and stop where
``grade()`` of the whole run says, and count what ``grade()`` counts of every message of
the run (kept as the filter was given them, trimmed or not)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.inspect import loop_guard
from maxrepeat.readers.inspect_log import trajectory_from_messages
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, Outcome, check, steps
from tests.guards.frameworks import _inspect_scripts as isc

pytestmark = isc.PYTESTMARK


class _Record:
    """Every message of the run once (by id), in order: what the truncation filter is
    given and what the sample ends with."""

    def __init__(self, truncation: str) -> None:
        self.truncation = truncation
        self.messages: dict[str, Any] = {}
        self.truncated = 0

    def add(self, messages: list[Any]) -> None:
        for message in messages:
            self.messages.setdefault(message.id, message)

    async def filter(self, messages: list[Any]) -> list[Any]:
        from inspect_ai.model import ChatMessageUser, trim_messages

        self.add(messages)
        self.truncated += 1
        if self.truncation == "auto":
            return await trim_messages(messages)
        return [ChatMessageUser(content="(earlier messages dropped)"), *messages[-4:]]


def _run(scenario: str, config: MaxRepeatConfig, truncation: str, log_dir: Path) -> Outcome:
    """The scenario's run, the model's context window overflowing from the third call on."""
    from inspect_ai.agent import react

    executed: list[str] = []
    record = _Record(truncation)
    guard = loop_guard(config)
    agent = react(tools=isc.tools(executed), on_continue=guard.on_continue,
                  approval=guard.approval, truncation=record.filter)
    scripted = isc.outputs(steps(scenario), overflow_from=2)
    sample = isc.sample_of(isc.eval_one(agent, scripted, log_dir, message_limit=80))
    assert record.truncated > 0  # the history was truncated during the run
    record.add(sample.messages)
    messages = isc.without_submit(list(record.messages.values()))
    return Outcome(isc.contexts(sample), trajectory_from_messages(messages), len(executed),
                   isc.stopped(guard, sample))


@pytest.mark.parametrize("truncation", ["auto", "note-and-last-four"])
@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_inspect_guard_holds_while_react_truncates(
        scenario: str, truncation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    outcome = _run(scenario, NAME_ARGS, truncation, tmp_path)
    check(outcome, NAME_ARGS, scenario)
    if outcome.stopped is not None:
        assert outcome.stopped.stored == [r.to_dict() for r in outcome.stopped.results]


@pytest.mark.parametrize("truncation", ["auto", "note-and-last-four"])
def test_inspect_observation_guard_holds_while_react_truncates(
        truncation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    outcome = _run("loop", OBSERVATION, truncation, tmp_path)
    check(outcome, OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)


def test_inspect_epochs_reusing_the_input_messages_are_runs_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sample whose input is messages (copied into each epoch with the same ids, so the
    same first message): each epoch is a run of its own, as its store says. The first
    epoch loops and is stopped; the second makes the same call twice, no loop at max=2
    (the first run's state would refuse it at once)."""
    from inspect_ai import Epochs, Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser, ModelOutput, get_model

    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    calls = [("e0", 5), ("e1", 2)]
    outputs = [ModelOutput.for_tool_call("mockllm/model", "run_tests", {"path": "tests/"},
                                         tool_call_id=f"{epoch}_{i}")
               for epoch, n in calls for i in range(n)]
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "ok"},
                                             tool_call_id="e1_submit"))
    guard = loop_guard(NAME_ARGS)
    executed: list[str] = []
    task = Task(dataset=[Sample(input=[ChatMessageUser(content="Fix a.")])],
                solver=react(tools=isc.tools(executed), on_continue=guard.on_continue,
                             approval=guard.approval), epochs=Epochs(2))
    [log] = eval(task, model=get_model("mockllm/model", custom_outputs=isc.with_usage(outputs)),
                 log_dir=str(tmp_path), display="none", max_samples=1)
    gc.collect()
    assert log.status == "success", log.error
    assert log.samples is not None
    first, second = sorted(log.samples, key=lambda s: s.epoch)
    assert first.messages[1].id == second.messages[1].id  # the same first message
    assert first.store.get("maxrepeat") and "maxrepeat" not in second.store
    assert not any("maxrepeat loop guard" in m.text for m in second.messages)
    assert executed == ["run_tests"] * (3 + 2)  # the first epoch: the 4th refused, 5th stopped
