"""The Agno guard put on one tool (``@tool(tool_hooks=[guard])``) instead of the agent, in
a real Agno ``Agent`` whose ``OpenAIChat`` model talks to a scripted Chat Completions server
on 127.0.0.1: it would hear only that tool's steps (an ``edit``, ``run_tests`` cycle came
out as ``run_tests`` repeated), so it ends the run at its first call and names the wiring."""

from __future__ import annotations

from typing import Any

import pytest

from maxrepeat.guards.frameworks.agno import loop_guard
from tests import guard_scenarios as gs
from tests.scripted_chat import ChatModel, Step

_needs = gs.needs("agno", "openai")


def _run_guard_on(guarded: str, scenario: str) -> tuple[Any, Any, list[str], int]:
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat
    from agno.tools import tool

    guard = loop_guard(gs.NAME_ARGS)
    executed: list[str] = []
    tools = [tool(tool_hooks=[guard])(t) if t.__name__ == guarded else t
             for t in gs.scripted_tools(executed)]
    with ChatModel(list[Step](gs.steps(scenario))).serving() as chat:
        model = OpenAIChat(id="scripted", base_url=chat.url, api_key="scripted", max_retries=0)
        agent = Agent(model=model, tools=tools, telemetry=False)
        *_, result = agent.run("Make the tests pass.", stream=True, yield_run_output=True)
    return guard, result, executed, len(chat.requests)


def test_agno_guard_on_one_tool_ends_the_run_at_its_first_call_naming_the_wiring() -> None:
    guard, result, executed, requests = _run_guard_on("run_tests", "cycle")
    assert executed == ["edit"]  # the guarded tool's first call did not run
    assert requests == 2  # no model call after it
    with pytest.raises(TypeError, match=r"run_tests only, not the agent.*give it to the "
                                        r"Agent itself, tool_hooks=\[guard\]"):
        guard.stop_error(result)



@pytest.mark.parametrize("scenario", ["loop", "cycle"])
def test_agno_guard_called_from_the_agents_own_hook_guards_fully(scenario: str) -> None:
    """A user's agent-level hook that calls the guard itself is on the agent (Agno gives
    every tool the agent's ``tool_hooks`` in place of its own), not on one tool: warned,
    refused and stopped as post-hoc grading says."""
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    from maxrepeat.guards.frameworks.agno import trajectory_from_messages

    guard, heard, executed = loop_guard(gs.NAME_ARGS), list[str](), list[str]()

    def audit(function_name: str, function_call: Any, arguments: dict[str, Any],
              run_context: Any, agent: Any) -> Any:
        heard.append(function_name)
        return guard(function_name=function_name, function_call=function_call,
                     arguments=arguments, run_context=run_context, agent=agent)

    with ChatModel(list[Step](gs.steps(scenario))).serving() as chat:
        model = OpenAIChat(id="scripted", base_url=chat.url, api_key="scripted", max_retries=0)
        agent = Agent(model=model, tools=gs.scripted_tools(executed), tool_hooks=[audit],
                      telemetry=False)
        *_, result = agent.run("Make the tests pass.", stream=True, yield_run_output=True)
    contexts = ["\n".join(str(m.get("content") or "") for m in body["messages"])
                for body in chat.requests]
    outcome = gs.Outcome(contexts, trajectory_from_messages(result.messages), len(executed),
                         guard.stop_error(result))
    gs.check(outcome, gs.NAME_ARGS, scenario)
    assert outcome.stopped is not None and len(heard) > len(executed)  # refused, then stopped
