"""A real LlamaIndex ``FunctionAgent`` (LlamaIndex's own ``MockFunctionCallingLLM``) whose
``llm`` (or ``tools``) is replaced after ``guard.agent(...)`` wired it: the run would go
unguarded, so the guard refuses it at the first step, naming the fix."""

from __future__ import annotations

import asyncio

import pytest

from tests import guard_scenarios as gs
from tests.guards.frameworks.test_guard_llama_index import _agent, _once

_needs = gs.needs("llama_index.core")


def test_llama_index_llm_replaced_after_guarding_is_refused_at_the_first_step() -> None:
    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    agent = loop_guard(gs.NAME_ARGS).agent(_agent([], [], executed))
    agent.llm = _agent(gs.steps("loop"), sent, []).llm  # after guarding
    with pytest.raises(TypeError, match=r"agent's llm was replaced .* set agent\.llm first"):
        asyncio.run(_once(agent, stop_error_class()))
    assert sent == executed == []  # refused before the model was asked


def test_llama_index_agent_guarded_after_its_llm_is_set_is_guarded() -> None:
    """The fix the error names: the same two agents, the llm set first."""
    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    agent = _agent([], [], executed)
    agent.llm = _agent(gs.steps("loop"), sent, []).llm
    agent = loop_guard(gs.NAME_ARGS).agent(agent)
    stopped, _ = asyncio.run(_once(agent, stop_error_class()))
    assert stopped is not None and len(executed) == 3  # as gs.check of "loop" has it


def test_llama_index_tools_replaced_after_guarding_are_refused_at_the_first_step() -> None:
    """``agent.tools`` set after ``guard.agent(...)``: its calls would run unrefused, so the
    first step is refused, naming the fix."""
    from llama_index.core.tools import FunctionTool

    from maxrepeat.guards.frameworks.llama_index import loop_guard, stop_error_class

    sent: list[str] = []
    executed: list[str] = []
    agent = loop_guard(gs.NAME_ARGS).agent(_agent(gs.steps("loop"), sent, []))
    agent.tools = [FunctionTool.from_defaults(t) for t in gs.scripted_tools(executed)]
    with pytest.raises(TypeError, match=r"agent's tools were replaced .* set agent\.tools "
                                        r"first"):
        asyncio.run(_once(agent, stop_error_class()))
    assert sent == executed == []  # refused before the model was asked
