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
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, SCRIPTS, Outcome, check, tool_output

pytestmark = [  # Inspect's own leftovers, as in test_guard_inspect
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
]


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


def _tools(executed: list[str]) -> list[Any]:
    from inspect_ai.tool import Tool, tool

    @tool
    def run_tests() -> Tool:
        async def execute(path: str) -> str:
            """Run the tests.

            Args:
                path: Which tests to run.
            """
            executed.append("run_tests")
            return tool_output("run_tests", {"path": path})

        return execute

    @tool
    def edit() -> Tool:
        async def execute(path: str, text: str) -> str:
            """Write a file.

            Args:
                path: The file.
                text: What to write.
            """
            executed.append("edit")
            return tool_output("edit", {"path": path})

        return execute

    return [run_tests(), edit()]


def _outputs(scenario: str) -> list[Any]:
    """The scripted calls, each from the third after an overflow, then ``submit``."""
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ModelOutput,
        ModelUsage,
    )

    overflow = ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content=""), stop_reason="model_length")])
    outputs = []
    for i, (name, args) in enumerate(SCRIPTS[scenario]):
        outputs += [overflow] if i >= 2 else []
        outputs.append(ModelOutput.for_tool_call("mockllm/model", name, args,
                                                 tool_call_id=f"call_{i}"))
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "Done."},
                                             tool_call_id="submit"))
    for output in outputs:  # given usage, the mock model counts no tokens (no download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return outputs


def _run(scenario: str, config: MaxRepeatConfig, truncation: str, log_dir: Path) -> Outcome:
    from inspect_ai import Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import get_model

    executed: list[str] = []
    record = _Record(truncation)
    guard = loop_guard(config)
    agent = react(tools=_tools(executed), on_continue=guard.on_continue,
                  approval=guard.approval, truncation=record.filter)
    task = Task(dataset=[Sample(input="Make the tests pass.")], solver=agent,
                message_limit=80)
    [log] = eval(task, model=get_model("mockllm/model", custom_outputs=_outputs(scenario)),
                 log_dir=str(log_dir), display="none")
    gc.collect()
    assert log.status == "success", log.error
    samples = read_eval_log(log.location, resolve_attachments=True).samples
    assert samples is not None
    sample = samples[0]
    assert record.truncated > 0  # the history was truncated during the run
    record.add(sample.messages)
    contexts = ["\n".join(m.text for m in e.input) for e in sample.events
                if e.event == "model" and e.output.stop_reason != "model_length"]
    messages = [m for m in record.messages.values()
                if not any(c.function == "submit" for c in getattr(m, "tool_calls", None) or ())]
    stopped = None
    if guard.stopped:
        stopped = _Stopped(next(iter(guard.stopped.values())).results,
                           sample.store.get("maxrepeat"))
    return Outcome(contexts, trajectory_from_messages(messages), len(executed), stopped)


class _Stopped:
    """The stop as a test sees it: the guard's results and what the log's store holds."""

    def __init__(self, results: Any, stored: Any) -> None:
        self.results = results
        self.stored = stored

    def __str__(self) -> str:
        return str(self.stored)


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
    from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model

    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))
    calls = [("e0", 5), ("e1", 2)]
    outputs = [ModelOutput.for_tool_call("mockllm/model", "run_tests", {"path": "tests/"},
                                         tool_call_id=f"{epoch}_{i}")
               for epoch, n in calls for i in range(n)]
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "ok"},
                                             tool_call_id="e1_submit"))
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    guard = loop_guard(NAME_ARGS)
    executed: list[str] = []
    task = Task(dataset=[Sample(input=[ChatMessageUser(content="Fix a.")])],
                solver=react(tools=_tools(executed), on_continue=guard.on_continue,
                             approval=guard.approval), epochs=Epochs(2))
    [log] = eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
                 log_dir=str(tmp_path), display="none", max_samples=1)
    gc.collect()
    assert log.status == "success", log.error
    assert log.samples is not None
    first, second = sorted(log.samples, key=lambda s: s.epoch)
    assert first.messages[1].id == second.messages[1].id  # the same first message
    assert first.store.get("maxrepeat") and "maxrepeat" not in second.store
    assert not any("maxrepeat loop guard" in m.text for m in second.messages)
    assert executed == ["run_tests"] * (3 + 2)  # the first epoch: the 4th refused, 5th stopped
