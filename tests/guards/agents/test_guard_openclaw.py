"""The OpenClaw guard without the agent: its payload, its answers, its files and config
switch, and what ``hook status`` checks (the real OpenClaw runs in test_e2e_openclaw.py)."""

from __future__ import annotations

import json
from pathlib import Path

from maxrepeat.guards.agents import get
from maxrepeat.guards.agents._openclaw_plugin import OpenclawSwitch, shim_source
from maxrepeat.guards.agents.openclaw import hook_call, render, will_load
from maxrepeat.guards.install import install, uninstall
from maxrepeat.guards.policy import Action, Decision
from maxrepeat.guards.shimfiles import command_in
from maxrepeat.guards.verdicts import _told

SESSION = "97f8e016-0000-0000-0000-000000000000"


def _payload(event: str, command: str, call_id: str, **extra: object) -> dict[str, object]:
    return {"hook_event_name": event, "session_id": SESSION, "transcript_path": None,
            "tool_name": "exec", "tool_call_id": call_id, "tool_input": {"command": command},
            **extra}


def test_hook_call_reads_the_result_as_the_reader_does() -> None:
    response = {"content": [{"type": "text", "text": "x\n\n(Command exited with code 2)"}],
                "isError": False, "details": {"status": "completed", "exitCode": 2}}
    call = hook_call(_payload("tool_result", "ls /x", "c|1", tool_response=response))
    assert (call.phase, call.placement, call.name, call.ok) == ("post", "id", "exec", False)
    assert call.result == "x\n\n(Command exited with code 2)"
    assert hook_call(_payload("before_tool_call", "ls /x", "c|1")).phase == "pre"


def test_answers_warn_refuse_stop() -> None:
    """What the plug-in is told at each rung (and the verdict journal reads back)."""
    pre = hook_call(_payload("before_tool_call", "ls /x", "c|1"))
    post = hook_call(_payload("tool_result", "ls /x", "c|1", tool_response={
        "content": [{"type": "text", "text": "no"}], "isError": True}))
    assert render(pre, Decision(Action.NONE, None, ())).stdout is None
    assert render(post, Decision(Action.WARN, "W", ())).stdout == {"append": "W"}
    assert render(pre, Decision(Action.BLOCK, "B", ())).stdout == \
        {"decision": "block", "reason": "B"}
    assert render(post, Decision(Action.BLOCK, "B", ())).stdout == \
        {"decision": "block", "reason": "B"}
    assert render(pre, Decision(Action.STOP, "S", ())).stdout == \
        {"decision": "block", "reason": "S", "continue": False}
    out = {"decision": "block", "reason": "S", "continue": False}
    assert _told(out, Decision(Action.STOP, "S", ())) == ("stop", "S")
    assert _told({"decision": "block", "reason": "B"}, Decision(Action.BLOCK, "B", ())) == \
        ("block", "B")


def test_install_writes_the_plugin_and_the_switch(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    home.mkdir()
    config = home / ".openclaw" / "openclaw.json"
    config.parent.mkdir()
    mine = b'{\n  "agents": {"defaults": {"workspace": "%s"}}\n}\n' % str(project).encode()
    config.write_bytes(mine)
    install("openclaw", "maxrepeat hook openclaw --preset live", "project", project=project,
            home=home)
    folder = project / ".openclaw" / "extensions" / "maxrepeat-guard"
    for name in ("index.js", "openclaw.plugin.json"):
        assert command_in((folder / name).read_bytes()) == "maxrepeat hook openclaw --preset live"
    settings = json.loads(config.read_text())
    assert settings["plugins"]["entries"]["maxrepeat-guard"] == {"enabled": True}
    load = will_load("project", folder / "index.js", project, home, {})
    assert load.loads, load.problems
    assert not will_load("user", folder / "index.js", project, home, {}).loads
    uninstall("openclaw", "project", project=project, home=home)
    assert config.read_bytes() == mine and not (project / ".openclaw").exists()


def test_project_install_needs_the_project_as_workspace(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    home.mkdir()
    install("openclaw", "maxrepeat hook openclaw", "project", project=project, home=home)
    load = get("openclaw").will_load(
        "project", project / ".openclaw" / "extensions" / "maxrepeat-guard" / "index.js",
        project, home, {})
    assert not load.loads and "agents.defaults.workspace" in str(load.problems[0])
    uninstall("openclaw", "project", project=project, home=home)
    assert not (home / ".openclaw").exists()


def test_switch_keeps_other_entries() -> None:
    switch = OpenclawSwitch()
    before = {"plugins": {"entries": {"other": {"enabled": True}}, "allow": ["other"]}}
    added = switch.add(before, "maxrepeat hook openclaw")
    assert added["plugins"]["entries"]["maxrepeat-guard"] == {"enabled": True}
    assert switch.remove(added) == before


def test_shim_never_blocks_on_its_own_failure() -> None:
    source = shim_source("maxrepeat hook openclaw")
    # every failure resolves to no answer: the call goes on
    assert source.count("(the call goes on)") >= 2 and "WAIT_MS = 12000" in source
    assert 'const COMMAND = "maxrepeat hook openclaw";' in source
