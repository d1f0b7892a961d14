"""The OpenAI Agents SDK with a scripted ``Model`` (the SDK's ``ScriptedModel`` keeps a
copy of every request's input, which over a long run costs more than the run)."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.testing import assistant_message, function_call
    from agents.usage import Usage

    from maxrepeat.guards.frameworks.openai_agents import loop_guard

    outputs: list[Any] = [function_call(name, args, call_id=f"c{i}")
                          for i, (name, args) in enumerate(session.calls)]
    outputs.append(assistant_message("done"))

    class Scripted(Model):
        def __init__(self) -> None:
            self.i = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            session.step()
            self.i += 1
            return ModelResponse(output=[outputs[self.i - 1]], usage=Usage(),
                                 response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    base = RunConfig(tracing_disabled=True)
    turns = len(session.calls) + 5
    if config is not None:
        guard = loop_guard(config)
        agent = Agent(name="a", model=Scripted(), tools=guard.tools([edit]))
        asyncio.run(Runner.run(agent, "go", hooks=guard, run_config=guard.run_config(base),
                               max_turns=turns))
    else:
        agent = Agent(name="a", model=Scripted(), tools=[edit])
        asyncio.run(Runner.run(agent, "go", run_config=base, max_turns=turns))


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import openai_agents

    cls = openai_agents._CLASSES.guard
    return [(cls, "on_llm_start"), (cls, "on_llm_end"), (cls, "_filter"), (cls, "_check")]


register(Driver("openai-agents", "agents", run, hooks))
