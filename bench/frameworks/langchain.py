"""LangChain v1 (``create_agent``) with ``FakeMessagesListChatModel``."""

from __future__ import annotations

from typing import Any

from . import Driver, Session, register


def run(session: Session, config: Any) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from maxrepeat.guards.frameworks.langchain import loop_guard

    class Model(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            session.step()
            return super()._generate(*args, **kwargs)

    @tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return session.tool(path)

    responses: list[Any] = [
        AIMessage(content="", tool_calls=[{"id": f"c{i}", "name": name, "args": args}])
        for i, (name, args) in enumerate(session.calls)]
    responses.append(AIMessage(content="done"))
    middleware = [loop_guard(config)] if config is not None else []
    agent = create_agent(Model(responses=responses), [edit], middleware=middleware)
    agent.invoke({"messages": [HumanMessage("go")]},
                 {"recursion_limit": 4 * len(session.calls) + 20})


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import langchain

    return [(langchain._Guard, "before_model"), (langchain._Guard, "after_model")]


register(Driver("langchain", "langchain", run, hooks))
