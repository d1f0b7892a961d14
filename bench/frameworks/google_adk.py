"""Google ADK: the plug-in callbacks its runner and LLM flow call, on a real runner.

Why not the whole loop: ADK's flow rebuilds the model request from every event of the
session at each step (17 → 94 ms a step over a 300-call run here, with a scripted
``BaseLlm``: hours at 10,000 calls). So this drives the surface the guard sits on, as
the runner and the flow do, in their order, with ADK's own objects: an ``LlmAgent`` in
an ``InMemoryRunner`` whose ``App`` has the guard in ``plugins=``; the invocation
context the runner makes (``_new_invocation_context``), its ``PluginManager``; per
call ``run_before_model_callback`` (then the agent's own before-model callbacks, where
the guard adds its stop check) with an ``LlmRequest``, ``run_after_model_callback``
with the ``LlmResponse`` holding the ``function_call``, its ``Event`` appended to the
session, ``run_before_tool_callback`` with a ``ToolContext`` (an answer instead of
the tool would fail the run), the tool, its ``function_response`` event
appended; a last model request. ``session.events`` grows over the whole run."""

from __future__ import annotations

import asyncio
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.apps import App
    from google.adk.events import Event
    from google.adk.models import LlmRequest, LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types

    from maxrepeat.guards.frameworks.google_adk import loop_guard

    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    tool = FunctionTool(edit)
    agent = LlmAgent(name="a", model="gemini-2.5-flash", tools=[tool])
    runner = InMemoryRunner(app=App(name="a", root_agent=agent,
                                    plugins=[loop_guard(config)] if config is not None else []))

    async def model_request(ic: Any) -> None:
        session.step()
        context = CallbackContext(ic)
        request = LlmRequest(contents=[e.content for e in ic.session.events[-2:]])
        await ic.plugin_manager.run_before_model_callback(callback_context=context,
                                                          llm_request=request)
        for callback in agent.canonical_before_model_callbacks:
            await_me = callback(callback_context=context, llm_request=request)
            if asyncio.iscoroutine(await_me):
                await await_me

    async def go() -> None:
        s = await runner.session_service.create_session(app_name="a", user_id="u")
        task = types.Content(role="user", parts=[types.Part(text="go")])
        ic = runner._new_invocation_context(s, new_message=task)
        s.events.append(Event(author="user", invocation_id=ic.invocation_id, content=task))
        await ic.plugin_manager.run_before_run_callback(invocation_context=ic)
        await ic.plugin_manager.run_before_agent_callback(agent=agent,
                                                          callback_context=CallbackContext(ic))
        for i, (name, args) in enumerate(session.calls):
            await model_request(ic)
            call = types.FunctionCall(id=f"c{i}", name=name, args=args)
            response = LlmResponse(content=types.Content(role="model", parts=[
                types.Part(function_call=call)]))
            await ic.plugin_manager.run_after_model_callback(
                callback_context=CallbackContext(ic), llm_response=response)
            s.events.append(Event(author="a", invocation_id=ic.invocation_id,
                                  content=response.content))
            answer = await ic.plugin_manager.run_before_tool_callback(
                tool=tool, tool_args=args, tool_context=ToolContext(ic, function_call_id=call.id))
            if answer is not None:
                raise AssertionError(f"call {i} refused: {answer}")
            result = {"result": edit(**args)}
            s.events.append(Event(author="a", invocation_id=ic.invocation_id, content=types.Content(
                role="user", parts=[types.Part(function_response=types.FunctionResponse(
                    id=call.id, name=name, response=result))])))
        await model_request(ic)
        await ic.plugin_manager.run_after_run_callback(invocation_context=ic)

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import google_adk

    cls = google_adk._CLASSES.guard
    return [(cls, name) for name in ("before_agent_callback", "before_run_callback",
                                     "before_model_callback", "after_model_callback",
                                     "before_tool_callback", "_stop_check",
                                     "after_run_callback")]


register(Driver("google-adk", "google.adk", run, hooks,
                surface="the plug-in callbacks on a real runner's invocation "
                        "(the flow rebuilds the request from every event)"))
