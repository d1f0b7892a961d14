"""The Strands guard when Strands trims the history during the run: a real ``Agent`` with
``SlidingWindowConversationManager(window_size=4, per_turn=True)`` (the oldest messages
dropped from ``agent.messages`` before every model call, so long before the loop is
caught), its model Strands' OpenAI provider on a scripted server on 127.0.0.1. The guard
must still warn, refuse and stop where ``grade()`` of the whole run says, and count what
``grade()`` counts of every message the run added (kept as they were added, trimmed or
not)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from tests.guard_scenarios import NAME_ARGS, OBSERVATION, Outcome, check, scripted_tools, steps
from tests.scripted_chat import ChatModel

WINDOW = 4  # messages kept: the task is gone after the second model call


def _run(scenario: str, config: MaxRepeatConfig) -> Outcome:
    from strands import Agent, tool
    from strands.agent.conversation_manager import SlidingWindowConversationManager
    from strands.hooks import HookProvider, HookRegistry, MessageAddedEvent
    from strands.models.openai import OpenAIModel

    from maxrepeat.guards.frameworks.strands import (
        loop_guard,
        stop_error_class,
        trajectory_from_messages,
    )

    executed: list[str] = []
    added: list[Any] = []  # every message of the run, as added (the same objects)

    class Recorder(HookProvider):  # type: ignore[misc]
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(MessageAddedEvent, lambda event: added.append(event.message))

    window = SlidingWindowConversationManager(window_size=WINDOW, per_turn=True)
    with ChatModel([*steps(scenario)]).serving() as chat:
        model = OpenAIModel(client_args={"base_url": chat.url, "api_key": "scripted"},
                            model_id="scripted")
        agent = Agent(model=model, tools=[tool(f) for f in scripted_tools(executed)],
                      conversation_manager=window,
                      hooks=[Recorder(), loop_guard(config)], callback_handler=None)
        stopped = None
        try:
            agent("Make the tests pass.")
        except stop_error_class() as err:
            stopped = err
        sent = [r["messages"] for r in chat.requests]
    assert window.removed_message_count > 0  # the history was trimmed during the run
    assert len(agent.messages) <= WINDOW + 2
    contexts = [json.dumps(messages) for messages in sent]
    return Outcome(contexts, trajectory_from_messages(added), len(executed), stopped)


@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_strands_guard_holds_while_the_window_trims_the_history(scenario: str) -> None:
    check(_run(scenario, NAME_ARGS), NAME_ARGS, scenario)


def test_strands_observation_guard_holds_while_the_window_trims_the_history() -> None:
    outcome = _run("loop", OBSERVATION)
    check(outcome, OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)
