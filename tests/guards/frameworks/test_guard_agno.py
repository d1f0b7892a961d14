"""The Agno guard in a real Agno ``Agent`` whose ``OpenAIChat`` model talks to a scripted
Chat Completions server on 127.0.0.1 (`tests.scripted_chat`), streamed, through a loop,
a cycle, a clean run, parallel calls, a run after a stop on the same guard, an async run
and observation mode.

Agno is imported inside the tests (its import costs seconds): only the worker that runs
them pays for it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.guards.frameworks.agno import (
    NOTE_MARK,
    loop_guard,
    stop_error_class,
    trajectory_from_messages,
)
from tests import guard_scenarios as gs
from tests.scripted_chat import ChatModel, Step


def _context(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def _agent(url: str, guard: Any, executed: list[str]) -> Any:
    pytest.importorskip("openai")  # Agno's OpenAIChat needs it
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    model = OpenAIChat(id="scripted", base_url=url, api_key="scripted", max_retries=0)
    # telemetry=False: Agno would send each run to its API (no network in tests)
    return Agent(model=model, tools=gs.scripted_tools(executed), tool_hooks=[guard],
                 telemetry=False)


async def _arun(agent: Any) -> Any:
    last = None
    try:
        async for event in agent.arun("Make the tests pass.", stream=True,
                                      yield_run_output=True):
            last = event
    finally:  # the model's async client, closed in the loop that opened it
        if agent.model.async_client is not None:
            await agent.model.async_client.close()
    return last


def _run(scenario: str, config: MaxRepeatConfig, guard: Any = None, *,
         use_async: bool = False) -> tuple[gs.Outcome, Any]:
    guard = guard if guard is not None else loop_guard(config)
    executed: list[str] = []
    with ChatModel(list(gs.steps(scenario))).serving() as chat:
        agent = _agent(chat.url, guard, executed)
        if use_async:
            result = asyncio.run(_arun(agent))
        else:
            *_, result = agent.run("Make the tests pass.", stream=True, yield_run_output=True)
    assert type(result).__name__ == "RunOutput", result
    contexts = [_context(body) for body in chat.requests]
    outcome = gs.Outcome(contexts, trajectory_from_messages(result.messages), len(executed),
                         guard.stop_error(result))
    return outcome, result


@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_agno_agent_is_warned_refused_and_stopped(scenario: str) -> None:
    outcome, result = _run(scenario, gs.NAME_ARGS)
    gs.check(outcome, gs.NAME_ARGS, scenario)
    if scenario != "clean":
        # Agno's own stop: no model call after the stopped step, whose calls did not run
        assert len(outcome.contexts) == len([e for e in outcome.trajectory.events
                                             if e.type == "turn_start"])
        assert isinstance(outcome.stopped, stop_error_class())
        assert str(outcome.stopped).startswith(f"{gs.MARK} (stopped)")


def test_agno_parallel_calls_of_one_response_are_one_step() -> None:
    outcome, _ = _run("parallel", gs.NAME_ARGS)
    gs.check(outcome, gs.NAME_ARGS, "parallel")
    # warned once, after the third response (six calls, three steps), not once per call
    assert [gs.MARK in c for c in outcome.contexts].index(True) == 3
    assert outcome.executed == 2 * 3
    # the refused step's two calls were both refused, the model told the truth
    refused = [e for e in outcome.trajectory.events if e.type == "tool_result"
               and str(e.data.result).startswith(f"{gs.MARK} (blocked)")]
    assert len(refused) == 2


def test_agno_stop_error_is_agnos_stop_and_carries_the_verdict() -> None:
    from agno.exceptions import StopAgentRun

    outcome, result = _run("loop", gs.NAME_ARGS)
    assert isinstance(outcome.stopped, StopAgentRun)
    assert outcome.stopped.results[0].metadata.occurrences == 5
    assert "5 times in a row" in str(outcome.stopped)
    assert outcome.stopped.results[0].evidence == grade(outcome.trajectory, gs.NAME_ARGS).evidence


def test_agno_guard_reused_after_a_stop_starts_the_next_run_clean() -> None:
    guard = loop_guard(gs.NAME_ARGS)
    first, result = _run("loop", gs.NAME_ARGS, guard)
    assert first.stopped is not None
    second, result2 = _run("loop", gs.NAME_ARGS, guard)
    gs.check(second, gs.NAME_ARGS, "loop")  # the same as a first run: 3 ran, warned, refused
    assert second.executed == first.executed == 3
    clean, result3 = _run("clean", gs.NAME_ARGS, guard)
    gs.check(clean, gs.NAME_ARGS, "clean")
    assert guard.stop_error(result3) is None
    assert guard.stop_error(result) is first.stopped  # each run's own


def test_agno_async_run_is_guarded_the_same() -> None:
    outcome, _ = _run("cycle", gs.NAME_ARGS, use_async=True)
    gs.check(outcome, gs.NAME_ARGS, "cycle")


def test_agno_observation_mode_warns_blocks_and_stops_after_the_calls() -> None:
    outcome, result = _run("loop", gs.OBSERVATION)
    gs.check(outcome, gs.OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)
    # the last step's result is kept (with the note) in Agno's record
    last = [m for m in result.messages if m.role == "tool"][-1]
    assert last.content.startswith(gs.tool_output("run_tests", {"path": "tests/"}) + NOTE_MARK)


def test_agno_calls_agno_answers_itself_count_and_the_warning_comes_in_time() -> None:
    """A response asking for a real tool and an unknown one: Agno answers the unknown
    call itself (it never reaches the hook); the guard reads that answer from the run's
    messages, so the step still ends at its last hooked call and is warned in time."""
    guard = loop_guard(gs.NAME_ARGS)
    executed: list[str] = []
    steps: list[Step] = [[("run_tests", {"path": "tests/"}), ("nope", {})]] * 9
    with ChatModel(steps).serving() as chat:
        agent = _agent(chat.url, guard, executed)
        *_, result = agent.run("Make the tests pass.", stream=True, yield_run_output=True)
    stopped = guard.stop_error(result)
    assert stopped is not None and len(executed) == 3  # 3 ran, 1 refused, then stopped
    assert [gs.MARK in _context(body) for body in chat.requests] == [False] * 3 + [True] * 2
    assert stopped.results[0].evidence == grade(
        trajectory_from_messages(result.messages), gs.NAME_ARGS).evidence


def test_agno_warning_stays_in_the_history() -> None:
    outcome, _ = _run("cycle", gs.NAME_ARGS)
    warned = [i for i, text in enumerate(outcome.contexts) if "(warning)" in text]
    assert warned and warned == list(range(warned[0], len(outcome.contexts)))


@pytest.mark.slow  # Agno's own step with its streamed OpenAI client: ~0.25 s here
def test_agno_guard_cost_per_call(capsys: pytest.CaptureFixture[str]) -> None:
    """The guard's own CPU per tool call in a real clean run of 100 steps: the hook's
    thread CPU time less the tool's; printed for the docs page (first and last tenth)."""
    guard = loop_guard(MaxRepeatConfig.preset("live"))
    spent: list[float] = []

    def timed(function_name: str, function_call: Any, arguments: dict[str, Any],
              run_context: Any = None) -> Any:
        inner = 0.0

        def tool(**kwargs: Any) -> Any:
            nonlocal inner
            t = time.thread_time()
            try:
                return function_call(**kwargs)
            finally:
                inner += time.thread_time() - t

        t = time.thread_time()
        result = guard(function_name, tool, arguments, run_context)
        spent.append(time.thread_time() - t - inner)
        return result

    n = 100
    executed: list[str] = []
    with ChatModel(gs.clean_steps(n)).serving() as chat:
        agent = _agent(chat.url, timed, executed)
        *_, result = agent.run("Edit the files.", stream=True, yield_run_output=True)
    assert len(executed) == len(spent) == n
    assert guard.stop_error(result) is None
    gs.cost_per_call("agno", spent, capsys)


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "agno", "agno.exceptions", "agno")
