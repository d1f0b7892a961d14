"""Inspect AI's ``react()`` agent with the ``mockllm/model`` model."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import Tool, tool

    from maxrepeat.guards.frameworks.inspect import loop_guard

    @tool
    def edit() -> Tool:
        async def execute(path: str, text: str) -> str:
            """Write a file.

            Args:
                path: The file.
                text: What to write.
            """
            return session.tool(path)

        return execute

    def outputs() -> Iterator[ModelOutput]:
        script = [*session.calls, ("submit", {"answer": "done"})]
        for i, (name, args) in enumerate(script):
            session.step()
            out = ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"c{i}")
            out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            yield out

    if config is not None:
        guard = loop_guard(config)
        agent = react(tools=[edit()], on_continue=guard.on_continue, approval=guard.approval)
    else:
        from inspect_ai.approval import ApprovalPolicy, auto_approver

        # the same approval machinery, so the difference is the guard's own work
        agent = react(tools=[edit()], approval=[ApprovalPolicy(auto_approver(), "*")])
    with tempfile.TemporaryDirectory() as logs:
        eval(Task(dataset=[Sample(input="go")], solver=agent,
                  message_limit=3 * len(session.calls) + 20),
             model=get_model("mockllm/model", custom_outputs=outputs()), log_dir=logs,
             display="none")


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks.inspect import LoopGuard

    return [(LoopGuard, "approve"), (LoopGuard, "on_continue")]


register(Driver("inspect", "inspect_ai", run, hooks))
