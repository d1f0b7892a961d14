"""The LangChain guard in a real LangChain v1 agent (``create_agent``, a LangGraph graph)
driven by LangChain's own fake chat model, through a loop, a cycle and a clean run."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.guards.frameworks.langchain import (
    LoopStoppedError,
    loop_guard,
    trajectory_from_messages,
)
from tests import guard_scenarios as gs


@functools.cache
def _model_class() -> Any:
    """The scripted chat model class (LangChain is imported when a test runs)."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import BaseMessage

    class ScriptedChatModel(FakeMessagesListChatModel):
        """LangChain's fake model, recording what it is sent; tools are bound as-is (the
        responses are scripted)."""

        sent: list[list[BaseMessage]] = []

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[BaseMessage], stop: Any = None,
                      run_manager: Any = None, **kwargs: Any) -> Any:
            self.sent.append(list(messages))
            return super()._generate(messages, stop, run_manager, **kwargs)

    return ScriptedChatModel


def _run(scenario: str, config: Any) -> gs.Outcome:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    executed: list[str] = []
    responses: list[BaseMessage] = [
        AIMessage(content="", tool_calls=[{"id": f"call_{i}_{j}", "name": name, "args": args}
                                          for j, (name, args) in enumerate(calls)])
        for i, calls in enumerate(gs.steps(scenario))]
    responses.append(AIMessage(content="Done."))
    model = _model_class()(responses=responses, sent=[])
    agent = create_agent(model, [tool(f) for f in gs.scripted_tools(executed)],
                         middleware=[loop_guard(config)], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": scenario}}
    stopped = None
    try:
        agent.invoke({"messages": [HumanMessage("Make the tests pass.")]}, thread)
    except LoopStoppedError as err:
        stopped = err
    messages = agent.get_state(thread).values["messages"]
    return gs.Outcome(
        contexts=["\n".join(str(m.content) for m in sent) for sent in model.sent],
        trajectory=trajectory_from_messages(messages),
        executed=len(executed),
        stopped=stopped,
    )


@pytest.mark.parametrize("case", gs.CASES)
def test_langchain_agent_is_warned_refused_and_stopped(case: str) -> None:
    gs.check_case(_run, case)


def test_langchain_warning_is_a_message_in_the_conversation() -> None:
    outcome = _run("loop", gs.NAME_ARGS)
    warning = next(c for c in outcome.contexts if "maxrepeat loop guard" in c)
    assert ('you repeated run_tests {"path": "tests/"} 3 times in a row (at most 2 allowed;'
            in warning)


def test_langchain_graders_from_a_config_file(tmp_path: Path) -> None:
    """A config file's graders: each has its monitor, the strongest loop decides."""
    config = tmp_path / "graders.yaml"
    config.write_text("graders:\n"
                      "  - {type: max-repeat, name: same-call,"
                      " config: {max: 2, match: name-args}}\n"
                      "  - {type: max-repeat, name: same-output, config: {max: 4}}\n",
                      encoding="utf-8")
    outcome = _run("loop", str(config))
    # same-call (max 2, name-args) is the first to reach each threshold: warned after the
    # third call, the fourth refused, stopped at the fifth
    assert [gs.MARK in c for c in outcome.contexts].index(True) == 3
    assert outcome.executed == 3 and outcome.stopped is not None
    assert "grader same-call" in str(outcome.stopped)
    configs = [gs.NAME_ARGS, MaxRepeatConfig(max=4)]
    for live, cfg in zip(outcome.stopped.results, configs, strict=True):
        assert live.metadata.occurrences == grade(outcome.trajectory, cfg).metadata.occurrences
    assert [r.name for r in outcome.stopped.results] == ["same-call", "same-output"]


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "langchain", "langchain.agents.middleware", "langchain")



@pytest.mark.parametrize("checkpointer", [True, False], ids=["new-thread", "no-checkpointer"])
def test_langchain_a_run_after_a_stop_starts_clean(checkpointer: bool) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    executed: list[str] = []

    run_tests = tool(gs.scripted_tools(executed)[0])

    def responses(n: int) -> list[BaseMessage]:
        calls = [AIMessage(content="", tool_calls=[{"id": f"c{n}_{i}", "name": "run_tests",
                                                    "args": {"path": "tests/"}}])
                 for i in range(n)]
        return [*calls, AIMessage(content="Done.")]

    guard = loop_guard(gs.NAME_ARGS)
    model = _model_class()(responses=[*responses(9), *responses(2)], sent=[])
    agent = create_agent(model, [run_tests], middleware=[guard],
                         checkpointer=InMemorySaver() if checkpointer else None)
    with pytest.raises(LoopStoppedError):
        agent.invoke({"messages": [HumanMessage("Make the tests pass.")]},
                     {"configurable": {"thread_id": "first"}})
    model.i = 10  # the second run's script
    executed.clear()
    model.sent.clear()
    agent.invoke({"messages": [HumanMessage("Make the tests pass.")]},
                 {"configurable": {"thread_id": "second"}})
    assert executed == ["run_tests", "run_tests"]
    assert not any(gs.MARK in str(m.content) for sent in model.sent for m in sent)
