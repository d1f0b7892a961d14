"""LlamaIndex: the guarded LLM and tools ``guard.agent(FunctionAgent(...))`` makes, called
as the ``FunctionAgent`` loop calls them.

Why not the whole loop: the agent workflow copies the chat history and the scratchpad
into a new input at each step and runs each step as workflow events (16 → 30 ms a step
over a 1,000-call run here, with its ``MockFunctionCallingLLM``: well over an hour at
10,000 calls on this shared machine). So this drives the surface the guard sits on with
LlamaIndex's own objects: a ``FunctionAgent`` wrapped by ``guard.agent``, its LLM a
``MockFunctionCallingLLM`` that answers at once (the mock's own chat deep-copies the
history and sends it to the instrumentation at each call); per call the agent's
(guarded) LLM ``achat_with_tools`` with the whole chat history (the task, then every
assistant ``ToolCallBlock`` message and tool message so far, as ``FunctionAgent`` sends
it), the response's message appended, the agent's (guarded) tool ``acall`` (a refusal
would fail the run), its tool message appended; a last request."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage, ChatResponse
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    from maxrepeat.guards.frameworks.llama_index import loop_guard

    n = len(session.calls)
    count = [0]

    def respond(messages: Any, **kwargs: Any) -> Any:
        count[0] += 1
        if count[0] > n:
            return ChatMessage(role="assistant", content="done")
        name, args = session.calls[count[0] - 1]
        return ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id=f"c{count[0]}", tool_name=name, tool_kwargs=args)])

    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    class Scripted(MockFunctionCallingLLM):  # type: ignore[misc]
        """Answers at once: the mock's own chat deep-copies and instruments the history."""

        async def achat_with_tools(self, tools: Any, user_msg: Any = None,
                                   chat_history: Any = None, **kwargs: Any) -> Any:
            return ChatResponse(message=respond(chat_history))

    agent = FunctionAgent(tools=[edit], llm=Scripted(is_chat_model=True))
    if config is not None:
        agent = loop_guard(config).agent(agent)
    llm, tools = agent.llm, list(agent.tools)
    history = [ChatMessage(role="user", content="go")]

    async def go() -> None:
        for i in range(n + 1):
            session.step()
            response = await llm.achat_with_tools(tools, chat_history=list(history))
            history.append(response.message)
            if i == n:
                break
            call = llm.get_tool_calls_from_response(response, error_on_no_tool_call=True)[0]
            output = await tools[0].acall(**call.tool_kwargs)
            if output.content != f"wrote {call.tool_kwargs['path']}":
                raise AssertionError(f"call {i} refused: {output.content}")
            history.append(ChatMessage(role="tool", content=output.content,
                                       additional_kwargs={"tool_call_id": call.tool_id}))

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import llama_index

    return [(llama_index._Logic, "before"), (llama_index._Logic, "after")]


register(Driver("llama-index", "llama_index.core", run, hooks,
                surface="the guarded LLM and tool of guard.agent(FunctionAgent) "
                        "(the workflow copies the history each step)"))
