"""AutoGen's ``AssistantAgent`` (made by ``guard.agent``) with a scripted
``ChatCompletionClient`` in process. Runs in AutoGen's own venv:
``.venv-autogen/bin/python bench/guards.py --only autogen``.

Timed: the guarded client's request hook (``_request``, which feeds the results and
ends the step) and its response hook (``after_response``, which judges the calls). Not
timed: the guarded workbench's ``call_tool``, whose own work is one dictionary look-up
before it awaits the tool itself (timing it would time the tool and AutoGen's tool
machinery)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from . import Driver, Session, register


def _client(session: Session) -> Any:
    import json

    from autogen_core import FunctionCall
    from autogen_core.models import ChatCompletionClient, CreateResult, ModelInfo, RequestUsage

    n = len(session.calls)
    info = ModelInfo(vision=False, function_calling=True, json_output=False,
                     family="unknown", structured_output=False)

    class Scripted(ChatCompletionClient):  # type: ignore[misc]
        def __init__(self) -> None:
            self.i = 0

        async def create(self, messages: Any, **kwargs: Any) -> CreateResult:
            session.step()
            self.i += 1
            usage = RequestUsage(prompt_tokens=1, completion_tokens=1)
            if self.i > n:
                return CreateResult(finish_reason="stop", content="done", usage=usage,
                                    cached=False)
            name, args = session.calls[self.i - 1]
            call = FunctionCall(id=f"c{self.i}", name=name, arguments=json.dumps(args))
            return CreateResult(finish_reason="function_calls", content=[call], usage=usage,
                                cached=False)

        def create_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError

        async def close(self) -> None:
            pass

        def actual_usage(self) -> RequestUsage:
            return RequestUsage(prompt_tokens=0, completion_tokens=0)

        def total_usage(self) -> RequestUsage:
            return RequestUsage(prompt_tokens=0, completion_tokens=0)

        def count_tokens(self, messages: Any, **kwargs: Any) -> int:
            return 0

        def remaining_tokens(self, messages: Any, **kwargs: Any) -> int:
            return 1 << 30

        @property
        def capabilities(self) -> Any:
            return info

        @property
        def model_info(self) -> ModelInfo:
            return info

    return Scripted()


def run(session: Session, config: Any) -> None:
    from autogen_agentchat.agents import AssistantAgent

    from maxrepeat.guards.frameworks.autogen import loop_guard

    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    turns = len(session.calls) + 5
    if config is not None:
        agent = loop_guard(config).agent("dev", _client(session), tools=[edit],
                                         max_tool_iterations=turns)
    else:
        agent = AssistantAgent("dev", _client(session), tools=[edit],
                               max_tool_iterations=turns)
    asyncio.run(agent.run(task="go"))


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat import MaxRepeatConfig
    from maxrepeat.guards.frameworks import autogen

    agent = autogen.loop_guard(MaxRepeatConfig(max=3)).agent("x", _client(Session(0)))
    client = type(agent._model_client)  # the guarded client's class (built once)
    return [(client, "_request"), (autogen._Run, "after_response")]


register(Driver("autogen", "autogen_agentchat", run, hooks))
