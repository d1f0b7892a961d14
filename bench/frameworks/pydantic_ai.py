"""pydantic-ai: the capability hooks its agent graph calls, as it calls them.

Why not the whole loop: the agent graph re-reads the whole message history at each
model request (compaction windows, instruction parts, tool-result ordering: 12 → 130 ms
a step over a 1,000-call run here, with ``FunctionModel``: hours at 10,000 calls). So
this drives the surface the guard sits on, in the graph's order, with pydantic-ai's own
objects: the guard's ``for_run`` with the run's ``RunContext`` (whose ``messages`` is the
run's history), then per call ``before_model_request`` with a ``ModelRequestContext``,
``after_model_request`` with the ``ModelResponse`` holding the ``ToolCallPart`` (appended
to the history), ``before_tool_execute`` with the call and its ``ToolDefinition`` (a
``SkipToolExecution`` would fail the run), the tool, the ``ModelRequest`` with the
``ToolReturnPart`` appended; a last ``before_model_request``. The history grows over
the whole run."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestContext, ModelRequestParameters
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.usage import RunUsage

    from maxrepeat.guards.frameworks.pydantic_ai import loop_guard

    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("done")]))
    tool_def = ToolDefinition(name="edit", parameters_json_schema={"type": "object"})
    messages: list[Any] = [ModelRequest(parts=[UserPromptPart("go")])]
    ctx = RunContext(deps=None, model=model, usage=RunUsage(), messages=messages)

    def request() -> Any:
        session.step()
        return ModelRequestContext(model=model, messages=list(messages), model_settings=None,
                                   model_request_parameters=ModelRequestParameters())

    async def go() -> None:
        guard = await loop_guard(config).for_run(ctx) if config is not None else None
        for i, (name, args) in enumerate(session.calls):
            request_context = request()
            if guard is not None:
                request_context = await guard.before_model_request(ctx, request_context)
            call = ToolCallPart(name, args, tool_call_id=f"c{i}")
            response = ModelResponse(parts=[call])
            if guard is not None:
                response = await guard.after_model_request(
                    ctx, request_context=request_context, response=response)
            messages.append(response)
            if guard is not None:
                await guard.before_tool_execute(
                    dataclasses.replace(ctx, tool_call_id=call.tool_call_id, tool_name=name),
                    call=call, tool_def=tool_def, args=args)
            text = session.tool(args["path"])
            messages.append(ModelRequest(parts=[ToolReturnPart(name, text,
                                                               tool_call_id=f"c{i}")]))
        request_context = request()
        if guard is not None:
            await guard.before_model_request(ctx, request_context)

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import pydantic_ai

    cls = pydantic_ai._CLASSES.guard
    return [(cls, "for_run"), (cls, "before_model_request"), (cls, "after_model_request"),
            (cls, "before_tool_execute")]


register(Driver("pydantic-ai", "pydantic_ai", run, hooks,
                surface="its capability hooks with the graph's RunContext "
                        "(the graph re-reads the history each request)"))
