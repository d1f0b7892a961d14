"""pydantic-ai with its ``FunctionModel``."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    from maxrepeat.guards.frameworks.pydantic_ai import loop_guard

    n = len(session.calls)
    count = [0]

    def model(messages: Any, info: Any) -> ModelResponse:
        session.step()
        count[0] += 1
        if count[0] > n:
            return ModelResponse(parts=[TextPart("done")])
        name, args = session.calls[count[0] - 1]
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"c{count[0]}")])

    agent = Agent(FunctionModel(model),
                  capabilities=[loop_guard(config)] if config is not None else [])

    @agent.tool_plain
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    asyncio.run(agent.run("go", usage_limits=UsageLimits(request_limit=n + 10)))


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import pydantic_ai

    cls = pydantic_ai._CLASSES.guard
    return [(cls, "for_run"), (cls, "before_model_request"), (cls, "after_model_request"),
            (cls, "before_tool_execute")]


register(Driver("pydantic-ai", "pydantic_ai", run, hooks))
