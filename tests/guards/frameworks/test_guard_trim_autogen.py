"""The AutoGen guard when the agent's model context trims what the model is sent.

``AssistantAgent(model_context=BufferedChatCompletionContext(buffer_size=N))`` sends the
model only the last N messages of its context (``HeadAndTailChatCompletionContext``, the
first and the last ones with a "Skipped k messages." note between), so from some call on
each request is as long as the one before, or shorter: the guard must still read each
step's results once, keep its count, and put its warning after the results it follows
(never between a call and its results), whatever the window. Driven by AutoGen's own
``ReplayChatCompletionClient``; the record is the context's whole message list
(``save_state``), not the trimmed view. Runs in ``.venv-autogen`` (scripts/test.sh)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests import guard_scenarios as gs
from tests.guards.frameworks import _autogen_scripts as ags

_needs = gs.needs("autogen_agentchat", reason="the autogen extra (a venv of its own)")


def _context(kind: str) -> Any:
    from autogen_core.model_context import (
        BufferedChatCompletionContext,
        HeadAndTailChatCompletionContext,
    )

    if kind == "buffered":
        return BufferedChatCompletionContext(buffer_size=4)
    return HeadAndTailChatCompletionContext(head_size=1, tail_size=3)


def _run(scenario: str, config: Any, kind: str) -> tuple[gs.Outcome, list[list[Any]]]:
    """The scenario in an agent whose context is ``kind``: the outcome and each request."""
    from autogen_core.model_context import ChatCompletionContextState

    from maxrepeat.guards.frameworks.autogen import loop_guard, trajectory_from_messages

    requests: list[list[Any]] = []
    executed: list[str] = []
    agent = loop_guard(config).agent(
        "dev", model_client=ags.replay(gs.steps(scenario), requests.append),
        tools=gs.scripted_tools(executed), max_tool_iterations=50, model_context=_context(kind))
    stopped = ags.run(agent)
    state = asyncio.run(agent.model_context.save_state())
    record = ChatCompletionContextState.model_validate(state).messages
    contexts = [ags.text(r) for r in requests]
    return gs.Outcome(contexts, trajectory_from_messages(record), len(executed),
                      stopped), requests


def _trimmed(requests: list[list[Any]]) -> bool:
    """Whether a request (the guard's notes left out) was no longer than the one before."""
    sizes = [sum(getattr(m, "source", None) != "maxrepeat" for m in r) for r in requests]
    return any(b <= a for a, b in zip(sizes, sizes[1:], strict=False))


@pytest.mark.parametrize("kind", ["buffered", "head-and-tail"])
@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_autogen_trimmed_context_keeps_the_contract(scenario: str, kind: str) -> None:
    outcome, requests = _run(scenario, gs.NAME_ARGS, kind)
    assert _trimmed(requests)
    gs.check(outcome, gs.NAME_ARGS, scenario)


@pytest.mark.parametrize("kind", ["buffered", "head-and-tail"])
def test_autogen_trimmed_context_observation_mode(kind: str) -> None:
    outcome, requests = _run("loop", gs.OBSERVATION, kind)
    assert _trimmed(requests)
    gs.check(outcome, gs.OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)


@pytest.mark.parametrize("kind", ["buffered", "head-and-tail"])
def test_autogen_warning_stays_and_never_splits_a_call_from_its_results(kind: str) -> None:
    from autogen_core.models import AssistantMessage, FunctionExecutionResultMessage

    outcome, requests = _run("cycle", gs.NAME_ARGS, kind)
    first = next(i for i, text in enumerate(outcome.contexts) if gs.MARK in text)
    for request in requests[first:]:
        notes = [i for i, m in enumerate(request) if gs.MARK in str(m.content)
                 and not isinstance(m, FunctionExecutionResultMessage)]
        assert notes, request  # the warning stays in every later request
        for i in notes:
            assert not isinstance(request[i - 1], AssistantMessage), request
        for i, m in enumerate(request[:-1]):  # each call is followed by its results
            if isinstance(m, AssistantMessage) and isinstance(m.content, list):
                assert isinstance(request[i + 1], FunctionExecutionResultMessage), request
