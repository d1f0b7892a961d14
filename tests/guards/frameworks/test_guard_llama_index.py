"""The LlamaIndex guard in a real ``FunctionAgent`` driven by LlamaIndex's own
``MockFunctionCallingLLM`` (a scripted response generator): a loop, a cycle, a clean run,
parallel calls, a second run after a stop, and the count against ``grade``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from tests import guard_scenarios as gs

_needs = gs.needs("llama_index.core")



def _agent(script: list[list[tuple[str, dict[str, Any]]]], sent: list[str],
           executed: list[str]) -> Any:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    def respond(messages: Any, **kwargs: Any) -> Any:
        sent.append("\n".join(str(m.content) for m in messages))
        asked = sum(1 for m in messages if str(m.role.value) == "assistant" and m.blocks
                    and any(b.block_type == "tool_call" for b in m.blocks))
        if asked >= len(script):
            return ChatMessage(role="assistant", content="Done.")
        return ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id=f"call_{len(sent)}_{j}", tool_name=name, tool_kwargs=args)
            for j, (name, args) in enumerate(script[asked])])

    llm = MockFunctionCallingLLM(response_generator=respond, is_chat_model=True)
    return FunctionAgent(tools=gs.scripted_tools(executed), llm=llm)


async def _once(agent: Any, error: type[Exception]) -> tuple[Any, list[Any]]:
    """One run: the stop error (or None) and the agent's record of it."""
    from llama_index.core.workflow import Context

    ctx = Context(agent)
    stopped = None
    try:
        await agent.run("Make the tests pass.", ctx=ctx)
    except error as err:
        stopped = err
    memory = await ctx.store.get("memory")
    record = [*await memory.aget_all(), *await ctx.store.get("scratchpad", default=[])]
    return stopped, record


def _run(scenario: str, config: MaxRepeatConfig) -> gs.Outcome:
    from maxrepeat.guards.frameworks.llama_index import (
        loop_guard,
        stop_error_class,
        trajectory_from_messages,
    )

    sent: list[str] = []
    executed: list[str] = []
    agent = loop_guard(config).agent(_agent(gs.steps(scenario), sent, executed))
    stopped, record = asyncio.run(_once(agent, stop_error_class()))
    return gs.Outcome(sent, trajectory_from_messages(record), len(executed), stopped)


@pytest.mark.parametrize("case", gs.CASES)
def test_llama_index_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(_run, case)


def test_llama_index_live_preset_catches_a_cycle() -> None:
    config = MaxRepeatConfig.preset("live", max=2, max_cycle_period=2)
    outcome = _run("cycle", config)
    gs.check(outcome, config, "cycle")


def test_llama_index_stop_count_equals_grade_of_the_record() -> None:
    outcome = _run("loop", gs.NAME_ARGS)
    assert outcome.stopped.results[0].metadata.occurrences == 5
    assert grade(outcome.trajectory, gs.NAME_ARGS).metadata.occurrences == 5


def test_llama_index_warning_stays_in_the_history() -> None:
    gs.check_warning_stays(_run("cycle", gs.NAME_ARGS))


def test_llama_index_second_run_after_a_stop_starts_clean() -> None:
    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    script = gs.steps("loop")
    agent = loop_guard(gs.NAME_ARGS).agent(_agent(script, sent, executed))
    first, _ = asyncio.run(_once(agent, stop_error_class()))
    assert first is not None
    ran = len(executed)
    second, record = asyncio.run(_once(agent, stop_error_class()))
    # the second run (a fresh context) repeats the same loop: warned, refused and
    # stopped at the same calls as the first, not refused from its first call
    assert second is not None
    assert len(executed) - ran == ran
    assert second.results[0].metadata.occurrences == 5


def test_llama_index_guard_refuses_agents_it_cannot_guard() -> None:
    from llama_index.core.agent.workflow import ReActAgent
    from llama_index.core.llms.mock import MockLLM

    from maxrepeat.guards.frameworks.llama_index import loop_guard

    with pytest.raises(TypeError, match="FunctionAgent"):
        loop_guard(gs.NAME_ARGS).agent(ReActAgent(tools=[], llm=MockLLM()))
    guard = loop_guard(gs.NAME_ARGS)
    agent = guard.agent(_agent([], [], []))
    with pytest.raises(TypeError, match="not guarded yet"):
        guard.agent(agent)


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "llama_index", "llama_index.core.agent.workflow",
                           "llama-index")
