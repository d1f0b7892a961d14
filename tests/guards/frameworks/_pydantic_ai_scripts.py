"""What the pydantic-ai guard tests share: the scripted ``FunctionModel`` and a run that
keeps its messages whether or not the guard stops it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from maxrepeat.guards.frameworks.pydantic_ai import stop_error_class

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


def _text(messages: list[ModelMessage]) -> str:
    return "\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)


def function_model(script: list[list[tuple[str, dict[str, Any]]]], sent: list[str]) -> Any:
    """A ``FunctionModel`` answering a step of ``script`` a request (all its calls), then
    "Done.", adding what it was sent to ``sent``."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(_text(messages))
        if len(sent) > len(script):
            return ModelResponse(parts=[TextPart("Done.")])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(sent)}_{j}")
                                    for j, (name, args) in enumerate(script[len(sent) - 1])])

    return FunctionModel(model)


def run(agent: Any) -> tuple[Any, list[Any]]:
    """``agent`` run on the task: the guard's stop error if it stopped the run, and the
    run's messages."""
    from pydantic_ai import capture_run_messages

    stopped = None
    with capture_run_messages() as messages:  # pydantic-ai's way to see a failed run
        try:
            # asyncio.run closes its loop (run_sync keeps one open for later runs).
            asyncio.run(agent.run("Make the tests pass."))
        except stop_error_class() as err:
            stopped = err
    return stopped, messages
