"""The Google ADK guard in a real ADK ``Runner`` driven by ADK's own scripted test model
(``MockModel`` of ``google.adk.cli.agent_test_runner``, which replays a list of model
contents), through a loop, a cycle, a clean run, parallel calls, a second run on the same
guard after a stop, and the count against ``grade()`` of the session's events."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from tests import guard_scenarios as gs

Script = list[list[tuple[str, dict[str, Any]]]]


def _content(step: list[tuple[str, dict[str, Any]]] | str) -> Any:
    from google.genai import types

    if isinstance(step, str):
        return types.Content(role="model", parts=[types.Part(text=step)])
    return types.Content(role="model", parts=[
        types.Part(function_call=types.FunctionCall(name=name, args=args))
        for name, args in step])


def _text(request: Any) -> str:
    out = []
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                out.append(part.text)
            if part.function_response is not None:
                out.append(str(part.function_response.response))
    return "\n".join(out)


def _runner(script: Script, guard: Any) -> tuple[Any, Any, list[str]]:
    """An ADK runner of the fixer agent (its model replaying ``script``, then "Done."),
    its model, and the list of the tools that ran."""
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.cli.agent_test_runner import MockModel
    from google.adk.runners import InMemoryRunner

    model = MockModel(responses=[], requests=[])
    model.responses = [*MockModel.create([_content(s) for s in script]).responses,
                       *MockModel.create([_content("Done.")]).responses]
    executed: list[str] = []
    agent = LlmAgent(name="fixer", model=model, tools=gs.scripted_tools(executed))
    runner = InMemoryRunner(app=App(name="fixer", root_agent=agent, plugins=[guard]))
    return runner, model, executed


async def _session(runner: Any) -> str:
    session = await runner.session_service.create_session(app_name="fixer", user_id="u")
    return str(session.id)


async def _invoke(runner: Any, session_id: str, text: str) -> tuple[list[Any], Any]:
    """One run (invocation) in the session: the session's events after it, the stop."""
    from google.genai import types

    from maxrepeat.guards.frameworks.google_adk import stop_error_class

    stopped = None
    task = types.Content(role="user", parts=[types.Part(text=text)])
    try:
        async for _ in runner.run_async(user_id="u", session_id=session_id, new_message=task):
            pass
    except stop_error_class() as err:
        stopped = err
    done = await runner.session_service.get_session(app_name="fixer", user_id="u",
                                                    session_id=session_id)
    return list(done.events), stopped


def _run(script: Script, guard: Any) -> gs.Outcome:
    from maxrepeat.guards.frameworks.google_adk import trajectory_from_events

    runner, model, executed = _runner(script, guard)

    async def main() -> tuple[list[Any], Any]:
        return await _invoke(runner, await _session(runner), "Make the tests pass.")

    events, stopped = asyncio.run(main())
    contexts = [_text(r) for r in model.requests]
    return gs.Outcome(contexts, trajectory_from_events(events), len(executed), stopped)


def _guard(config: MaxRepeatConfig) -> Any:
    from maxrepeat.guards.frameworks.google_adk import loop_guard

    return loop_guard(config)


@pytest.mark.parametrize("case", gs.CASES)
def test_adk_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(lambda scenario, config: _run(gs.steps(scenario), _guard(config)), case)


def test_adk_live_preset_catches_the_cycle() -> None:
    live = MaxRepeatConfig.preset("live", max=2)
    gs.check(_run(gs.steps("cycle"), _guard(live)), live, "cycle")


def test_adk_stop_error_is_raised_as_it_is_and_counts_as_grade_does() -> None:
    from maxrepeat.guards.frameworks.google_adk import stop_error_class

    outcome = _run(gs.steps("loop"), _guard(gs.NAME_ARGS))
    assert type(outcome.stopped) is stop_error_class()  # not ADK's plug-in RuntimeError
    assert isinstance(outcome.stopped, RuntimeError)
    assert outcome.stopped.results[0].metadata.occurrences == 5
    assert grade(outcome.trajectory, gs.NAME_ARGS).metadata.occurrences == 5
    assert "5 times in a row" in str(outcome.stopped)


def test_adk_second_run_on_the_same_guard_after_a_stop_starts_clean() -> None:
    guard = _guard(gs.NAME_ARGS)
    first = _run(gs.steps("loop"), guard)
    assert first.stopped is not None
    gs.check(_run(gs.steps("clean"), guard), gs.NAME_ARGS, "clean")
    gs.check(_run(gs.steps("loop"), guard), gs.NAME_ARGS, "loop")
    assert guard.runs == {}  # nothing kept of finished or stopped runs


def test_adk_next_run_in_the_same_session_after_a_stop_starts_clean() -> None:
    """The stopped step's calls are answered (with the stop message), so the session is a
    valid history the next run of the same session goes on from, counted from nothing."""
    from maxrepeat.guards.frameworks.google_adk import trajectory_from_events

    loop, clean = gs.steps("loop"), gs.steps("clean")
    runner, model, executed = _runner([*loop[:5], *clean], _guard(gs.NAME_ARGS))

    async def main() -> tuple[list[Any], Any, list[Any], Any]:
        session = await _session(runner)
        first, stopped = await _invoke(runner, session, "Make the tests pass.")
        after, again = await _invoke(runner, session, "Go on.")
        return first, stopped, after, again

    first, stopped, after, again = asyncio.run(main())
    assert stopped is not None and len(model.requests) - len(clean) - 1 == 5
    calls = {p.function_call.id for e in first for p in (e.content.parts if e.content else [])
             if p.function_call}
    answered = {p.function_response.id for e in first
                for p in (e.content.parts if e.content else []) if p.function_response}
    assert calls == answered  # every call of the stopped run has its response
    last = [p.function_response.response for e in first
            for p in (e.content.parts if e.content else []) if p.function_response][-1]
    assert "(stopped)" in str(last)
    contexts = [_text(r).split("Go on.")[-1] for r in model.requests[5:]]
    ran = len(executed) - 3  # the first run ran 3 calls
    gs.check(gs.Outcome(contexts, trajectory_from_events(after[len(first):]), ran, again),
             gs.NAME_ARGS, "clean")


def test_adk_warning_stays_in_the_history() -> None:
    gs.check_warning_stays(_run(gs.steps("cycle"), _guard(gs.NAME_ARGS)))


def test_adk_guard_cost_per_tool_call(capsys: pytest.CaptureFixture[str]) -> None:
    """The guard's own callbacks, timed over a clean run of 100 single-call steps (the
    figure on docs/integrations/google-adk.md)."""
    guard = _guard(MaxRepeatConfig.preset("live"))
    spent = [0.0]  # CPU seconds of each step's hooks (a step starts before its model call)
    for name in ("before_model_callback", "after_model_callback", "before_tool_callback"):
        inner = getattr(guard, name)

        async def timed(*, _inner: Any = inner, _opens: bool = name == "before_model_callback",
                        **kwargs: Any) -> Any:
            if _opens:
                spent.append(0.0)
            start = time.thread_time()
            try:
                return await _inner(**kwargs)
            finally:
                spent[-1] += time.thread_time() - start

        object.__setattr__(guard, name, timed)
    outcome = _run(gs.clean_steps(100), guard)
    assert outcome.stopped is None and outcome.executed == 100
    # the steps of the 100 calls: not the hooks before the first model call, nor the last
    per_call = gs.cost_per_call("google-adk", spent[1:-1], capsys)
    assert per_call < 0.02


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "google_adk", "google.adk.plugins.base_plugin",
                           "google-adk")
