"""The pydantic-ai guard when pydantic-ai trims the history during the run: a real agent
driven by pydantic-ai's ``FunctionModel`` with a ``ProcessHistory`` capability keeping
the last three messages (pydantic-ai 2's history processor: it rewrites the run's
persistent history, ``ctx.messages``, before every model request, so long before the loop
is caught), placed before the guard and after it. The guard must still warn, refuse and
stop where ``grade()`` of the whole run says, and count what ``grade()`` counts of every
message the run made (kept as the processor first saw them, trimmed or not)."""

from __future__ import annotations

from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.pydantic_ai import loop_guard, trajectory_from_messages
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, Outcome, check, scripted_tools, steps
from tests.guards.frameworks import _pydantic_ai_scripts as pas

KEEP = 3  # messages the history processor keeps: the prompt is gone after the first step


class _Record:
    """Every message of the run once, in order: what the processor is given (before it
    trims) and what the run ends with."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self._ids: set[int] = set()
        self.trimmed = 0

    def add(self, messages: list[Any]) -> None:
        for message in messages:
            if id(message) not in self._ids:
                self._ids.add(id(message))
                self.messages.append(message)

    def keep_last(self, messages: list[Any]) -> list[Any]:  # (resolved at run time)
        self.add(messages)
        self.trimmed += max(0, len(messages) - KEEP)
        return messages[-KEEP:]


def _run(scenario: str, config: MaxRepeatConfig, guard_first: bool) -> Outcome:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory

    sent: list[str] = []
    executed: list[str] = []
    record = _Record()
    trim, guard = ProcessHistory(record.keep_last), loop_guard(config)
    agent = Agent(pas.function_model(steps(scenario), sent), tools=scripted_tools(executed),
                  capabilities=[guard, trim] if guard_first else [trim, guard])
    stopped, messages = pas.run(agent)
    assert record.trimmed > 0 and len(messages) <= KEEP + 2  # trimmed during the run
    record.add(messages)
    return Outcome(sent, trajectory_from_messages(record.messages), len(executed), stopped)


@pytest.mark.parametrize("guard_first", [False, True], ids=["trim-first", "guard-first"])
@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_pydantic_ai_guard_holds_while_history_is_trimmed(scenario: str,
                                                          guard_first: bool) -> None:
    check(_run(scenario, NAME_ARGS, guard_first), NAME_ARGS, scenario)


@pytest.mark.parametrize("guard_first", [False, True], ids=["trim-first", "guard-first"])
def test_pydantic_ai_observation_guard_holds_while_history_is_trimmed(guard_first: bool) -> None:
    outcome = _run("loop", OBSERVATION, guard_first)
    check(outcome, OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)
