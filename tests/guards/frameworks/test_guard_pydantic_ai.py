"""The pydantic-ai guard in a real pydantic-ai agent driven by pydantic-ai's own
``FunctionModel``, through a loop, a cycle and a clean run."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.pydantic_ai import (
    loop_guard,
    stop_error_class,
    trajectory_from_messages,
)
from tests import guard_scenarios as gs


def _text(messages: list[ModelMessage]) -> str:
    return "\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)


def _run(scenario: str, config: MaxRepeatConfig) -> gs.Outcome:
    from pydantic_ai import Agent, capture_run_messages
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    script = gs.steps(scenario)
    sent: list[str] = []
    executed: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(_text(messages))
        if len(sent) > len(script):
            return ModelResponse(parts=[TextPart("Done.")])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(sent)}_{j}")
                                    for j, (name, args) in enumerate(script[len(sent) - 1])])

    agent = Agent(FunctionModel(model), tools=gs.scripted_tools(executed),
                  capabilities=[loop_guard(config)])
    stopped = None
    error = stop_error_class()
    with capture_run_messages() as messages:  # pydantic-ai's way to see a failed run
        try:
            # asyncio.run closes its loop (run_sync keeps one open for later runs).
            asyncio.run(agent.run("Make the tests pass."))
        except error as err:
            stopped = err
    return gs.Outcome(sent, trajectory_from_messages(messages), len(executed), stopped)


@pytest.mark.parametrize("case", gs.CASES)
def test_pydantic_ai_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(_run, case)


def test_pydantic_ai_stop_error_is_an_agent_run_error() -> None:
    from pydantic_ai.exceptions import AgentRunError

    outcome = _run("loop", gs.NAME_ARGS)
    assert isinstance(outcome.stopped, AgentRunError)
    assert outcome.stopped.results[0].metadata.occurrences == 5


def test_pydantic_ai_warning_stays_in_the_history() -> None:
    gs.check_warning_stays(_run("cycle", gs.NAME_ARGS))


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "pydantic_ai", "pydantic_ai.capabilities", "pydantic-ai")
