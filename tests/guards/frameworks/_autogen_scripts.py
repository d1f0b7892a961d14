"""What the AutoGen guard tests share: AutoGen's ``ReplayChatCompletionClient`` answering
a script and telling each request, and a run that keeps the guard's stop error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from maxrepeat.guards.frameworks.autogen import stop_error_class


def replay(script: list[list[tuple[str, dict[str, Any]]]],
           on_request: Callable[[list[Any]], object]) -> Any:
    """A replay client answering a step of ``script`` a request (all its calls), then
    "Done.", handing each request's messages to ``on_request`` (streamed or not)."""
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, RequestUsage
    from autogen_ext.models.replay import ReplayChatCompletionClient

    answers: list[Any] = [
        CreateResult(finish_reason="function_calls", cached=False,
                     usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
                     content=[FunctionCall(id=f"call_{i}_{j}", name=name,
                                           arguments=json.dumps(args))
                              for j, (name, args) in enumerate(step)])
        for i, step in enumerate(script)]

    class Recording(ReplayChatCompletionClient):  # type: ignore[misc]
        async def create(self, messages: Any, **kwargs: Any) -> Any:
            on_request(list(messages))
            return await super().create(messages, **kwargs)

        async def create_stream(self, messages: Any, **kwargs: Any) -> Any:
            on_request(list(messages))
            async for chunk in super().create_stream(messages, **kwargs):
                yield chunk

    return Recording([*answers, "Done."])


def text(messages: list[Any]) -> str:
    """A request as the text the model was sent."""
    return "\n".join(str(m.content) for m in messages)


def run(agent: Any) -> Any:
    """``agent`` run on the task: the guard's stop error if it stopped the run, else None."""
    try:
        asyncio.run(agent.run(task="Make the tests pass."))
    except stop_error_class() as err:
        return err
    return None
