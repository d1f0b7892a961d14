"""The Google ADK guard while ADK compacts the history in the middle of a run.

ADK's token-threshold events compaction (``App(events_compaction_config=
EventsCompactionConfig(token_threshold=..., event_retention_size=...))``) runs before
each model call: past the threshold it summarizes the older events (here with ADK's own
``LlmEventSummarizer`` on a scripted ``MockModel``), appends the summary to the session
and builds the next requests from the summary and the last raw events, so the request
is shorter than the run. The guard reads the session's events, which compaction only
appends to, and puts its warning in the request: the contract holds on the untrimmed
record, and the warning stays in the request after the events it follows are summarized.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from tests import guard_scenarios as gs

_needs = gs.needs("google.adk")
pytestmark = pytest.mark.filterwarnings(
    r"ignore:\[EXPERIMENTAL\] (EventsCompactionConfig|LlmEventSummarizer):UserWarning")

#: compaction when a request passes ~50 tokens, keeping the last 2 raw events: the
#: requests are trimmed from the second tool call on, before any loop is caught
THRESHOLD, RETAIN = 50, 2


def _content(step: tuple[str, dict[str, Any]] | str) -> Any:
    from google.genai import types

    if isinstance(step, str):
        return types.Content(role="model", parts=[types.Part(text=step)])
    name, args = step
    return types.Content(role="model", parts=[
        types.Part(function_call=types.FunctionCall(name=name, args=args))])


def _texts(request: Any) -> list[str]:
    """Each content of a request as text (its texts and function responses)."""
    out = []
    for content in request.contents:
        parts = content.parts or []
        out.append("\n".join([p.text for p in parts if p.text]
                             + [str(p.function_response.response) for p in parts
                                if p.function_response is not None]))
    return out


def _run(scenario: str, config: MaxRepeatConfig) -> tuple[gs.Outcome, Any]:
    """The scenario's run in an app that compacts its events; the outcome and the model."""
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.apps.app import EventsCompactionConfig
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
    from google.adk.cli.agent_test_runner import MockModel
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from maxrepeat.guards.frameworks.google_adk import (
        loop_guard,
        stop_error_class,
        trajectory_from_events,
    )

    model = MockModel(responses=[], requests=[])
    model.responses = MockModel.create([*(_content(s) for s in gs.SCRIPTS[scenario]),
                                        _content("Done.")]).responses
    summaries = MockModel.create([_content("Summary: the agent ran tools.")] * 30)
    executed: list[str] = []

    compaction = EventsCompactionConfig(summarizer=LlmEventSummarizer(llm=summaries),
                                        token_threshold=THRESHOLD,
                                        event_retention_size=RETAIN)
    app = App(name="fixer", root_agent=LlmAgent(name="fixer", model=model,
                                                tools=gs.scripted_tools(executed)),
              plugins=[loop_guard(config)], events_compaction_config=compaction)
    runner = InMemoryRunner(app=app)

    async def main() -> tuple[list[Any], Any]:
        session = await runner.session_service.create_session(app_name="fixer", user_id="u")
        stopped = None
        task = types.Content(role="user", parts=[types.Part(text="Make the tests pass.")])
        try:
            async for _ in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=task):
                pass
        except stop_error_class() as err:
            stopped = err
        done = await runner.session_service.get_session(app_name="fixer", user_id="u",
                                                        session_id=session.id)
        return list(done.events), stopped

    events, stopped = asyncio.run(main())
    record = [e for e in events if not (e.actions and e.actions.compaction)]
    assert len(summaries.requests) >= 2, "compaction did not run"
    contexts = ["\n".join(_texts(r)) for r in model.requests]
    return gs.Outcome(contexts, trajectory_from_events(record), len(executed), stopped), model


def _trimmed(model: Any) -> bool:
    """Whether a request was sent shorter than the one before it."""
    sizes = [len(r.contents) for r in model.requests]
    return any(b < a for a, b in zip(sizes, sizes[1:], strict=False))


@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_adk_compacted_history_keeps_the_contract(scenario: str) -> None:
    outcome, model = _run(scenario, gs.NAME_ARGS)
    assert _trimmed(model)
    gs.check(outcome, gs.NAME_ARGS, scenario)


def test_adk_compacted_history_observation_mode() -> None:
    outcome, model = _run("loop", gs.OBSERVATION)
    assert _trimmed(model)
    gs.check(outcome, gs.OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)


def test_adk_warning_follows_the_results_it_names_after_compaction() -> None:
    """Each warning sits right after a function response in every request that has it
    (never between a call and its response, nor lost when its step is summarized)."""
    outcome, model = _run("cycle", gs.NAME_ARGS)
    assert _trimmed(model)
    first = next(i for i, text in enumerate(outcome.contexts) if gs.MARK in text)
    for request in model.requests[first:]:
        texts = _texts(request)
        at = [i for i, c in enumerate(request.contents)
              if any(p.text and gs.MARK in p.text for p in c.parts or [])]
        assert at, texts  # the warning stays
        for i in at:  # after a step's responses (or another warning), never before one
            before = request.contents[i - 1]
            assert any(p.function_response is not None for p in before.parts or []) \
                or i - 1 in at, texts
            if i + 1 < len(texts):
                after = request.contents[i + 1]
                assert not any(p.function_response is not None
                               for p in after.parts or []), texts
