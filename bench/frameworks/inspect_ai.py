"""Inspect AI: what its ``react()`` agent loop calls the guard through, as it does.

Why not the whole eval: ``react()`` in ``eval()`` logs every model call with its whole
input and rebuilds the transcript as it goes (17 → 179 ms a step over a 1,000-call run
here, with ``mockllm/model``: hours at 10,000 calls). So this drives the loop's surface
with Inspect's own objects, in ``react()``'s order: an ``AgentState`` (the system
message, the task), then per call the ``ChatMessageAssistant`` with the ``ToolCall``
appended, Inspect's ``execute_tools(state.messages, tools, approval=guard.approval)``
(which runs the approval policies, the guard's approver first, then the tool), its
messages appended (a rejected call would fail the run), ``on_continue(state)`` (anything
but True would fail it). Without a config, the same with an
auto-approver and no ``on_continue``. ``state.messages`` grows over the whole run."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from inspect_ai.agent import AgentState
    from inspect_ai.approval import ApprovalPolicy, auto_approver
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        execute_tools,
    )
    from inspect_ai.tool import Tool, ToolCall, tool

    from maxrepeat.guards.frameworks.inspect import loop_guard

    @tool
    def edit() -> Tool:
        async def execute(path: str, text: str) -> str:
            """Write a file.

            Args:
                path: The file.
                text: What to write.
            """
            return session.tool(path)

        return execute

    tools = [edit()]
    guard = loop_guard(config) if config is not None else None
    approval = guard.approval if guard is not None else [
        ApprovalPolicy(auto_approver(), "*")]
    state = AgentState(messages=[ChatMessageSystem(content="You fix code."),
                                 ChatMessageUser(content="go")])

    async def go() -> None:
        for i, (name, args) in enumerate(session.calls):
            session.step()
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[
                ToolCall(id=f"c{i}", function=name, arguments=args)]))
            messages, _ = await execute_tools(state.messages, tools, approval=approval)
            if messages[-1].error is not None:
                raise AssertionError(f"call {i} refused: {messages[-1].error}")
            state.messages.extend(messages)
            if guard is not None and await guard.on_continue(state) is not True:
                raise AssertionError(f"call {i}: on_continue did not continue")
        session.step()

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks.inspect import LoopGuard

    return [(LoopGuard, "approve"), (LoopGuard, "on_continue")]


register(Driver("inspect", "inspect_ai", run, hooks,
                surface="react()'s execute_tools with the guard's approval, and "
                        "on_continue (eval logs the whole input each step)"))
