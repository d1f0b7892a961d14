"""The AutoGen guard in a real ``AssistantAgent`` driven by AutoGen's own
``ReplayChatCompletionClient`` (autogen-ext), through a loop, a cycle, a clean run,
parallel calls and a second run on the same guard."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from maxrepeat import grade
from maxrepeat.guards.frameworks.autogen import loop_guard, trajectory_from_messages
from tests import guard_scenarios as gs
from tests.guards.frameworks import _autogen_scripts as ags

_needs = gs.needs("autogen_agentchat", reason="the autogen extra (a venv of its own: "
                  "autogen-core pins protobuf 5, the other extras have 7)")


def _replay(script: list[list[tuple[str, dict[str, Any]]]], sent: list[str]) -> Any:
    return ags.replay(script, lambda messages: sent.append(ags.text(messages)))


def _agent(guard: Any, scenario: str, sent: list[str], executed: list[str],
           runs: int = 1, iterations: int = 50, stream: bool = False) -> Any:
    return guard.agent("dev", model_client=_replay(gs.steps(scenario) * runs, sent),
                       tools=gs.scripted_tools(executed), max_tool_iterations=iterations,
                       model_client_stream=stream)


def _run(scenario: str, guard: Any, agent: Any = None) -> gs.Outcome:
    sent: list[str] = []
    executed: list[str] = []
    agent = agent or _agent(guard, scenario, sent, executed)
    stopped = ags.run(agent)
    messages = asyncio.run(agent.model_context.get_messages())
    return gs.Outcome(sent, trajectory_from_messages(messages), len(executed), stopped)


@pytest.mark.parametrize("case", gs.CASES)
def test_autogen_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(lambda scenario, config: _run(scenario, loop_guard(config)), case)


@pytest.mark.parametrize("scenario", ["loop", "cycle"])
def test_autogen_streaming_model_client_is_guarded_the_same(scenario: str) -> None:
    guard = loop_guard(gs.NAME_ARGS)
    sent: list[str] = []
    executed: list[str] = []
    agent = _agent(guard, scenario, sent, executed, stream=True)
    outcome = _run(scenario, guard, agent)
    outcome.contexts, outcome.executed = sent, len(executed)
    gs.check(outcome, gs.NAME_ARGS, scenario)


def test_autogen_second_run_on_the_same_guard_after_a_stop_starts_clean() -> None:
    guard = loop_guard(gs.NAME_ARGS)
    first = _run("loop", guard)
    assert first.stopped is not None
    gs.check(_run("clean", guard), gs.NAME_ARGS, "clean")
    gs.check(_run("loop", guard), gs.NAME_ARGS, "loop")


def test_autogen_same_agent_new_task_after_a_stop_starts_clean() -> None:
    """The same agent (its context keeps the stopped run) given a new task: the guard
    counts the new run only."""
    guard = loop_guard(gs.NAME_ARGS)
    sent: list[str] = []
    executed: list[str] = []
    agent = _agent(guard, "loop", sent, executed, runs=2)
    first = _run("loop", guard, agent)
    assert first.stopped is not None and len(executed) == 3
    before = len(asyncio.run(agent.model_context.get_messages()))
    second = _run("loop", guard, agent)  # the replay goes on: the same call, again
    assert second.stopped is not None and len(executed) == 3 + 3
    messages = asyncio.run(agent.model_context.get_messages())
    run = trajectory_from_messages(messages[before:])
    [live] = second.stopped.results
    assert live.evidence == grade(run, gs.NAME_ARGS).evidence
    assert live.metadata.occurrences == 5


def test_autogen_count_equals_grade_of_the_task_result() -> None:
    """A run that ends on its own: the guard's results are `grade` of the agent's
    ``TaskResult.messages``, converted."""
    from msgspec.structs import replace

    guard = loop_guard(gs.NAME_ARGS)
    agent = _agent(guard, "cycle", [], [], iterations=3)  # AutoGen's own limit ends it
    result = asyncio.run(agent.run(task="Make the tests pass."))
    traj = trajectory_from_messages(result.messages)
    [live], final = guard.results, grade(traj, gs.NAME_ARGS)
    assert replace(live.metadata, source=None) == replace(final.metadata, source=None)
    assert live.metadata.watched_steps == 3 and live.passed == final.passed


def test_autogen_pages_examples_run_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    """The page's ``py`` blocks (test_docs.py runs ``python`` blocks in the main venv,
    which cannot hold this extra): the set-up makes an agent, the complete run stops."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "integrations" / "autogen.md")
    setup, complete = re.findall(r"^```py\n(.*?)^```", page.read_text(),
                                 re.MULTILINE | re.DOTALL)
    names: dict[str, Any] = {"__name__": "__docs__"}
    exec(compile(setup, "autogen.md", "exec"), names)

    agent = names["make_agent"](_replay([[("run_tests", {"path": "t/"})]] * 20, []),
                                gs.scripted_tools([])[:1])
    with pytest.raises(names["stop_error_class"]()):  # the live preset stops it too
        asyncio.run(agent.run(task="Make the tests pass."))
    assert type(agent).__name__ == "AssistantAgent"
    exec(compile(complete, "autogen.md", "exec"), {"__name__": "__docs__"})
    out = capsys.readouterr().out
    assert "run_tests" in out and "5 times in a row" in out, out


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "autogen", "autogen_agentchat.agents", "autogen")
