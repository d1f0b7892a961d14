"""smolagents' ``ToolCallingAgent`` with a scripted ``Model``."""

from __future__ import annotations

from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from smolagents import Model, ToolCallingAgent, tool
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
    )

    from maxrepeat.guards.frameworks.smolagents import loop_guard

    script = [*session.calls, ("final_answer", {"answer": "done"})]

    class Scripted(Model):
        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            self.i = 0

        def generate(self, messages: Any, stop_sequences: Any = None,
                     response_format: Any = None, tools_to_call_from: Any = None,
                     **kwargs: Any) -> ChatMessage:
            session.step()
            name, args = script[self.i]
            self.i += 1
            call = ChatMessageToolCall(id=f"c{self.i}", type="function",
                                       function=ChatMessageToolCallFunction(name=name,
                                                                            arguments=args))
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

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
    agent = ToolCallingAgent(tools=tools, model=Scripted(),
                             step_callbacks=[guard] if guard is not None else [],
                             max_steps=len(session.calls) + 5, verbosity_level=-1)
    agent.run("go")


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import smolagents

    return [(smolagents._CLASSES.guard, "__call__"), (smolagents._Logic, "check")]


register(Driver("smolagents", "smolagents", run, hooks))
