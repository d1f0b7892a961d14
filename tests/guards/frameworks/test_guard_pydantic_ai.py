"""The pydantic-ai guard in a real pydantic-ai agent driven by pydantic-ai's own
``FunctionModel``, through a loop, a cycle and a clean run."""

from __future__ import annotations

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.pydantic_ai import loop_guard, trajectory_from_messages
from tests import guard_scenarios as gs
from tests.guards.frameworks import _pydantic_ai_scripts as pas


def _run(scenario: str, config: MaxRepeatConfig) -> gs.Outcome:
    from pydantic_ai import Agent

    sent: list[str] = []
    executed: list[str] = []
    agent = Agent(pas.function_model(gs.steps(scenario), sent),
                  tools=gs.scripted_tools(executed), capabilities=[loop_guard(config)])
    stopped, messages = pas.run(agent)
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
