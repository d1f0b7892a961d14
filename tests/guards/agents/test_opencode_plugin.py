"""The OpenCode plug-in ``maxrepeat hook install opencode`` writes, run by Node.js with the
hooks called as OpenCode 1.18.33 calls them (``tool.execute.before(input, output)``,
``tool.execute.after(input, output)``), the guard command replaced by a shell command that
answers as the guard does (or fails); and the guard's answers (`render`) for each rung.

The end-to-end behaviour inside the real OpenCode is
tests/guards/agents/test_e2e_opencode.py; this file checks the paths a real run does not
take: a guard that fails or answers nonsense lets the call run and says why on standard
error."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.guards.agents._opencode_plugin import shim_source
from maxrepeat.guards.agents.opencode import hook_call, render
from maxrepeat.guards.policy import Action, Decision

_DRIVER = r"""
const mod = await import(process.argv[2]);
const aborted = [];
const client = { session: { abort: async (req) => { aborted.push(req.path.id); return true; } } };
const hooks = await mod.MaxrepeatGuard({ client, directory: "/p" });
const out = { output: "ls: no such file\n", metadata: { exit: 2 }, title: "ls" };
let refused = null;
try {
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c1" },
                                     { args: { command: "ls x" } });
} catch (e) { refused = e.message; }
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_1", callID: "c1",
                                    args: { command: "ls x" } }, out);
await new Promise((r) => setTimeout(r, 50));
console.log(JSON.stringify({ refused, output: out.output, aborted }));
"""


def _run(tmp_path: Path, command: str) -> tuple[dict[str, Any], str]:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    plugin = tmp_path / "maxrepeat-guard.mjs"
    plugin.write_text(shim_source(command))
    driver = tmp_path / "driver.mjs"
    driver.write_text(_DRIVER)
    done = subprocess.run(["node", str(driver), str(plugin)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("command", ["exit 3", "echo not-json", "/nonexistent/maxrepeat"])
def test_a_guard_that_cannot_answer_never_blocks_the_call(tmp_path: Path, command: str) -> None:
    seen, err = _run(tmp_path, command)
    assert seen == {"refused": None, "output": "ls: no such file\n", "aborted": []}
    assert err.count("maxrepeat guard:") == 2 and "the call goes on" in err


def test_a_refusal_is_thrown_and_a_note_appended(tmp_path: Path) -> None:
    answer = json.dumps({"decision": "block", "reason": "M"})
    seen, _ = _run(tmp_path, f"echo '{answer}'")
    assert seen == {"refused": "M", "output": "ls: no such file\n\n\n<maxrepeat-guard>M"
                    "</maxrepeat-guard>", "aborted": []}


def test_a_stop_refuses_and_aborts_the_session(tmp_path: Path) -> None:
    answer = json.dumps({"continue": False, "stopReason": "S"})
    seen, _ = _run(tmp_path, f"echo '{answer}'")
    assert seen["refused"] == "S" and seen["aborted"] == ["ses_1", "ses_1"]


def test_the_payload_reaches_the_guard(tmp_path: Path) -> None:
    log = tmp_path / "payloads.jsonl"
    seen, _ = _run(tmp_path, f"cat >> {log}; echo >> {log}")
    before, after = (json.loads(line) for line in log.read_text().splitlines())
    assert before["hook_event_name"] == "tool.execute.before" and "tool_response" not in before
    assert after["tool_response"]["metadata"] == {"exit": 2}
    call = hook_call(after)
    assert (call.phase, call.session, call.call_id, call.name, call.arguments, call.ok) == (
        "post", "ses_1", "c1", "bash", {"command": "ls x"}, False)
    assert call.placement == "id" and str(call.log).endswith("opencode/opencode.db")
    assert seen["refused"] is None


def test_render_for_each_rung() -> None:
    payload = {"hook_event_name": "tool.execute.before", "session_id": "s",
               "transcript_path": "/d.db", "tool_name": "bash", "tool_call_id": "c"}
    pre = hook_call(payload)
    post = hook_call({**payload, "hook_event_name": "tool.execute.after",
                      "tool_response": {"output": "x"}})
    assert render(pre, Decision(Action.NONE, None, ())).stdout is None
    assert render(post, Decision(Action.WARN, "W", ())).stdout == {"additionalContext": "W"}
    assert render(pre, Decision(Action.BLOCK, "B", ())).stdout == {"decision": "block",
                                                                  "reason": "B"}
    assert render(post, Decision(Action.STOP, "S", ())).stdout == {"continue": False,
                                                                  "stopReason": "S"}
