"""A real LlamaIndex ``FunctionAgent`` (LlamaIndex's own ``MockFunctionCallingLLM``) whose
``llm`` (or ``tools``) is replaced after ``guard.agent(...)`` wired it: the run would go
unguarded, so the guard refuses it at the first step, naming the fix."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests import guard_scenarios as gs
from tests.guards.frameworks.test_guard_llama_index import _agent, _once

_needs = gs.needs("llama_index.core")


def test_llama_index_llm_replaced_after_guarding_is_refused_at_the_first_step() -> None:
    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    agent = loop_guard(gs.NAME_ARGS).agent(_agent([], [], executed))
    agent.llm = _agent(gs.steps("loop"), sent, []).llm  # after guarding
    with pytest.raises(TypeError, match=r"agent's llm was replaced .* set agent\.llm first"):
        asyncio.run(_once(agent, stop_error_class()))
    assert sent == executed == []  # refused before the model was asked


def test_llama_index_agent_guarded_after_its_llm_is_set_is_guarded() -> None:
    """The fix the error names: the same two agents, the llm set first."""
    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    agent = _agent([], [], executed)
    agent.llm = _agent(gs.steps("loop"), sent, []).llm
    agent = loop_guard(gs.NAME_ARGS).agent(agent)
    stopped, _ = asyncio.run(_once(agent, stop_error_class()))
    assert stopped is not None and len(executed) == 3  # as gs.check of "loop" has it


def test_llama_index_tools_replaced_after_guarding_are_refused_at_the_first_step() -> None:
    """``agent.tools`` set after ``guard.agent(...)``: its calls would run unrefused, so the
    first step is refused, naming the fix."""
    from llama_index.core.tools import FunctionTool

    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    agent = loop_guard(gs.NAME_ARGS).agent(_agent(gs.steps("loop"), sent, []))
    agent.tools = [FunctionTool.from_defaults(t) for t in gs.scripted_tools(executed)]
    with pytest.raises(TypeError, match=r"agent's tools were replaced .* set agent\.tools "
                                        r"first"):
        asyncio.run(_once(agent, stop_error_class()))
    assert sent == executed == []  # refused before the model was asked


_TESTS = ("run_tests", {"path": "tests/"})
_TO_REVIEWER = ("handoff", {"to_agent": "reviewer", "reason": "review"})
_TO_CODER = ("handoff", {"to_agent": "coder", "reason": "fix"})


async def _handoff_run(shared: bool, kind: str, coder: list[Any], reviewer: list[Any],
                       ) -> tuple[Any, list[str], list[Any], list[Any]]:
    """An ``AgentWorkflow`` of two guarded ``FunctionAgent``s (one guard, or one each) on
    a memory with a small token limit, each answering its script's calls in turn, then
    "Done.". Returns the stop error, the tools run, each request's messages
    and the run's record (the reviewer's own with a guard each)."""
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import ChatMemoryBuffer, Memory
    from llama_index.core.workflow import Context
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import StaticPool

    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    executed: list[str] = []
    requests: list[list[Any]] = []
    guards = [loop_guard(gs.NAME_ARGS)] * 2 if shared else [loop_guard(gs.NAME_ARGS)
                                                            for _ in range(2)]

    def member(name: str, script: list[Any], guard: Any) -> Any:
        mine: list[int] = []

        def respond(messages: Any, **kwargs: Any) -> Any:
            requests.append(list(messages))
            mine.append(len(requests))
            asked = len(mine)
            if asked > len(script):
                return ChatMessage(role="assistant", content="Done.")
            return ChatMessage(role="assistant", blocks=[ToolCallBlock(
                tool_call_id=f"{name}_{asked}", tool_name=script[asked - 1][0],
                tool_kwargs=script[asked - 1][1])])

        llm = MockFunctionCallingLLM(response_generator=respond, is_chat_model=True)
        return guard.agent(FunctionAgent(
            name=name, description=name, tools=gs.scripted_tools(executed), llm=llm,
            can_handoff_to=["reviewer" if name == "coder" else "coder"]))

    engine = create_async_engine("sqlite+aiosqlite://", poolclass=StaticPool)
    memory = (ChatMemoryBuffer.from_defaults(token_limit=40) if kind == "buffer" else
              Memory.from_defaults(token_limit=40, token_flush_size=10, async_engine=engine))
    workflow = AgentWorkflow(agents=[member("coder", coder, guards[0]),
                                     member("reviewer", reviewer, guards[1])],
                             root_agent="coder")
    ctx, stopped = Context(workflow), None
    try:
        await workflow.run("Make the tests pass.", ctx=ctx, memory=memory)
    except stop_error_class() as err:
        stopped = err
    reviewer = await ctx.store.get("scratchpad", default=[])  # its steps, the run stopped
    record = [*await memory.aget_all(), *reviewer] if shared else reviewer
    await engine.dispose()
    return stopped, executed, requests, record


@pytest.mark.parametrize("kind", ["buffer", "memory"])
@pytest.mark.parametrize("shared", [True, False])
def test_llama_index_workflow_handoff_on_a_trimming_memory_keeps_the_count(
        shared: bool, kind: str) -> None:
    """After the handoff the reviewer's requests start from the memory (trimmed) rather
    than the run's start: the guard neither misreads nor warns early. The handoff breaks
    the repeat, so the reviewer's own run of ``run_tests`` is warned at its third call,
    refused at its fourth and stopped at its fifth, as grading the record says (the whole
    run's with one guard: its steps are numbered from the coder's first)."""
    from maxrepeat import grade
    from maxrepeat.guards.frameworks.llama_index import trajectory_from_messages

    stopped, executed, requests, record = asyncio.run(_handoff_run(
        shared, kind, [_TESTS, _TESTS, _TO_REVIEWER], [_TESTS] * 9))
    if kind == "buffer":  # the coder's steps were trimmed out of the reviewer's history
        assert [str(m.role.value) for m in requests[3]] == ["tool"]
    warned = [any(gs.MARK in str(m.content) for m in r) for r in requests]
    assert warned.index(True) == 6  # after R R H R R R: its third run_tests in a row
    assert executed == ["run_tests"] * 5  # the coder's two, the reviewer's three
    assert stopped is not None and "5 times in a row" in str(stopped)
    assert stopped.results[0].evidence == grade(trajectory_from_messages(record),
                                                gs.NAME_ARGS).evidence


def test_llama_index_workflow_handing_off_back_and_forth_is_stopped_by_one_guard() -> None:
    """Two agents handing the task to each other, each handoff trimming the history the
    next one gets: one guard given to both sees the cycle and stops it, as grading says."""
    from maxrepeat import grade
    from maxrepeat.guards.frameworks.llama_index import trajectory_from_messages

    stopped, executed, requests, record = asyncio.run(_handoff_run(
        True, "buffer", [_TO_REVIEWER] * 9, [_TO_CODER] * 9))
    assert executed == []
    assert stopped is not None and "cycle of 2 steps" in str(stopped)
    assert len(requests) == 10  # stopped at the fifth round of the cycle
    assert stopped.results[0].evidence == grade(trajectory_from_messages(record),
                                                gs.NAME_ARGS).evidence
