"""CrewAI: the model-call and tool-call hooks its agent executor fires, on a real agent.

Why not the whole loop: CrewAI's model is reached only over HTTP, and each step of its
``AgentExecutor`` (a ``Flow``) costs more with the history: a whole kickoff against a
scripted Chat Completions server in the process (as in its test) took 9.6 s of CPU for
100 calls and 44.9 s for 300 here (96 → 150 ms a step on average: hours at 10,000
calls). So this drives the surface the guard sits on, as the executor does, with
CrewAI's own objects: a real ``Agent`` (its one tool ``edit``, no tool cache) of a real
``Task`` and ``Crew``, its real ``AgentExecutor`` (``agent.agent_executor``, made by
``create_agent_executor``, which holds the guard's model hook; its native tools set up
as at the loop's first iteration), and per call: CrewAI's own before-model seam
(``_setup_before_llm_call_hooks`` on the executor: an ``LLMCallHookContext`` through the
executor's hooks, as before each model request), the assistant message with the call's
``tool_calls`` appended to the executor's messages, the executor's own
``_execute_single_native_tool_call`` (a ``ToolCallHookContext`` through the
``PRE_TOOL_CALL`` hooks, the tool, the ``POST_TOOL_CALL`` hooks) and the ``tool``
message appended. A blocked or replaced result would fail the run (checked). The history
grows in the executor's messages over the whole run, as in the loop."""

from __future__ import annotations

import importlib
import json
import os
import warnings
from typing import Any

from . import Driver, Session, register


def _import_crewai() -> None:
    """Import CrewAI once, with nothing leaving the machine, and without the
    ``ImportWarning`` its ``crewai.rag`` module raises on import (made an error under
    the tests' warning filter; ``pytest.importorskip`` hides it the same way)."""
    for name, value in {"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true",
                        "CREWAI_TRACING_ENABLED": "false"}.items():
        os.environ.setdefault(name, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImportWarning)
        importlib.import_module("crewai")


def run(session: Session, config: Any) -> None:
    _import_crewai()
    with warnings.catch_warnings():  # the deprecations CrewAI's own agents warn of
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="crewai")
        _run(session, config)


def _run(session: Session, config: Any) -> None:
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool
    from crewai.utilities.agent_utils import _setup_before_llm_call_hooks
    from crewai_core.printer import Printer

    from maxrepeat.guards.frameworks.crewai import loop_guard

    @tool("edit")
    def edit(path: str, text: str) -> str:
        """Write text to the file at path."""
        return session.tool(path)

    guard = loop_guard(config) if config is not None else None  # before the agent
    try:
        llm = LLM(model="openai/scripted", base_url="http://127.0.0.1:9", api_key="x")
        agent = Agent(role="dev", goal="Edit files.", backstory="A developer.", llm=llm,
                      tools=[edit], cache=False, max_iter=len(session.calls) + 1)
        task = Task(description="Edit files.", expected_output="Done.", agent=agent)
        Crew(agents=[agent], tasks=[task])
        agent.create_agent_executor(task=task)
        executor: Any = agent.agent_executor
        executor._setup_native_tools()  # what the loop does at its first iteration
        executor.messages.append({"role": "user", "content": "go"})
        printer = Printer()
        for i, (name, args) in enumerate(session.calls):
            session.step()
            _setup_before_llm_call_hooks(executor, printer)
            call = {"id": f"c{i}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}
            executor.messages.append({"role": "assistant", "content": None,
                                      "tool_calls": [call]})
            out = executor._execute_single_native_tool_call(call)
            if out["result"] != f"wrote {args['path']}":
                raise AssertionError(f"call {i}: {out['result']!r}")
            executor.messages.append({"role": "tool", "tool_call_id": f"c{i}",
                                      "name": name, "content": out["result"]})
        session.step()
        _setup_before_llm_call_hooks(executor, printer)
    finally:
        if guard is not None:
            guard.remove()


def hooks() -> list[tuple[Any, str]]:
    _import_crewai()
    from maxrepeat.guards.frameworks import crewai

    cls = crewai._CLASSES.guard
    return [(cls, "before_model"), (cls, "before_tool"), (cls, "after_tool")]


register(Driver("crewai", "crewai", run, hooks,
                surface="its executor's model and tool hook seams on a real Agent "
                        "(each step of its loop grows with the history)"))
