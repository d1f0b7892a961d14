"""The Claude Agent SDK guard in real runs: the SDK drives the real Claude Code binary
(pinned, from .npm-agents), pointed at the scripted Anthropic server on 127.0.0.1 with a
fresh HOME, and the tools are in-process SDK MCP tools that count their executions."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import grade
from maxrepeat.guards.frameworks.claude_agent_sdk import (
    loop_guard,
    stop_error_class,
    trajectory_from_messages,
)
from tests import guard_scenarios as gs
from tests.scripted_anthropic import ScriptedModel, claude_folders

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = Path(os.environ.get("MAXREPEAT_CLAUDE_BIN",
                             ROOT / ".npm-agents" / "node_modules" / ".bin" / "claude"))
if not CLAUDE.exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CLAUDE} is missing: scripts/test.sh installs it with npm")
    pytest.skip("Claude Code CLI not installed (run scripts/test.sh)", allow_module_level=True)

SERVER = "t"  # the in-process MCP server: its tools are mcp__t__run_tests, mcp__t__edit
PREFIX = f"mcp__{SERVER}__"


def _options(tmp: Path, url: str, executed: list[str]) -> Any:
    from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool

    @tool("run_tests", "Run the tests under path.", {"path": str})
    async def run_tests(args: dict[str, Any]) -> dict[str, Any]:
        executed.append("run_tests")
        return {"content": [{"type": "text", "text": gs.tool_output("run_tests", args)}]}

    @tool("edit", "Write text to the file at path.", {"path": str, "text": str})
    async def edit(args: dict[str, Any]) -> dict[str, Any]:
        executed.append("edit")
        return {"content": [{"type": "text", "text": gs.tool_output("edit", args)}]}

    project, _, _, env = claude_folders(tmp, os.environ.get("PATH", "/usr/bin:/bin"))
    return ClaudeAgentOptions(
        cli_path=str(CLAUDE), cwd=str(project), env={**env, "ANTHROPIC_BASE_URL": url},
        tools=[],
        mcp_servers={SERVER: create_sdk_mcp_server(SERVER, tools=[run_tests, edit])},
        allowed_tools=[PREFIX + "run_tests", PREFIX + "edit"])


def _script(scenario: str) -> list[Any]:
    return [[(PREFIX + name, args) for name, args in step]
            for step in gs.steps(scenario)] + ["Done."]


def _run(scenario: str, guard: Any, tmp: Path) -> gs.Outcome:
    executed: list[str] = []
    stopped = None
    with ScriptedModel(_script(scenario), tool=PREFIX + "run_tests").serving() as model:
        options = _options(tmp, model.url, executed)

        async def main() -> None:
            async for _ in guard.query(prompt="Make the tests pass.", options=options):
                pass

        try:
            asyncio.run(main())
        except stop_error_class() as err:
            stopped = err
        sent = [json.dumps(r["messages"]) for r in model.conversation_requests()]
    return gs.Outcome(sent, trajectory_from_messages(guard.messages), len(executed), stopped)


@pytest.mark.parametrize("case", gs.SERIAL_CASES)
def test_real_agent_run_is_warned_refused_and_stopped(case: str, tmp_path: Path) -> None:
    gs.check_case(lambda scenario, config: _run(scenario, loop_guard(config), tmp_path), case)


def test_real_agent_second_run_on_the_same_guard_after_a_stop_starts_clean(tmp_path: Path) -> None:
    guard = loop_guard(gs.NAME_ARGS)
    first = _run("loop", guard, tmp_path / "1")
    assert first.stopped is not None
    second = _run("clean", guard, tmp_path / "2")
    gs.check(second, gs.NAME_ARGS, "clean")
    third = _run("loop", guard, tmp_path / "3")
    gs.check(third, gs.NAME_ARGS, "loop")
    assert third.executed == first.executed


def test_real_agent_parallel_calls_are_judged_with_the_calls_before_them(
        tmp_path: Path) -> None:
    """Claude Code hands the guard the calls of one response one at a time: the first
    call of a step is judged alone (it is no repeat yet) and runs, the second completes
    the repeat and is refused; the model is told exactly that."""
    outcome = _run("parallel", loop_guard(gs.NAME_ARGS), tmp_path)
    traj = outcome.trajectory
    # warned once, after the third response (six calls, three steps), not once per call
    assert [gs.MARK in c for c in outcome.contexts].index(True) == 3
    results = [str(e.data.result) for e in traj.events if e.type == "tool_result"]
    refused = [i for i, r in enumerate(results) if r.startswith(gs.MARK)]
    assert refused == [7, 9]  # the second call of the fourth and fifth responses
    assert "(blocked)" in results[7] and "(stopped)" in results[9]
    # a refused call did not run: every other call did
    assert outcome.executed == len(results) - len(refused) == 8
    [live] = outcome.stopped.results
    final = grade(traj, gs.NAME_ARGS)
    assert live.evidence == final.evidence and not final.passed
    assert live.metadata.occurrences == final.metadata.occurrences == 5


def test_real_agent_stop_error_is_a_claude_sdk_error_and_counts_as_grade(tmp_path: Path) -> None:
    from claude_agent_sdk import ClaudeSDKError

    outcome = _run("loop", loop_guard(gs.NAME_ARGS), tmp_path)
    assert isinstance(outcome.stopped, ClaudeSDKError)
    assert outcome.stopped.results[0].metadata.occurrences == 5
    assert grade(outcome.trajectory, gs.NAME_ARGS).metadata.occurrences == 5


def test_real_agent_runs_the_pages_complete_example_verbatim(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The page's complete example (its ``py`` block), against the scripted model."""
    import re

    page = (ROOT / "docs" / "integrations" / "claude-agent-sdk.md").read_text()
    [code] = re.findall(r"^```py\n(.*?)^```", page, re.MULTILINE | re.DOTALL)
    script = [[("mcp__dev__run_tests", {"path": "tests/"})]] * 9 + ["Done."]
    project, _, _, env = claude_folders(tmp_path, os.environ.get("PATH", "/usr/bin:/bin"))
    monkeypatch.chdir(project)
    with ScriptedModel(script, tool="mcp__dev__run_tests").serving() as model:
        for key, value in {**env, "ANTHROPIC_BASE_URL": model.url}.items():
            monkeypatch.setenv(key, value)
        exec(compile(code, "claude-agent-sdk.md", "exec"), {"__name__": "__docs__"})
        served = len(model.conversation_requests())
    out = capsys.readouterr().out
    assert "5 times in a row" in out and "mcp__dev__run_tests" in out, (out, served)
    assert served == 5  # stopped at the fifth call: no model request after it


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    gs.check_missing_extra(monkeypatch, "claude_agent_sdk", "claude_agent_sdk", "claude-agent-sdk")

