"""Scripted agent runs the platform scorer tests share (tests/scorers/test_scorer_*.py).

A script is a list of turns (one model response each), a turn a list of tool calls
``(tool, arguments)``; the tools are plain functions (`TOOLS`): each platform test runs
them through the platform's own instrumentation. `expected` is what ``maxrepeat grade``
says of the same run, built here from the script with the public event constructors, so
each scorer's verdict can be checked against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from maxrepeat import (
    GraderResult,
    MaxRepeatConfig,
    Trajectory,
    grade,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
)

FILES = {"a.py": "x = 1\n", "b.py": "y = 2\n"}


def run_tests(path: str) -> str:
    return f"FAILED {path}::test_dates"


def read_file(path: str) -> str:
    return FILES[path]


def edit_file(path: str, text: str) -> str:
    return f"wrote {len(text)} bytes to {path}"


def deploy(env: str) -> str:
    raise PermissionError(f"cannot deploy to {env}")


TOOLS: dict[str, Callable[..., str]] = {f.__name__: f for f in (run_tests, read_file, edit_file,
                                                                 deploy)}

Turn = list[tuple[str, dict[str, Any]]]

SCRIPTS: dict[str, list[Turn]] = {
    # the same call, with the same result, five times
    "loop": [[("run_tests", {"path": "tests/"})]] * 5,
    # read, edit, read, edit, ...: a cycle of period 2, three times over
    "cycle": [[("read_file", {"path": "a.py"})], [("edit_file", {"path": "a.py", "text": "x"})]]
    * 3,
    # the same failing call four times: errors are results too
    "errors": [[("deploy", {"env": "prod"})]] * 4,
    # distinct work, with two calls in one turn
    "clean": [[("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})],
              [("edit_file", {"path": "a.py", "text": "x = 3\n"})],
              [("run_tests", {"path": "tests/"})],
              [("edit_file", {"path": "b.py", "text": "y = 3\n"})],
              [("run_tests", {"path": "tests/test_b.py"})]],
}

#: the configs every platform is checked with: the default (observation) mode with
#: cycles of 2, and the live preset (name-args, cycles of up to 3)
CONFIGS = {"observation": MaxRepeatConfig(max=2, max_cycle_period=2),
           "live": MaxRepeatConfig.preset("live", max=2)}

#: what each script's verdict is under every config above
LOOPS = {"loop": True, "cycle": True, "errors": True, "clean": False}


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
    """(result, error text) of one call of a scripted tool."""
    try:
        return TOOLS[name](**arguments), None
    except Exception as exc:  # a tool's failure is what the agent reads
        return None, str(exc)


def expected(script: list[Turn], config: MaxRepeatConfig, *, call_per_turn: bool = False,
             error_flag: bool = True) -> GraderResult:
    """``grade()`` of the script's run, from events built here. ``call_per_turn``: each
    call is its own turn (a platform that keeps no turns); ``error_flag=False``: a failed
    call's error is a plain result (a platform that records no error flag)."""
    if call_per_turn:
        script = [[call] for turn in script for call in turn]
    events = []
    for t, turn in enumerate(script):
        events.append(turn_start())
        ids = [f"{t}.{i}" for i in range(len(turn))]
        events += [tool_call(name, cid, args) for (name, args), cid in zip(turn, ids, strict=True)]
        for (name, args), cid in zip(turn, ids, strict=True):
            result, error = run_tool(name, args)
            events.append(tool_result(cid, error if error is not None else result,
                                      success=error is None or not error_flag))
        events.append(turn_end())
    return grade(Trajectory(events=events), config)


def scripted_langchain_agent(responses: list[list[dict[str, Any]]], tools: list[Any]) -> Any:
    """A real LangChain v1 agent (``create_agent``, a LangGraph graph) whose fake chat model
    answers with each list of ``tool_calls`` in turn (one model response each), then
    "Done."; invoke it with the task."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    class Scripted(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    messages = [AIMessage(content="", tool_calls=calls) for calls in responses]
    return create_agent(Scripted(responses=[*messages, AIMessage(content="Done.")]), tools)

