"""The Cline guard's parts, on what the real Cline CLI 3.0.65 gave its hook files.

``tests/fixtures/cline/hooks/`` was recorded by a hook file that saved its input and a copy
of the session's log at each event (``cline -y`` against ``tests/cline_harness.py``'s
model): ``PreToolUse.json`` / ``PostToolUse.json`` are the inputs of the first call
(``run_commands`` of ``false``), ``at-PreToolUse.messages.json`` the log when the
``PreToolUse`` hook ran. The guard end to end: tests/guards/agents/test_e2e_cline.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from maxrepeat.guards.agents import cline
from maxrepeat.guards.policy import Action, Decision
from maxrepeat.guards.shimfiles import command_in
from tests.conftest import FIXTURES

HOOKS = FIXTURES / "cline" / "hooks"


def _payload(event: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((HOOKS / f"{event}.json").read_text("utf-8"))
    return data


def test_the_call_is_in_the_log_with_its_id_and_without_result() -> None:
    """What placement ``id`` rests on: when the hook ran, the log held the call the input
    names, and not its result."""
    log = json.loads((HOOKS / "at-PreToolUse.messages.json").read_text("utf-8"))
    blocks = [b for m in log["messages"] for b in m["content"]]
    call_id = _payload("PreToolUse")["tool_call"]["id"]  # type: ignore[index]
    assert any(b["type"] == "tool_use" and b["id"] == call_id for b in blocks)
    assert not any(b.get("tool_use_id") == call_id for b in blocks)


def test_hook_inputs_as_calls(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    pre = cline.hook_call(_payload("PreToolUse"), env)
    assert (pre.phase, pre.name, pre.arguments, pre.call_id, pre.placement) == (
        "pre", "run_commands", {"commands": ["false"]}, "call_0_0", "id")
    assert pre.log == str(tmp_path / ".cline" / "data" / "sessions" / "1796168550016_bpq8v"
                          / "1796168550016_bpq8v.messages.json")
    post = cline.hook_call(_payload("PostToolUse"), env)
    assert post.phase == "post" and post.ok is False  # the command's exit 1
    assert post.result == [{"query": "false", "result": "[Command exited with code 1]",
                            "error": "Command exited with code 1", "success": False}]
    assert cline.event_of(_payload("PostToolUse")) == "PostToolUse"


def test_the_log_follows_clines_data_folder() -> None:
    home = Path("/h")
    assert cline.session_log("s", {"CLINE_DATA_DIR": "/d"}, home) == Path(
        "/d/sessions/s/s.messages.json")
    assert cline.session_log("s", {"CLINE_DIR": "/c"}, home) == Path(
        "/c/data/sessions/s/s.messages.json")
    assert cline.session_log("s", {"CLINE_SESSION_DATA_DIR": "/x"}, home) == Path(
        "/x/s/s.messages.json")


def test_answers() -> None:
    call = cline.hook_call(_payload("PostToolUse"), {"HOME": "/h"})
    warn = cline.render(call, Decision(Action.WARN, "maxrepeat loop guard (warning): x", ()))
    assert warn.stdout == {"contextModification": "maxrepeat loop guard (warning): x"}
    stop = cline.render(call, Decision(Action.BLOCK, "refused", ()))
    assert stop.stdout == {"cancel": True, "errorMessage": "refused"}
    assert cline.render(call, Decision(Action.NONE, None, ())).stdout is None


def test_a_guard_that_cannot_start_answers_nothing(tmp_path: Path) -> None:
    """The hook file when ``maxrepeat`` is not there: it fails with the reason on standard
    error and prints no JSON, so Cline lets the call run."""
    (f,) = [f for f in cline.ClineWriter().files("project", tmp_path, tmp_path,
                                                  "maxrepeat-not-installed hook cline")
            if f.path.name == "PreToolUse"]
    assert f.mode == 0o755 and command_in(f.data) == "maxrepeat-not-installed hook cline"
    assert f.data.startswith(b"#!/bin/sh\n")
    f.path.parent.mkdir(parents=True)
    f.path.write_bytes(f.data)
    done = subprocess.run(["sh", str(f.path)], input=(HOOKS / "PreToolUse.json").read_bytes(),
                          capture_output=True, env={"PATH": os.defpath}, timeout=30)
    assert done.returncode != 0 and done.stdout == b"" and b"not found" in done.stderr


def test_will_load_names_what_is_missing(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    writer = cline.ClineWriter()
    for scope in ("project", "user"):
        for f in writer.files(scope, project, home, "maxrepeat hook cline"):
            f.path.parent.mkdir(parents=True, exist_ok=True)
            f.path.write_bytes(f.data)
    main = writer.path("project", project, home)
    both = cline.will_load("project", main, project, home, {})
    assert not both.loads and "twice" in str(both.problems[0])
    writer.path("user", project, home).unlink()
    assert cline.will_load("project", main, project, home, {}).loads
    (main.parent / "PostToolUse").unlink()
    gone = cline.will_load("project", main, project, home, {})
    assert not gone.loads and "PostToolUse" in str(gone.problems[0])


def test_the_page_shows_the_file_install_writes(tmp_path: Path) -> None:
    """docs/integrations/cline.md shows the ``PreToolUse`` file as install writes it."""
    from tests.conftest import ROOT

    page = (ROOT / "docs" / "integrations" / "cline.md").read_text("utf-8")
    shown = page.split("```sh\n", 1)[1].split("```", 1)[0]
    (f,) = [f for f in cline.ClineWriter().files("project", tmp_path, tmp_path,
                                                  "maxrepeat hook cline --preset live")
            if f.path.name == "PreToolUse"]
    assert f.data.decode("utf-8") == shown
