"""LangChain v1: the middleware hooks ``create_agent`` calls, as its graph calls them.

Why not the whole loop: the agent graph merges each update into the message list by id
(``add_messages`` walks the whole list at every step) and re-sends the history to the
model (10 → 16 ms a step over a 400-call run here, with ``FakeMessagesListChatModel``:
well over an hour at 10,000 calls on this shared machine). So this drives the surface
the guard sits on with LangChain's own objects: the middleware from ``loop_guard`` and
the agent state's message list (a ``HumanMessage``, then every ``AIMessage`` with its
tool call and every ``ToolMessage`` so far, each with an id as the graph gives them);
per call ``before_model(state, runtime)``, the ``AIMessage`` appended,
``after_model(state, runtime)`` (a refusal or a stop would fail the run), the ``@tool``
invoked with the ``ToolCall``, its ``ToolMessage`` appended; a last ``before_model``."""

from __future__ import annotations

from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from maxrepeat.guards.frameworks.langchain import loop_guard

    @tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    middleware = loop_guard(config) if config is not None else None
    state: dict[str, Any] = {"messages": [HumanMessage("go", id="m")]}
    messages = state["messages"]
    for i, (name, args) in enumerate(session.calls):
        session.step()
        if middleware is not None and middleware.before_model(state, None) is not None:
            raise AssertionError(f"call {i}: warned")
        call = {"id": f"c{i}", "name": name, "args": args, "type": "tool_call"}
        messages.append(AIMessage(content="", tool_calls=[call], id=f"a{i}"))
        if middleware is not None and middleware.after_model(state, None) is not None:
            raise AssertionError(f"call {i} refused")
        result = edit.invoke(call)
        result.id = f"t{i}"
        messages.append(result)
    session.step()
    if middleware is not None:
        middleware.before_model(state, None)


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import langchain

    cls = langchain._CLASSES.guard
    return [(cls, "before_model"), (cls, "after_model")]


register(Driver("langchain", "langchain", run, hooks,
                surface="its middleware hooks on the agent state's messages "
                        "(the graph walks the whole list each step)"))
