"""Strands Agents: the hook events its event loop fires, on a real ``Agent``.

Why not the whole loop: Strands deep-copies ``agent.messages`` before every model call
and nests one event-loop cycle inside the last (``recurse_event_loop``), so each step
costs more with the history: 9 → 128 ms a step over a 300-call run here, hours at
10,000 calls. So this drives the surface the guard sits on, as the event loop does, in
its order: a real ``Agent`` with the guard in ``hooks=``, the real ``HookRegistry``
(``agent.hooks.invoke_callbacks_async``) and its real events. ``BeforeInvocationEvent``
once; then for each call ``BeforeModelCallEvent``, the assistant message with the
``toolUse`` block appended to ``agent.messages``, ``BeforeToolsEvent`` on it (a cancel
would fail the run), the tool, the user message with the ``toolResult`` appended; a last
``BeforeModelCallEvent``. ``agent.messages`` grows over the whole run, as in the loop."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from strands import Agent, tool
    from strands.hooks import BeforeInvocationEvent, BeforeModelCallEvent, BeforeToolsEvent

    from maxrepeat.guards.frameworks.strands import loop_guard

    @tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    agent = Agent(tools=[edit], callback_handler=None,
                  hooks=[loop_guard(config)] if config is not None else [])

    async def go() -> None:
        fire = agent.hooks.invoke_callbacks_async
        agent.messages.append({"role": "user", "content": [{"text": "go"}]})
        await fire(BeforeInvocationEvent(agent=agent, invocation_state={},
                                         messages=agent.messages))
        for i, (name, args) in enumerate(session.calls):
            session.step()
            await fire(BeforeModelCallEvent(agent=agent, invocation_state={}))
            message: Any = {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": f"c{i}", "name": name, "input": args}}]}
            agent.messages.append(message)
            event, _ = await fire(BeforeToolsEvent(agent=agent, message=message,
                                                   invocation_state={}))
            if event.cancel:
                raise AssertionError(f"call {i} refused: {event.cancel}")
            text = edit(**args)
            agent.messages.append({"role": "user", "content": [{"toolResult": {
                "toolUseId": f"c{i}", "status": "success", "content": [{"text": text}]}}]})
        session.step()
        await fire(BeforeModelCallEvent(agent=agent, invocation_state={}))

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import strands

    cls = strands._CLASSES.guard
    return [(cls, "begin"), (cls, "before_model"), (cls, "before_tools")]


register(Driver("strands", "strands", run, hooks,
                surface="its hook events on a real Agent (the loop deep-copies the history)"))
