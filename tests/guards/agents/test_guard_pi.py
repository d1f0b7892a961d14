"""The Pi guard's parts that do not need the binary (tests/guards/agents/test_e2e_pi.py
drives the real one): the extension's input as a `HookCall`, the answers it carries out, the
files ``hook install pi`` writes, and whether Pi will load them (``hook status``)."""

from __future__ import annotations

import json
from pathlib import Path

from maxrepeat.guards.agents import get
from maxrepeat.guards.agents._pi_extension import FILE_NAME, shim_source
from maxrepeat.guards.agents.pi import hook_call, render, will_load
from maxrepeat.guards.install import install, uninstall
from maxrepeat.guards.policy import Action, Decision
from maxrepeat.guards.shimfiles import command_in

PAYLOAD = {"hook_event_name": "tool_result", "session_id": "s", "transcript_path": "/x.jsonl",
           "cwd": "/w", "tool_name": "bash", "tool_call_id": "call_1",
           "tool_input": {"command": "ls"},
           "tool_response": {"content": [{"type": "text", "text": "a"}], "isError": True,
                             "details": {}}}


def test_the_input_is_the_call_as_the_log_holds_it() -> None:
    call = hook_call(PAYLOAD)
    assert (call.phase, call.placement, call.call_id, call.reader) == ("post", "id", "call_1",
                                                                       "pi")
    assert (call.result, call.ok) == ("a", False)
    before = hook_call({**PAYLOAD, "hook_event_name": "tool_call"})
    assert before.phase == "pre" and before.arguments == {"command": "ls"}


def test_answers_by_rung_and_event() -> None:
    post, pre = hook_call(PAYLOAD), hook_call({**PAYLOAD, "hook_event_name": "tool_call"})
    assert render(post, Decision(Action.WARN, "W", ())).stdout == {"additionalContext": "W"}
    assert render(post, Decision(Action.BLOCK, "B", ())).stdout == {"decision": "block",
                                                                    "reason": "B"}
    assert render(pre, Decision(Action.STOP, "S", ())).stdout == {
        "decision": "block", "reason": "S", "continue": False}
    assert render(pre, Decision(Action.NONE, None, ())).stdout is None


def test_install_writes_the_extension_and_uninstall_removes_only_it(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    (project / ".pi" / "extensions").mkdir(parents=True)
    mine = project / ".pi" / "extensions" / "mine.ts"
    mine.write_text("export default function () {}\n")
    install("pi", "maxrepeat hook pi --preset live", "project", project=project, home=home)
    shim = project / ".pi" / "extensions" / FILE_NAME
    assert command_in(shim.read_bytes()) == "maxrepeat hook pi --preset live"
    assert 'const COMMAND = "maxrepeat hook pi --preset live";' in shim.read_text()
    uninstall("pi", "project", project=project, home=home)
    assert not shim.exists() and mine.exists()
    assert get("pi").writer.path("user", project, home) == \
        home / ".pi" / "agent" / "extensions" / FILE_NAME


def test_a_settings_pattern_that_turns_it_off_is_said(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    file = project / ".pi" / "extensions" / FILE_NAME
    file.parent.mkdir(parents=True)
    file.write_text(shim_source("maxrepeat hook pi"))
    assert will_load("project", file, project, home, {}).loads
    (project / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["!maxrepeat-*"]}))
    load = will_load("project", file, project, home, {})
    assert not load.loads and "remove the pattern" in str(load.problems[0])
    (project / ".pi" / "settings.json").write_text(json.dumps(
        {"extensions": ["!maxrepeat-*", f"+{file.resolve()}"]}))
    assert will_load("project", file, project, home, {}).loads
    user = home / ".pi" / "agent" / "extensions" / FILE_NAME
    assert not will_load("user", user, project, home, {"PI_CODING_AGENT_DIR": "/else"}).loads
