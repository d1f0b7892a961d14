"""The Strands Agents guard in a real Strands ``Agent`` whose model is Strands' own OpenAI
provider talking to a scripted Chat Completions server on 127.0.0.1
(`tests/scripted_chat.py`), through a loop, a cycle, a clean run, parallel calls, a
second run on the same agent and guard after a stop, and the count against ``grade()`` of
``agent.messages``."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from tests import guard_scenarios as gs
from tests.scripted_chat import ChatModel, Step


class _Fixer:
    """A Strands agent with the two scripted tools, its model served by ``chat``."""

    def __init__(self, chat: ChatModel, guard: Any) -> None:
        pytest.importorskip("openai")  # Strands' OpenAI provider needs it
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel

        self.chat = chat
        self.executed: list[str] = []
        model = OpenAIModel(client_args={"base_url": chat.url, "api_key": "scripted"},
                            model_id="scripted")
        self.agent = Agent(model=model, tools=[tool(f) for f in gs.scripted_tools(self.executed)],
                           hooks=[guard], callback_handler=None)

    def run(self, task: str = "Make the tests pass.") -> gs.Outcome:
        from maxrepeat.guards.frameworks.strands import stop_error_class, trajectory_from_messages

        start, asked, ran = len(self.agent.messages), len(self.chat.requests), len(self.executed)
        stopped = None
        try:
            self.agent(task)
        except stop_error_class() as err:
            stopped = err
        contexts = [_since(r["messages"], task) for r in self.chat.requests[asked:]]
        record = trajectory_from_messages(self.agent.messages[start:])
        return gs.Outcome(contexts, record, len(self.executed) - ran, stopped)


def _since(messages: list[dict[str, Any]], task: str) -> str:
    """What the model was sent from this run's task on (not the earlier runs' history)."""
    at = max(i for i, m in enumerate(messages) if task in json.dumps(m.get("content")))
    return json.dumps(messages[at:])


def _guard(config: MaxRepeatConfig) -> Any:
    from maxrepeat.guards.frameworks.strands import loop_guard

    return loop_guard(config)


def _run(script: list[Step], config: MaxRepeatConfig) -> gs.Outcome:
    with ChatModel(list(script)).serving() as chat:
        return _Fixer(chat, _guard(config)).run()


@pytest.mark.parametrize("case", gs.CASES)
def test_strands_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(lambda scenario, config: _run(list(gs.steps(scenario)), config), case)


def test_strands_live_preset_catches_the_cycle() -> None:
    live = MaxRepeatConfig.preset("live", max=2)
    gs.check(_run(list(gs.steps("cycle")), live), live, "cycle")


def test_strands_stop_error_is_an_event_loop_exception_counting_as_grade() -> None:
    from strands.types.exceptions import EventLoopException

    outcome = _run(list(gs.steps("loop")), gs.NAME_ARGS)
    assert isinstance(outcome.stopped, EventLoopException)
    assert outcome.stopped.results[0].metadata.occurrences == 5
    assert grade(outcome.trajectory, gs.NAME_ARGS).metadata.occurrences == 5
    assert "5 times in a row" in str(outcome.stopped)


def test_strands_second_run_on_the_same_agent_after_a_stop_starts_clean() -> None:
    loop, clean = gs.steps("loop"), gs.steps("clean")
    # the model stops being asked at the stop (5 responses); the next run gets the rest
    script: list[Step] = [*loop[:5], *clean, "Done.", *loop]
    with ChatModel(script).serving() as chat:
        fixer = _Fixer(chat, _guard(gs.NAME_ARGS))
        first = fixer.run()
        assert first.stopped is not None and chat.served == 5
        gs.check(fixer.run("Go on."), gs.NAME_ARGS, "clean")
        gs.check(fixer.run("Once more."), gs.NAME_ARGS, "loop")


def test_strands_warning_stays_in_the_history() -> None:
    gs.check_warning_stays(_run(list(gs.steps("cycle")), gs.NAME_ARGS))


def test_strands_guard_cost_per_tool_call(capsys: pytest.CaptureFixture[str]) -> None:
    """The guard's own hooks, timed over a clean run of 100 single-call steps (the figure
    on docs/integrations/strands.md)."""
    guard = _guard(MaxRepeatConfig.preset("live"))
    spent = [0.0]  # CPU seconds of each step's hooks (a step starts before its model call)

    def timed(inner: Any, opens: bool) -> Any:
        def hook(event: Any) -> None:
            if opens:
                spent.append(0.0)
            start = time.thread_time()
            try:
                inner(event)
            finally:
                spent[-1] += time.thread_time() - start
        return hook

    for name in ("begin", "before_model", "before_tools"):
        setattr(guard, name, timed(getattr(guard, name), name == "before_model"))
    with ChatModel(gs.clean_steps(100)).serving() as chat:
        outcome = _Fixer(chat, guard).run()
    assert outcome.stopped is None and outcome.executed == 100
    # the steps of the 100 calls: not the hooks before the first model call, nor the last
    per_call = gs.cost_per_call("strands", spent[1:-1], capsys)
    assert per_call < 0.02


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "strands", "strands.hooks", "strands")
