"""smolagents: a real ``ToolCallingAgent``'s tool execution and step callbacks, called as
its run loop calls them.

Why not the whole loop: the agent rewrites its whole memory into model messages at every
step (``write_memory_to_messages``: 3 → 11 ms a step over a 400-call run here, with a
scripted ``Model``: well over an hour at 10,000 calls on this shared machine). So this
drives the surface the guard sits on with smolagents' own objects: a
``ToolCallingAgent`` with ``tools=guard.tools([...])`` and ``step_callbacks=[guard]``;
per call ``agent.step_number`` set, an ``ActionStep`` with the ``ToolCall``, the
agent's own ``execute_tool_call`` (the guarded tool asks the guard first; a refusal
would fail the run), the observation set, ``agent._finalize_step`` (which calls the step
callbacks, the guard among them), the step appended to ``agent.memory.steps``, which
grows over the whole run."""

from __future__ import annotations

import time
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from smolagents import Model, ToolCallingAgent, tool
    from smolagents.memory import ActionStep, TaskStep, ToolCall
    from smolagents.monitoring import Timing

    from maxrepeat.guards.frameworks.smolagents import loop_guard

    @tool
    def edit(path: str, text: str) -> str:
        """Write a file.

        Args:
            path: The file.
            text: What to write.
        """
        return session.tool(path)

    guard = loop_guard(config) if config is not None else None
    tools = guard.tools([edit]) if guard is not None else [edit]
    agent = ToolCallingAgent(tools=tools, model=Model(model_id="scripted"),
                             step_callbacks=[guard] if guard is not None else [],
                             max_steps=len(session.calls) + 5, verbosity_level=-1)
    agent.memory.steps.append(TaskStep(task="go"))
    for i, (name, args) in enumerate(session.calls):
        session.step()
        agent.step_number = i + 1
        step = ActionStep(step_number=i + 1, timing=Timing(start_time=time.time()),
                          tool_calls=[ToolCall(name=name, arguments=args, id=f"c{i}")])
        out = agent.execute_tool_call(name, args)
        if out != f"wrote {args['path']}":
            raise AssertionError(f"call {i} refused: {out}")
        step.observations = str(out)
        agent._finalize_step(step)
        agent.memory.steps.append(step)
    session.step()


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import smolagents

    return [(smolagents._CLASSES.guard, "__call__"), (smolagents._Logic, "check")]


register(Driver("smolagents", "smolagents", run, hooks,
                surface="a real ToolCallingAgent's execute_tool_call and step callbacks "
                        "(the agent rewrites its memory into messages each step)"))
