"""The pydantic-ai guard when pydantic-ai trims the history during the run: a real agent
driven by pydantic-ai's ``FunctionModel`` with a ``ProcessHistory`` capability keeping
the last three messages (pydantic-ai 2's history processor: it rewrites the run's
persistent history, ``ctx.messages``, before every model request, so long before the loop
is caught), placed before the guard and after it. The guard must still warn, refuse and
stop where ``grade()`` of the whole run says, and count what ``grade()`` counts of every
message the run made (kept as the processor first saw them, trimmed or not)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.pydantic_ai import (
    loop_guard,
    stop_error_class,
    trajectory_from_messages,
)
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, SCRIPTS, Outcome, check, tool_output

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


def _text(messages: list[ModelMessage]) -> str:
    return "\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)


def _run(scenario: str, config: MaxRepeatConfig, guard_first: bool) -> Outcome:
    from pydantic_ai import Agent, capture_run_messages
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    script = [[c] for c in SCRIPTS[scenario]]
    sent: list[str] = []
    executed: list[str] = []
    record = _Record()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(_text(messages))
        if len(sent) > len(script):
            return ModelResponse(parts=[TextPart("Done.")])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(sent)}_{j}")
                                    for j, (name, args) in enumerate(script[len(sent) - 1])])

    trim, guard = ProcessHistory(record.keep_last), loop_guard(config)
    agent = Agent(FunctionModel(model),
                  capabilities=[guard, trim] if guard_first else [trim, guard])

    @agent.tool_plain  # type: ignore[untyped-decorator]
    def run_tests(path: str) -> str:
        """Run the tests under path."""
        executed.append("run_tests")
        return tool_output("run_tests", {"path": path})

    @agent.tool_plain  # type: ignore[untyped-decorator]
    def edit(path: str, text: str) -> str:
        """Write text to the file at path."""
        executed.append("edit")
        return tool_output("edit", {"path": path})

    stopped = None
    with capture_run_messages() as messages:
        try:
            asyncio.run(agent.run("Make the tests pass."))
        except stop_error_class() as err:
            stopped = err
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
