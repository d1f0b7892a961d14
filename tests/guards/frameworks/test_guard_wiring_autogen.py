"""Two real AutoGen ``AssistantAgent`` made by one guard and run at the same time (each
with AutoGen's own ``ReplayChatCompletionClient``): each keeps its own count, as one
agent alone does."""

from __future__ import annotations

import asyncio
from typing import Any

from maxrepeat import grade
from maxrepeat.guards.frameworks.autogen import (
    loop_guard,
    stop_error_class,
    trajectory_from_messages,
)
from tests import guard_scenarios as gs
from tests.guards.frameworks.test_guard_autogen import _agent

_needs = gs.needs("autogen_agentchat", reason="the autogen extra (a venv of its own)")


async def _both(agents: list[Any]) -> list[Any]:
    return await asyncio.gather(*(a.run(task="Make the tests pass.") for a in agents),
                                return_exceptions=True)


def test_autogen_agents_sharing_a_guard_at_once_count_apart() -> None:
    guard = loop_guard(gs.NAME_ARGS)
    executed: list[list[str]] = [[], []]
    agents = [_agent(guard, "loop", [], executed[i]) for i in range(2)]
    outcomes = asyncio.run(_both(agents))
    for agent, ran, outcome in zip(agents, executed, outcomes, strict=True):
        # alone: 3 ran, the 4th refused, the 5th stopped (gs.check of "loop")
        assert len(ran) == 3, executed
        assert isinstance(outcome, stop_error_class()), outcome
        [live] = outcome.results
        messages = asyncio.run(agent.model_context.get_messages())
        assert live.evidence == grade(trajectory_from_messages(messages),
                                      gs.NAME_ARGS).evidence
        assert live.metadata.occurrences == 5
