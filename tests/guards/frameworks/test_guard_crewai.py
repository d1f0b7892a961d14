"""The CrewAI guard in a real ``Crew`` of one ``Agent`` whose ``LLM`` talks to a scripted
Chat Completions server on 127.0.0.1 (`tests.scripted_chat`), through a loop, a cycle, a
clean run, parallel calls, a second kickoff on the same guard after a stop, observation
mode and the count against ``grade`` of the recorded run.

CrewAI runs in a venv of its own (``.venv-crewai``, scripts/test.sh): crewai 1.15 needs
pydantic < 2.13, which the inspect extra of the main venv excludes. Its import costs
seconds: it happens inside the tests."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.guards.frameworks.crewai import (
    loop_guard,
    stop_error_class,
    trajectory_from_messages,
)
from tests import guard_scenarios as gs
from tests.scripted_chat import Answer, ChatModel, Step

_needs = gs.needs("crewai", reason="the crewai extra (a venv of its own: crewai needs "
                  "pydantic < 2.13, the inspect extra >= 2.13)")

# the deprecations CrewAI's own code warns of (its agents read deprecated fields)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")

# no telemetry, no tracing prompt: the tests reach nothing but 127.0.0.1. Set only where
# CrewAI is installed (its own venv, which runs this file alone): elsewhere this module is
# collected beside the MLflow and Phoenix tests, which OTEL_SDK_DISABLED would break
if importlib.util.find_spec("crewai") is not None:
    for _name, _value in {"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true",
                          "CREWAI_TRACING_ENABLED": "false"}.items():
        os.environ.setdefault(_name, _value)


class Model(ChatModel):
    """The scripted model, answering CrewAI's requests streamed or not, as asked."""

    def answer(self, path: str, raw: bytes) -> Answer | int:
        body = json.loads(raw)
        if body.get("stream"):
            return super().answer(path, raw)
        self.requests.append(body)
        i = self.served
        step = self.steps[i] if i < len(self.steps) else "done"
        self.served += 1
        message: dict[str, Any] = {"role": "assistant",
                                   "content": step if isinstance(step, str) else None}
        if not isinstance(step, str):
            message["tool_calls"] = [
                {"id": f"call_{i}_{k}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for k, (name, args) in enumerate(step)]
        done = "stop" if isinstance(step, str) else "tool_calls"
        out = {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1,
               "model": "scripted", "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                              "total_tokens": 15},
               "choices": [{"index": 0, "message": message, "finish_reason": done}]}
        return 200, json.dumps(out).encode(), "application/json"


def _context(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def _script(scenario: str, runs: int = 1) -> list[Step]:
    return list(gs.steps(scenario)) * runs


def _crew(url: str, executed: list[str], stream: bool = False, max_iter: int = 25) -> Any:
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    llm = LLM(model="openai/scripted", base_url=url, api_key="scripted", stream=stream)
    agent = Agent(role="dev", goal="Make the tests pass.", backstory="A developer.",
                  llm=llm, tools=[tool(f) for f in gs.scripted_tools(executed)],
                  max_iter=max_iter)
    task = Task(description="Make the tests pass.", expected_output="A summary.",
                agent=agent)
    return Crew(agents=[agent], tasks=[task])


def _kickoff(crew: Any, model: Model, executed: list[str], first: int = 0) -> gs.Outcome:
    """Kick the crew off; the outcome of this kickoff (its requests from ``first`` on)."""
    stopped = None
    try:
        crew.kickoff()
    except stop_error_class() as err:
        stopped = err
    messages = crew.agents[0].agent_executor.messages
    return gs.Outcome([_context(b) for b in model.requests[first:]],
                      trajectory_from_messages(messages), len(executed), stopped)


@pytest.fixture
def guards() -> Iterator[list[Any]]:
    """The guards a test makes, unregistered after it (CrewAI's hooks are global)."""
    made: list[Any] = []
    yield made
    for guard in made:
        guard.remove()


def _run(scenario: str, guard: Any, stream: bool = False) -> gs.Outcome:
    executed: list[str] = []
    with Model(steps=_script(scenario)).serving() as model:
        return _kickoff(_crew(model.url, executed, stream), model, executed)


@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_crewai_agent_is_warned_refused_and_stopped(scenario: str,
                                                     guards: list[Any]) -> None:
    guards.append(guard := loop_guard(gs.NAME_ARGS))
    gs.check(_run(scenario, guard), gs.NAME_ARGS, scenario)


@pytest.mark.parametrize("scenario", ["loop", "cycle"])
def test_crewai_streaming_llm_is_guarded_the_same(scenario: str,
                                                   guards: list[Any]) -> None:
    guards.append(guard := loop_guard(gs.NAME_ARGS))
    gs.check(_run(scenario, guard, stream=True), gs.NAME_ARGS, scenario)


def test_crewai_parallel_calls_of_one_response_are_one_step(guards: list[Any]) -> None:
    guards.append(guard := loop_guard(gs.NAME_ARGS))
    gs.check_parallel(_run("parallel", guard))


def test_crewai_observation_mode_warns_blocks_and_stops_after_the_calls(
        guards: list[Any]) -> None:
    """``max=1``: with ``max=2`` the fifth identical call and result would meet CrewAI's
    own limit (it raises at five) before the guard's stop."""
    config = MaxRepeatConfig(max=1, max_cycle_period=2)
    guards.append(guard := loop_guard(config))
    outcome = _run("loop", guard)
    gs.check(outcome, config, "loop")
    assert "4 times in a row" in str(outcome.stopped)


def test_crewai_own_limit_comes_first_when_the_guard_allows_five(guards: list[Any]) -> None:
    """The limit the page names: CrewAI stops the fifth identical call with the same
    result itself (``ToolExecutionFailedError``), whatever the guard allows."""
    from crewai.tools.tool_failure import ToolExecutionFailedError

    guards.append(loop_guard(gs.OBSERVATION))
    executed: list[str] = []
    with Model(steps=_script("loop")).serving() as model, \
            pytest.raises(ToolExecutionFailedError, match="5 times"):
        _crew(model.url, executed).kickoff()
    assert len(executed) == 5


def test_crewai_second_kickoff_on_the_same_guard_after_a_stop_starts_clean(
        guards: list[Any]) -> None:
    """The same crew and guard kicked off again after a stop: the new run is counted
    alone, from its first call (then a clean run, then a loop again)."""
    guards.append(loop_guard(gs.NAME_ARGS))
    executed: list[str] = []
    steps = _script("loop") + ["done"] + _script("clean") + ["done"] + _script("loop")
    with Model(steps=steps).serving() as model:
        crew = _crew(model.url, executed)
        first = _kickoff(crew, model, executed)
        assert first.stopped is not None and first.executed == 3
        model.served = len(_script("loop")) + 1  # the stopped run left the rest unasked
        second = _kickoff(crew, model, executed, len(model.requests))
        second.executed -= first.executed
        gs.check(second, gs.NAME_ARGS, "clean")
        model.served = len(steps) - len(_script("loop"))
        third = _kickoff(crew, model, executed, len(model.requests))
        third.executed -= first.executed + second.executed
        gs.check(third, gs.NAME_ARGS, "loop")


def test_crewai_count_equals_grade_of_the_recorded_run(guards: list[Any]) -> None:
    """A run that ends on its own (warned, not stopped: three repeats, then the model
    answers): the guard's results are `grade` of the executor's messages, converted."""
    from msgspec.structs import replace

    guards.append(guard := loop_guard(gs.NAME_ARGS))
    executed: list[str] = []
    with Model(steps=[*_script("loop")[:3], "Gave up."]).serving() as model:
        crew = _crew(model.url, executed)
        crew.kickoff()
    traj = trajectory_from_messages(crew.agents[0].agent_executor.messages)
    [live], final = guard.results, grade(traj, gs.NAME_ARGS)
    assert replace(live.metadata, source=None) == replace(final.metadata, source=None)
    assert live.metadata.watched_steps == 3 and not live.passed and not final.passed
    assert gs.MARK in _context(model.requests[-1]) and len(executed) == 3


def test_crewai_agent_run_before_the_guard_is_guarded_whole(guards: list[Any]) -> None:
    """CrewAI copies its model hooks into an agent's executor when it makes it (at the
    agent's first task): the guard's tool hook adds its model hook to an executor made
    before the guard, so the agent is warned and stopped too, not only refused."""
    executed: list[str] = []
    with Model(steps=[*_script("clean"), "done", *_script("loop")]).serving() as model:
        crew = _crew(model.url, executed)
        crew.kickoff()  # unguarded: the executor is made without the guard's hook
        assert len(executed) == len(gs.SCRIPTS["clean"])
        guards.append(loop_guard(gs.NAME_ARGS))
        outcome = _kickoff(crew, model, executed, len(model.requests))
    outcome.executed -= len(gs.SCRIPTS["clean"])
    gs.check(outcome, gs.NAME_ARGS, "loop")


def test_crewai_removed_guard_no_longer_acts(guards: list[Any]) -> None:
    with loop_guard(gs.NAME_ARGS):
        pass
    executed: list[str] = []
    with Model(steps=[*_script("loop")[:4], "Gave up."]).serving() as model:
        outcome = _kickoff(_crew(model.url, executed), model, executed)
    assert outcome.stopped is None and outcome.executed == 4
    assert not any(gs.MARK in c for c in outcome.contexts)


def test_crewai_pages_examples_run_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    """The page's ``py`` blocks (test_docs.py runs ``python`` blocks in the main venv,
    which cannot hold this extra): the set-up's guard stops a crew it makes, the complete
    run prints the stop."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "integrations" / "crewai.md"
    setup, complete = re.findall(r"^```py\n(.*?)^```", page.read_text(),
                                 re.MULTILINE | re.DOTALL)
    names: dict[str, Any] = {"__name__": "__docs__"}
    exec(compile(setup, "crewai.md", "exec"), names)
    try:
        from crewai import LLM
        from crewai.tools import tool

        @tool("run_tests")
        def run_tests(path: str) -> str:
            """Run the tests under path."""
            return gs.tool_output("run_tests", {"path": path})

        with Model(steps=_script("loop")).serving() as model:
            llm = LLM(model="openai/scripted", base_url=model.url, api_key="scripted")
            crew = names["make_crew"](llm, [run_tests])
            with pytest.raises(names["stop_error_class"]()):  # the live preset stops it
                crew.kickoff()
        assert model.served == 6  # 4 ran (max 3), the 5th refused, the 6th stopped
    finally:
        names["guard"].remove()
    exec(compile(complete, "crewai.md", "exec"), {"__name__": "__docs__"})
    out = capsys.readouterr().out
    assert 'run_tests {"path": "tests/"} repeated 5 times in a row' in out, out


def test_crewai_guard_cost_per_call(guards: list[Any], monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The CPU the guard's own hooks take per tool call over a clean run of 100
    single-call steps (``live`` preset), first and last tenth (printed)."""
    import time

    from maxrepeat.guards.frameworks import crewai as mod

    cls = mod._CLASSES.guard
    spent: dict[int, float] = {}
    calls = [0]

    def timed(name: str) -> Any:
        hook = getattr(cls, name)

        def run(self: Any, context: Any) -> Any:
            start = time.thread_time()
            try:
                return hook(self, context)
            finally:
                spent[calls[0]] = spent.get(calls[0], 0.0) + time.thread_time() - start
                calls[0] += name == "after_tool"
        return run

    for name in ("before_model", "before_tool", "after_tool"):
        monkeypatch.setattr(cls, name, timed(name))
    guards.append(loop_guard(MaxRepeatConfig.preset("live")))
    n = 100
    executed: list[str] = []
    with Model(steps=[*gs.clean_steps(n), "done"]).serving() as model:
        crew = _crew(model.url, executed, max_iter=n + 5)
        crew.kickoff()
    assert len(executed) == n
    per = [spent[i] for i in range(n)]
    gs.cost_per_call("crewai", per, capsys)
    tenth = n // 10
    first, last = sum(per[:tenth]) / tenth, sum(per[-tenth:]) / tenth
    assert last < 5 * max(first, 0.5e-3)  # flat, not growing with the run


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "crewai", "crewai.hooks.dispatch", "crewai")
