"""The set-up block of each framework guard page that no other test runs (a ``py`` block:
it names the user's model and tools, so `tests/project/test_docs.py` cannot run it),
run verbatim with what the page tells the user to supply: their model (the framework's
own scripted one, calling ``run_tests`` on ``tests/`` every time) and their tools. The
agent the block makes, run, must be stopped by the guard under the ``live`` preset
(``max=3``): the tool runs 4 times, the fifth repeat is refused, the sixth stops the run.
"""

from __future__ import annotations

import ast
import asyncio
import re
from typing import Any

import pytest

from tests.conftest import ROOT

#: what the ``live`` preset's stop says (max 3: stopped at the sixth repeat)
STOPPED = 'run_tests {"path": "tests/"} repeated 6 times in a row at steps 0-5 (max 3)'


def setup_block(page: str) -> str:
    """The page's first ``py`` block (its set-up)."""
    text = (ROOT / "docs" / "integrations" / f"{page}.md").read_text(encoding="utf-8")
    return re.findall(r"^```py\n(.*?)^```", text, re.MULTILINE | re.DOTALL)[0]


def run_block(page: str, names: dict[str, Any], supply: tuple[str, str] | None = None) -> Any:
    """Runs the page's set-up block in ``names`` (top-level ``await`` allowed, as in a
    notebook), its ``supply[0]`` placeholder (a ``...`` the user fills in) replaced by
    ``supply[1]``; returns what an awaited statement gave, else None."""
    block = setup_block(page)
    if supply is not None:
        assert supply[0] in block, (page, supply)
        block = block.replace(*supply)
    code = compile(block, f"docs/integrations/{page}.md", "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    awaited = eval(code, names)  # the page's own code
    return asyncio.run(awaited) if awaited is not None else None


def counted(ran: list[str]) -> Any:
    def run_tests(path: str) -> str:
        """Run the tests under path."""
        ran.append(path)
        return f"FAILED {path}::test_dates"

    return run_tests


def edit_file(path: str, text: str) -> str:
    """Write text to the file at path."""
    return f"wrote {path}"


def test_langchain_set_up_block() -> None:
    pytest.importorskip("langchain.agents")
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from maxrepeat.guards.frameworks.langchain import LoopStoppedError

    class ScriptedModel(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    ran: list[str] = []
    model = ScriptedModel(responses=[AIMessage(content="", tool_calls=[
        {"id": f"c{i}", "name": "run_tests", "args": {"path": "tests/"}}]) for i in range(12)])
    names: dict[str, Any] = {"model": model, "tools": [tool(counted(ran))]}
    run_block("langchain", names)
    with pytest.raises(LoopStoppedError) as stopped:
        names["agent"].invoke({"messages": [HumanMessage("Make the tests pass.")]})
    assert stopped.value.results[0].evidence == STOPPED and len(ran) == 4


def test_pydantic_ai_set_up_block() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from maxrepeat.guards.frameworks.pydantic_ai import stop_error_class

    def same_call(messages: list[Any], info: Any) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("run_tests", {"path": "tests/"},
                                                 tool_call_id=f"c{len(messages)}")])

    ran: list[str] = []
    names: dict[str, Any] = {"model": FunctionModel(same_call), "run_tests": counted(ran)}
    # the page's ``tools=[...]`` is where the user's tools go
    run_block("pydantic-ai", names, supply=("tools=[...]", "tools=[run_tests]"))
    agent = names["agent"]
    with pytest.raises(stop_error_class()) as stopped:
        agent.run_sync("Make the tests pass.")
    assert stopped.value.results[0].evidence == STOPPED and len(ran) == 4


def test_smolagents_set_up_block() -> None:
    pytest.importorskip("smolagents")
    from smolagents import Model, Tool
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
    )

    from maxrepeat.guards.frameworks.smolagents import stop_error_class

    class SameCallModel(Model):
        def generate(self, messages: Any, stop_sequences: Any = None,
                     response_format: Any = None, tools_to_call_from: Any = None,
                     **kwargs: Any) -> ChatMessage:
            call = ChatMessageToolCall(id=f"c{len(messages)}", type="function",
                                       function=ChatMessageToolCallFunction(
                                           name="run_tests", arguments={"path": "tests/"}))
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    ran: list[str] = []

    class RunTests(Tool):
        name = "run_tests"
        description = "Run the tests."
        inputs = {"path": {"type": "string", "description": "Which tests to run."}}
        output_type = "string"

        def forward(self, path: str) -> str:
            return str(counted(ran)(path))

    class EditFile(Tool):
        name = "edit_file"
        description = "Write text to a file."
        inputs = {"path": {"type": "string", "description": "The file."},
                  "text": {"type": "string", "description": "What to write."}}
        output_type = "string"

        def forward(self, path: str, text: str) -> str:
            return edit_file(path, text)

    names: dict[str, Any] = {"model": SameCallModel(model_id="x"), "run_tests": RunTests(),
                             "edit_file": EditFile()}
    run_block("smolagents", names)
    names["agent"].logger.level = -1  # (quiet: the page's agent prints each step)
    with pytest.raises(stop_error_class()) as stopped:
        names["agent"].run("Make the tests pass.")
    assert stopped.value.results[0].evidence == STOPPED and len(ran) == 4


def test_llama_index_set_up_block() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    from maxrepeat.guards.frameworks.llama_index import stop_error_class

    def same_call(messages: list[Any], **kwargs: Any) -> ChatMessage:
        return ChatMessage(role="assistant", blocks=[ToolCallBlock(
            tool_call_id=f"c{len(messages)}", tool_name="run_tests",
            tool_kwargs={"path": "tests/"})])

    ran: list[str] = []
    names: dict[str, Any] = {
        "llm": MockFunctionCallingLLM(response_generator=same_call, is_chat_model=True),
        "run_tests": counted(ran), "edit_file": edit_file}
    run_block("llama-index", names)

    async def main() -> None:
        await names["agent"].run("Make the tests pass.")

    with pytest.raises(stop_error_class()) as stopped:
        asyncio.run(main())
    assert stopped.value.results[0].evidence == STOPPED and len(ran) == 4


def test_openai_agents_set_up_block() -> None:
    pytest.importorskip("agents")
    from agents import function_tool
    from agents.testing import ScriptedModel, function_call

    from maxrepeat.guards.frameworks.openai_agents import stop_error_class

    ran: list[str] = []
    model = ScriptedModel([[function_call("run_tests", {"path": "tests/"}, call_id=f"c{i}")]
                           for i in range(12)])
    names: dict[str, Any] = {"model": model, "run_tests": function_tool(counted(ran)),
                             "edit_file": function_tool(edit_file)}
    with pytest.raises(stop_error_class()) as stopped:
        run_block("openai-agents", names)  # the block awaits the run itself
    assert stopped.value.results[0].evidence == STOPPED and len(ran) == 4


def test_inspect_guard_set_up_block() -> None:
    """The guard's block (the page's first ``py`` block: the scorer's is ``python``)
    makes a ``react()`` agent from its own imports; the complete eval after it is run by
    `tests/guards/frameworks/test_guard_inspect.py`."""
    pytest.importorskip("inspect_ai")
    names: dict[str, Any] = {}
    run_block("inspect", names)
    assert callable(names["agent"]) and names["guard"].approval is not None
