"""The OpenAI Agents SDK: the three places its run loop calls the guard, as it does.

Why not the whole loop: the SDK's ``Runner`` rebuilds the model input from every item of
the run at each turn (21 → 212 ms a step over a 1,000-call run here, with a scripted
``Model``: hours at 10,000 calls). So this drives the surface the guard sits on, in the
run loop's order, with the SDK's own objects: an ``Agent`` whose ``function_tool`` comes
from ``guard.tools([...])``, a ``RunContextWrapper`` for the run; per turn the run
config's ``call_model_input_filter`` (from ``guard.run_config()``) with a
``CallModelData`` holding the whole input list (the task, then every call and output
item so far, as the SDK sends it), ``on_llm_start`` with the filtered input,
``on_llm_end`` with a ``ModelResponse`` holding the ``ResponseFunctionToolCall``, each of
the tool's input guardrails with a ``ToolContext`` (a rejection would fail the run), the
tool's ``on_invoke_tool``, the call and its output appended to the input; a last turn."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from agents import Agent, RunConfig, RunContextWrapper, function_tool
    from agents.items import ModelResponse
    from agents.run_config import CallModelData, ModelInputData
    from agents.tool_context import ToolContext
    from agents.tool_guardrails import ToolInputGuardrailData
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall

    from maxrepeat.guards.frameworks.openai_agents import loop_guard

    @function_tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    guard = loop_guard(config) if config is not None else None
    tool = guard.tools([edit])[0] if guard is not None else edit
    run_config = guard.run_config(RunConfig(tracing_disabled=True)) if guard is not None \
        else RunConfig(tracing_disabled=True)
    agent = Agent(name="a", tools=[tool])
    wrapper = RunContextWrapper(context=None)
    items: list[Any] = [{"role": "user", "content": "go"}]

    async def turn() -> None:
        session.step()
        data = ModelInputData(input=items, instructions=None)
        if run_config.call_model_input_filter is not None:
            data = run_config.call_model_input_filter(CallModelData(
                model_data=data, agent=agent, context=None))
        if guard is not None:
            await guard.on_llm_start(wrapper, agent, data.instructions, data.input)

    async def go() -> None:
        for i, (name, args) in enumerate(session.calls):
            await turn()
            arguments = json.dumps(args)
            call = ResponseFunctionToolCall(type="function_call", call_id=f"c{i}", name=name,
                                            arguments=arguments)
            if guard is not None:
                await guard.on_llm_end(wrapper, agent, ModelResponse(
                    output=[call], usage=Usage(), response_id=None))
            context = ToolContext(context=None, tool_name=name, tool_call_id=f"c{i}",
                                  tool_arguments=arguments, tool_call=call)
            for rail in tool.tool_input_guardrails or ():
                out = await rail.run(ToolInputGuardrailData(context=context, agent=agent))
                if out.behavior["type"] != "allow":
                    raise AssertionError(f"call {i} refused: {out.behavior}")
            output = await tool.on_invoke_tool(context, arguments)
            items.append(call.model_dump(exclude_unset=True))
            items.append({"type": "function_call_output", "call_id": f"c{i}",
                          "output": str(output)})
        await turn()

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import openai_agents

    cls = openai_agents._CLASSES.guard
    return [(cls, "on_llm_start"), (cls, "on_llm_end"), (cls, "_filter"), (cls, "_check")]


register(Driver("openai-agents", "agents", run, hooks,
                surface="the run loop's three guard calls with the SDK's objects "
                        "(the Runner rebuilds the input each turn)"))
