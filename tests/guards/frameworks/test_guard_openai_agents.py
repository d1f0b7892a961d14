"""The OpenAI Agents SDK guard in a real Agents SDK run driven by the SDK's own
``agents.testing.ScriptedModel``, through a loop, a cycle and a clean run."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.guards.frameworks.openai_agents import (
    loop_guard,
    stop_error_class,
    trajectory_from_items,
)
from tests import guard_scenarios as gs


def _text(items: Any) -> str:
    return "\n".join(json.dumps(i, default=str) for i in items)


def _run(scenario: str, config: MaxRepeatConfig,
         filtered: list[tuple[Any, Any]] | None = None) -> gs.Outcome:
    """The scenario's run; with ``filtered``, each model call's input list as the SDK
    handed it to the guard's filter, and the list the filter returned, are added to it."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call

    executed: list[str] = []
    steps: list[Any] = [[function_call(name, args, call_id=f"call_{i}")]
                        for i, (name, args) in enumerate(gs.SCRIPTS[scenario])]
    steps.append([assistant_message("Done.")])
    model = ScriptedModel(steps)
    guard = loop_guard(config)
    tools = [function_tool(f) for f in gs.scripted_tools(executed)]
    agent = Agent(name="fixer", model=model, tools=guard.tools(tools))
    # No trace export: the tests make no network calls.
    run_config = guard.run_config(RunConfig(tracing_disabled=True))
    if filtered is not None:
        guard_filter = run_config.call_model_input_filter

        def spy(data: Any) -> Any:
            given = data.model_data.input
            out = guard_filter(data)
            filtered.append((given, out.input))
            return out

        run_config = dataclasses.replace(run_config, call_model_input_filter=spy)
    stopped = None
    try:
        result = asyncio.run(Runner.run(agent, "Make the tests pass.", hooks=guard,
                                        run_config=run_config, max_turns=30))
        items = result.to_input_list()
    except stop_error_class() as err:
        stopped = err
        assert err.run_data is not None  # the SDK attaches the run so far
        items = [*err.run_data.input, *err.run_data.new_items] if isinstance(
            err.run_data.input, list) else list(err.run_data.new_items)
    return gs.Outcome([_text(c.input) for c in model.calls], trajectory_from_items(items),
                      len(executed), stopped)


@pytest.mark.parametrize("case", gs.SERIAL_CASES)
def test_openai_agents_run_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(_run, case)


@pytest.mark.parametrize("config", [gs.NAME_ARGS, gs.OBSERVATION], ids=["name-args", "observation"])
def test_openai_agents_one_run_gives_one_count(config: MaxRepeatConfig) -> None:
    """The stop message, the guard's results and grading the SDK's record of the run
    count the same repeats (the stopped response's calls are refused, then recorded)."""
    outcome = _run("loop", config)
    [live] = outcome.stopped.results
    count = grade(outcome.trajectory, config).metadata.occurrences
    assert live.metadata.occurrences == count
    assert f"{count} times in a row" in str(outcome.stopped)


def test_openai_agents_input_filter_does_not_copy_the_history() -> None:
    """The model input filter returns the list the SDK handed it (its own copy of the
    run's items), its notes inserted in place: no copy of the history per model call,
    whose cost would grow with the run (``list(input)`` is C work: counting the guard's
    Python calls, as test_guard_cost_flat does, cannot see it)."""
    filtered: list[tuple[Any, Any]] = []
    outcome = _run("cycle", gs.NAME_ARGS, filtered)
    # (one filter call more than model calls: the run stops in on_llm_start, after it)
    assert len(filtered) == len(outcome.contexts) + 1 and outcome.stopped is not None
    assert all(out is given for given, out in filtered)
    noted = [any("maxrepeat loop guard" in _text([i]) for i in out) for _, out in filtered]
    assert any(noted) and noted == sorted(noted)  # the notes were put in, and stay


def test_openai_agents_stop_error_is_an_agents_exception() -> None:
    from agents.exceptions import AgentsException

    outcome = _run("loop", gs.NAME_ARGS)
    assert isinstance(outcome.stopped, AgentsException)


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "openai_agents", "agents", "openai-agents")


def test_openai_agents_a_second_run_starts_a_new_guard_state() -> None:
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call

    guard = loop_guard(gs.NAME_ARGS)

    run_tests = function_tool(gs.scripted_tools([])[0])

    for _ in range(2):
        steps: list[Any] = [[function_call("run_tests", {"path": "tests/"}, call_id=f"c{i}")]
                            for i in range(2)]
        model = ScriptedModel([*steps, [assistant_message("Done.")]])
        agent = Agent(name="fixer", model=model, tools=guard.tools([run_tests]))
        asyncio.run(Runner.run(agent, "Make the tests pass.", hooks=guard,
                               run_config=guard.run_config(RunConfig(tracing_disabled=True))))
        # this run's two calls only (with the first run's, four: a loop above max=2)
        assert guard.results[0].metadata.watched_steps == 2
        assert not any("maxrepeat loop guard" in _text(c.input) for c in model.calls)


@pytest.mark.parametrize("missing", ["hooks", "tools", "run_config"])
def test_openai_agents_partial_wiring_raises_naming_what_is_missing(missing: str) -> None:
    """Two wiring points of three: the run fails before a repeat runs, naming the third."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.exceptions import UserError
    from agents.testing import ScriptedModel, assistant_message, function_call

    executed: list[str] = []

    run_tests = function_tool(gs.scripted_tools(executed)[0])

    steps: list[Any] = [[function_call("run_tests", {"path": "tests/"}, call_id=f"c{i}")]
                        for i in range(8)]
    guard = loop_guard(gs.NAME_ARGS)
    tools = [run_tests] if missing == "tools" else guard.tools([run_tests])
    agent = Agent(name="fixer", model=ScriptedModel([*steps, [assistant_message("Done.")]]),
                  tools=tools)
    base = RunConfig(tracing_disabled=True)
    run_config = base if missing == "run_config" else guard.run_config(base)
    hooks = None if missing == "hooks" else guard
    named = {"hooks": "hooks=guard", "tools": "guard.tools(",
             "run_config": "run_config=guard.run_config("}[missing]
    with pytest.raises(UserError, match=re.escape(named)):
        asyncio.run(Runner.run(agent, "Make the tests pass.", hooks=hooks,
                               run_config=run_config, max_turns=30))
    assert len(executed) <= 1
