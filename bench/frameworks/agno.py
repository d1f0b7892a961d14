"""Agno with its ``OpenAIChat`` model on a scripted Chat Completions endpoint in process
(an ``httpx.MockTransport``: no server, no network)."""

from __future__ import annotations

import json
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    import httpx
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    from maxrepeat.guards.frameworks.agno import loop_guard

    n = len(session.calls)
    count = [0]

    def reply(request: httpx.Request) -> httpx.Response:
        session.step()
        count[0] += 1
        if count[0] > n:
            message: dict[str, Any] = {"role": "assistant", "content": "done"}
        else:
            name, args = session.calls[count[0] - 1]
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"c{count[0]}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]}
        return httpx.Response(200, json={
            "id": f"r{count[0]}", "object": "chat.completion", "created": 0,
            "model": "scripted", "choices": [{"index": 0, "message": message,
                                              "finish_reason": "stop"}]})

    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    model = OpenAIChat(id="scripted", api_key="none",
                       http_client=httpx.Client(transport=httpx.MockTransport(reply)))
    agent = Agent(model=model, tools=[edit], telemetry=False,
                  tool_hooks=[loop_guard(config)] if config is not None else None)
    agent.run("go")


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import agno

    return [(agno._CLASSES.guard, "__call__")]


register(Driver("agno", "agno", run, hooks))
