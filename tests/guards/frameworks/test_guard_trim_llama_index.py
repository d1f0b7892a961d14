"""The LlamaIndex guard when the agent's memory trims the chat history it sends.

A ``FunctionAgent`` sends the model its memory's messages (``ChatMemoryBuffer`` cut to its
``token_limit`` at each read; ``Memory`` moves what passes its ``token_limit`` out of the
chat history as messages are put) followed by the run's own messages (its ``scratchpad``),
which the memory holds only once the run ends. So a memory with a small token limit trims
the history the model gets, but only the part before the run: the run's tool calls and
results are all in every request, in order, and the guard reads the part after what it
has read. These tests prove it with a long earlier conversation and a token limit that
keeps little of it, in one run and in a second task on the same agent and memory (whose
history is then trimmed shorter than the first run's): the contract holds on the run's
whole record. Driven by LlamaIndex's own ``MockFunctionCallingLLM``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests import guard_scenarios as gs

_needs = gs.needs("llama_index.core")

#: an earlier conversation far longer than the memory's token limit
EARLIER = [("user" if i % 2 == 0 else "assistant", f"earlier message {i}: " + "words " * 40)
           for i in range(8)]
TOKEN_LIMIT = 120


async def _memory(kind: str) -> tuple[Any, Any]:
    """A memory holding `EARLIER`, and what closes it."""
    from llama_index.core.llms import ChatMessage
    from llama_index.core.memory import ChatMemoryBuffer, Memory
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import StaticPool

    history = [ChatMessage(role=role, content=text) for role, text in EARLIER]
    if kind == "buffer":
        return ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=TOKEN_LIMIT), None
    engine = create_async_engine("sqlite+aiosqlite://", poolclass=StaticPool)
    memory = Memory.from_defaults(token_limit=TOKEN_LIMIT, token_flush_size=40,
                                  async_engine=engine)
    await memory.aput_messages(history)
    return memory, engine


class _Agent:
    """A guarded ``FunctionAgent`` whose model answers ``steps`` in turn (a step: the calls
    of one response, or its final text), recording each request's messages."""

    def __init__(self, steps: list[list[tuple[str, dict[str, Any]]] | str], config: Any,
                 memory: Any) -> None:
        from llama_index.core.agent.workflow import FunctionAgent
        from llama_index.core.base.llms.types import ToolCallBlock
        from llama_index.core.llms import ChatMessage
        from llama_index.core.llms.mock import MockFunctionCallingLLM

        from maxrepeat.guards.frameworks.llama_index import loop_guard

        self.requests: list[list[Any]] = []
        self.executed: list[str] = []
        self.memory = memory

        def respond(messages: Any, **kwargs: Any) -> Any:
            self.requests.append(list(messages))
            step = steps[len(self.requests) - 1]
            if isinstance(step, str):
                return ChatMessage(role="assistant", content=step)
            return ChatMessage(role="assistant", blocks=[
                ToolCallBlock(tool_call_id=f"call_{len(self.requests)}_{j}", tool_name=name,
                              tool_kwargs=args) for j, (name, args) in enumerate(step)])

        llm = MockFunctionCallingLLM(response_generator=respond, is_chat_model=True)
        agent = FunctionAgent(tools=gs.scripted_tools(self.executed), llm=llm)
        self.agent = loop_guard(config).agent(agent)

    async def run(self, task: str) -> gs.Outcome:
        """One run (task): its outcome, its record the run's messages."""
        from llama_index.core.workflow import Context

        from maxrepeat.guards.frameworks.llama_index import (
            stop_error_class,
            trajectory_from_messages,
        )

        first, executed = len(self.requests), len(self.executed)
        ctx = Context(self.agent)
        before = len(await self.memory.aget_all())
        stopped = None
        try:
            await self.agent.run(task, ctx=ctx, memory=self.memory)
        except stop_error_class() as err:
            stopped = err
        record = [*(await self.memory.aget_all())[before:],
                  *await ctx.store.get("scratchpad", default=[])]
        contexts = ["\n".join(str(m.content) for m in r) for r in self.requests[first:]]
        return gs.Outcome(contexts, trajectory_from_messages(record),
                       len(self.executed) - executed, stopped)


def _runs(steps: list[Any], config: Any, kind: str, *tasks: str) -> tuple[_Agent, list[gs.Outcome]]:
    """``tasks`` run in turn by one agent with one memory of ``kind``."""

    async def main() -> tuple[_Agent, list[gs.Outcome]]:
        memory, engine = await _memory(kind)
        try:
            agent = _Agent(steps, config, memory)
            return agent, [await agent.run(task) for task in tasks]
        finally:
            if engine is not None:
                await engine.dispose()

    return asyncio.run(main())


def _steps(scenario: str) -> list[list[tuple[str, dict[str, Any]]] | str]:
    return [*gs.steps(scenario), "Done."]


def _trimmed(agent: _Agent) -> None:
    """The run's first request got only part of the earlier conversation."""
    kept = [m for m in agent.requests[0] if "earlier message" in str(m.content)]
    assert len(kept) < len(EARLIER) and "earlier message 0:" not in str(kept)


@pytest.mark.parametrize("kind", ["buffer", "memory"])
@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_llama_index_trimmed_memory_keeps_the_contract(scenario: str, kind: str) -> None:
    agent, [outcome] = _runs(_steps(scenario), gs.NAME_ARGS, kind, "Make the tests pass.")
    _trimmed(agent)
    gs.check(outcome, gs.NAME_ARGS, scenario)


@pytest.mark.parametrize("kind", ["buffer", "memory"])
def test_llama_index_trimmed_memory_observation_mode(kind: str) -> None:
    agent, [outcome] = _runs(_steps("loop"), gs.OBSERVATION, kind, "Make the tests pass.")
    _trimmed(agent)
    gs.check(outcome, gs.OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)


@pytest.mark.parametrize("kind", ["buffer", "memory"])
def test_llama_index_second_task_on_a_trimmed_memory_is_counted_alone(kind: str) -> None:
    """The first task's messages go into the memory, which then sends the second task no
    more than the first run read: the second run is counted on its own, from its first
    call (a new run: its request ends with the user's message)."""
    agent, [clean, loop] = _runs([*_steps("clean"), *_steps("loop")], gs.NAME_ARGS, kind,
                                 "Make the tests pass.", "Now make them pass again.")
    gs.check(clean, gs.NAME_ARGS, "clean")
    first = len(_steps("clean"))  # the second run's first request
    # trimmed: no longer than the first run's last request, though the memory now holds it all
    assert len(agent.requests[first]) <= len(agent.requests[first - 1])
    assert "earlier message 0:" not in str([m.content for m in agent.requests[first]])
    gs.check(loop, gs.NAME_ARGS, "loop")
