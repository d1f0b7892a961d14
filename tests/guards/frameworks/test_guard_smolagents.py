"""The smolagents guard in a real ``ToolCallingAgent`` driven by a scripted smolagents
``Model`` (the documented way to plug in any model), through a loop, a cycle and a clean
run."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.smolagents import (
    loop_guard,
    stop_error_class,
    trajectory_from_steps,
)
from tests import guard_scenarios as gs


@functools.cache
def _models() -> tuple[Any, Any]:
    """The scripted model classes: one call a response, and parallel repeats (smolagents
    is imported when a test runs)."""
    from smolagents import Model
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
    )

    class ScriptedModel(Model):
        """Answers each call with the next scripted tool call, then the final answer."""

        def __init__(self, script: list[tuple[str, dict[str, Any]]]) -> None:
            super().__init__(model_id="scripted")
            self.script = [*script, ("final_answer", {"answer": "Done."})]
            self.sent: list[str] = []

        def generate(self, messages: list[Any], stop_sequences: Any = None,
                     response_format: Any = None, tools_to_call_from: Any = None,
                     **kwargs: Any) -> ChatMessage:
            self.sent.append("\n".join(str(m.content) for m in messages))
            name, args = self.script[len(self.sent) - 1]
            call = ChatMessageToolCall(
                id=f"call_{len(self.sent)}", type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=args))
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    class ParallelModel(ScriptedModel):
        """Answers each call with two identical tool calls, then the final answer."""

        def generate(self, messages: list[Any], stop_sequences: Any = None,
                     response_format: Any = None, tools_to_call_from: Any = None,
                     **kwargs: Any) -> ChatMessage:
            one = super().generate(messages)
            calls = [one.tool_calls[0]] if one.tool_calls[0].function.name == "final_answer" else [
                ChatMessageToolCall(id=f"{one.tool_calls[0].id}_{k}", type="function",
                                    function=one.tool_calls[0].function) for k in range(2)]
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=calls)

    return ScriptedModel, ParallelModel


def _run(scenario: str, config: MaxRepeatConfig, *, wiring: str = "both") -> gs.Outcome:
    from smolagents import ToolCallingAgent, tool

    executed: list[str] = []
    model = _models()[0](gs.SCRIPTS[scenario])
    guard = loop_guard(config)
    plain = [tool(f) for f in gs.scripted_tools(executed)]
    tools = plain if wiring == "step_callbacks" else guard.tools(plain)
    callbacks = [] if wiring == "tools" else [guard]
    agent = ToolCallingAgent(tools=tools, model=model, step_callbacks=callbacks, max_steps=30,
                             verbosity_level=-1)
    stopped = None
    try:
        agent.run("Make the tests pass.")
    except stop_error_class() as err:
        stopped = err
    steps = [s for s in agent.memory.steps
             if not any(c.name == "final_answer" for c in getattr(s, "tool_calls", None) or ())]
    return gs.Outcome(model.sent, trajectory_from_steps(steps), len(executed), stopped)


@pytest.mark.parametrize("case", gs.SERIAL_CASES)
def test_smolagents_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(_run, case)


@pytest.mark.parametrize("wiring", ["step_callbacks", "tools"])
@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_smolagents_either_wiring_point_alone_guards_fully(scenario: str, wiring: str) -> None:
    """``step_callbacks=[guard]`` without ``guard.tools``, or ``guard.tools`` without the
    callback: the guard completes the wiring at the first step and guards the same."""
    gs.check(_run(scenario, gs.NAME_ARGS, wiring=wiring), gs.NAME_ARGS, scenario)


def test_smolagents_stop_error_is_an_agent_error() -> None:
    from smolagents.utils import AgentError

    outcome = _run("loop", gs.NAME_ARGS)
    assert isinstance(outcome.stopped, AgentError)


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "smolagents", "smolagents.memory", "smolagents")



def test_smolagents_a_second_run_starts_a_new_guard_state() -> None:
    from smolagents import ToolCallingAgent, tool

    guard = loop_guard(gs.NAME_ARGS)

    run_tests = tool(gs.scripted_tools([])[0])

    for _ in range(2):
        model = _models()[0]([("run_tests", {"path": "tests/"})] * 2)
        agent = ToolCallingAgent(tools=guard.tools([run_tests]), model=model,
                                 step_callbacks=[guard], max_steps=10, verbosity_level=-1)
        agent.run("Make the tests pass.")
        # this run's two calls and its final answer, not the first run's steps too
        assert guard.results[0].metadata.watched_steps == 3


def test_smolagents_a_run_after_a_stop_starts_clean() -> None:
    """A stopped run, then ``agent.run`` again on the same agent and guard: the new run's
    first step (whose tools run before any step callback) is judged on its own."""
    from smolagents import ToolCallingAgent, tool

    executed: list[str] = []

    run_tests = tool(gs.scripted_tools(executed)[0])

    guard = loop_guard(gs.NAME_ARGS)
    agent = ToolCallingAgent(tools=guard.tools([run_tests]), model=_models()[0](gs.SCRIPTS["loop"]),
                             step_callbacks=[guard], max_steps=30, verbosity_level=-1)
    with pytest.raises(stop_error_class()):
        agent.run("Make the tests pass.")
    executed.clear()
    agent.model = _models()[0]([("run_tests", {"path": "tests/"})] * 2)
    agent.run("Make the tests pass.")
    assert executed == ["run_tests", "run_tests"]
    assert not any("maxrepeat loop guard" in text for text in agent.model.sent)
    assert guard.results[0].passed


def test_smolagents_parallel_repeats_tell_the_model_the_truth() -> None:
    """Parallel calls run (smolagents has no hook before a step's calls): the model is
    not told they were refused, or to expect refusals that do not come."""
    from smolagents import ToolCallingAgent, tool

    executed: list[str] = []

    run_tests = tool(gs.scripted_tools(executed)[0])

    guard = loop_guard(gs.NAME_ARGS)
    model = _models()[1](gs.SCRIPTS["loop"])
    agent = ToolCallingAgent(tools=guard.tools([run_tests]), model=model,
                             step_callbacks=[guard], max_steps=30, verbosity_level=-1)
    with pytest.raises(stop_error_class()):
        agent.run("Make the tests pass.")
    seen = "\n".join(model.sent)
    assert "maxrepeat loop guard (warning)" in seen
    for step in agent.memory.steps:
        text = str(getattr(step, "observations", ""))
        refused = text.startswith("maxrepeat loop guard")
        assert refused or "(blocked)" not in text, text
