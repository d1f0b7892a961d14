"""Agno: the tool hook chain of its ``FunctionCall``, as its agent runs each call.

Why not the whole loop: Agno's agent re-reads and re-copies the run's messages at each
step (18 → 233 ms a step over a 200-call run here, with a scripted ``OpenAIChat``
endpoint: hours at 10,000 calls). So this drives the surface the guard
sits on, as the agent does, with Agno's own objects: the tool as an Agno ``Function``
with the guard in its ``tool_hooks`` (what ``Agent(tool_hooks=[...])`` sets) and the
run's ``RunContext`` (whose ``messages`` the guard reads); per call the assistant
``Message`` with the tool call appended to the run's messages, ``FunctionCall.execute()``
(which builds the hook chain and calls the guard with a copy of the messages, as in a
run), the tool's ``Message`` appended. A refusal would fail the run (the result is
checked)."""

from __future__ import annotations

import json
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from agno.models.message import Message
    from agno.run.base import RunContext
    from agno.tools.function import Function, FunctionCall

    from maxrepeat.guards.frameworks.agno import loop_guard

    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    function = Function.from_callable(edit)
    function.tool_hooks = [loop_guard(config)] if config is not None else None
    messages = [Message(role="user", content="go")]
    function._run_context = RunContext(run_id="r", session_id="s", messages=messages)
    for i, (name, args) in enumerate(session.calls):
        session.step()
        messages.append(Message(role="assistant", tool_calls=[{
            "id": f"c{i}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}]))
        call = FunctionCall(function=function, arguments=dict(args), call_id=f"c{i}")
        outcome = call.execute()
        if outcome.status != "success" or call.result != f"wrote {args['path']}":
            raise AssertionError(f"call {i}: {outcome.status} {call.result!r}")
        messages.append(Message(role="tool", tool_call_id=f"c{i}", content=str(call.result)))
    session.step()


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import agno

    return [(agno._CLASSES.guard, "__call__")]


register(Driver("agno", "agno", run, hooks,
                surface="its FunctionCall tool-hook chain with the run's RunContext "
                        "(the agent re-copies the history each step)"))
