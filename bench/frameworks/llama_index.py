"""LlamaIndex's ``FunctionAgent`` with its ``MockFunctionCallingLLM``."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    from maxrepeat.guards.frameworks.llama_index import loop_guard

    n = len(session.calls)
    count = [0]

    def respond(messages: Any, **kwargs: Any) -> Any:
        session.step()
        count[0] += 1
        if count[0] > n:
            return ChatMessage(role="assistant", content="done")
        name, args = session.calls[count[0] - 1]
        return ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id=f"c{count[0]}", tool_name=name, tool_kwargs=args)])

    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    agent = FunctionAgent(tools=[edit], llm=MockFunctionCallingLLM(
        response_generator=respond, is_chat_model=True))
    if config is not None:
        agent = loop_guard(config).agent(agent)

    async def go() -> None:
        await agent.run("go", max_iterations=n + 10)

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import llama_index

    return [(llama_index._Logic, "before"), (llama_index._Logic, "after")]


register(Driver("llama-index", "llama_index.core", run, hooks))
