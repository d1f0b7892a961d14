"""The Codex CLI, Gemini CLI and Copilot CLI guards on recorded hook inputs and session
logs (shapes as each agent's release writes them, see
tests/guards/agents/test_agent_hooks_e2e.py for the same against the real binaries), the
settings writers, and the commands."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.guards import agentlog
from maxrepeat.guards.agents import codex, copilot_cli, gemini_cli
from maxrepeat.guards.agents.codex import CodexWriter
from maxrepeat.guards.agents.copilot_cli import CopilotCliWriter
from maxrepeat.guards.agents.gemini_cli import GeminiCliWriter
from maxrepeat.guards.hookcall import HookCall
from maxrepeat.guards.install import install, uninstall
from maxrepeat.guards.placement import place_call
from maxrepeat.guards.policy import Action

CONFIG = [MaxRepeatConfig(2, match="name-args")]
EXE = str(Path(sys.executable).parent / "maxrepeat")
FIXTURES = Path(__file__).parents[2] / "fixtures"


def _jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


# -- Codex CLI -----------------------------------------------------------------------

def _codex_log(n_calls: int, answered: int) -> list[dict[str, Any]]:
    """A rollout with ``n_calls`` calls of the same command, the first ``answered`` of
    them with their output (as Codex writes it when the PostToolUse hook runs)."""
    recs: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.171.0"}},
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "go"}]}},
    ]
    for i in range(n_calls):
        recs.append({"type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": f"call_{i}",
            "arguments": json.dumps({"cmd": "ls /nope"})}})
        if i < answered:
            recs.append({"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"call_{i}",
                "output": "Process exited with code 2\nOutput:\nls: cannot access"}})
    return recs


def _codex_payload(event: str, log: Path, i: int) -> dict[str, Any]:
    payload = {"session_id": "s1", "turn_id": "t1", "transcript_path": str(log),
               "cwd": "/w", "hook_event_name": event, "model": "m",
               "permission_mode": "bypassPermissions", "tool_name": "Bash",
               "tool_input": {"command": "ls /nope"}, "tool_use_id": f"call_{i}"}
    if event == "PostToolUse":
        payload["tool_response"] = ""
    return payload


def test_codex_warns_at_the_third_copy_and_refuses_the_fourth(tmp_path: Path) -> None:
    log = tmp_path / "rollout.jsonl"
    cache = tmp_path / "cache"
    outputs = []
    for i in range(3):
        _jsonl(log, _codex_log(i + 1, i))
        out, decision = codex.guard(_codex_payload("PostToolUse", log, i), CONFIG,
                                    cache_dir=cache)
        outputs.append(out.stdout)
    assert outputs[:2] == [None, None]
    ctx = outputs[2]["hookSpecificOutput"]  # type: ignore[index]
    assert ctx["hookEventName"] == "PostToolUse"
    assert "maxrepeat loop guard (warning)" in ctx["additionalContext"]
    assert 'exec_command {"cmd": "ls /nope"} 3 times' in ctx["additionalContext"]
    # the 4th: written by Codex, not run yet; PreToolUse refuses it
    _jsonl(log, _codex_log(4, 3))
    out, decision = codex.guard(_codex_payload("PreToolUse", log, 3), CONFIG, cache_dir=cache)
    assert decision.action is Action.BLOCK
    spec = out.stdout["hookSpecificOutput"]  # type: ignore[index]
    assert spec["permissionDecision"] == "deny"
    assert "4 times" in spec["permissionDecisionReason"]
    # a PreToolUse at a stop level refuses too (Codex cannot stop there), and says so
    _jsonl(log, _codex_log(5, 4))
    out, decision = codex.guard(_codex_payload("PreToolUse", log, 4), CONFIG, cache_dir=cache)
    assert decision.action is Action.STOP
    reason = out.stdout["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
    assert "(blocked)" in reason and "refused" in reason


def test_codex_post_outputs_by_action() -> None:
    call = codex.hook_call({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                            "tool_use_id": "c", "tool_response": "x"})
    from maxrepeat.guards.policy import Decision

    block = codex.render(call, Decision(Action.BLOCK, "M", ()))
    stop = codex.render(call, Decision(Action.STOP, "M", ()))
    assert block.stdout == {"decision": "block", "reason": "M"}
    assert stop.stdout == {"continue": False, "stopReason": "M", "reason": "M"}
    assert codex.render(call, Decision(Action.NONE, None, ())).stdout is None


def test_codex_rejects_other_events() -> None:
    from maxrepeat.core.errors import TrajectoryFormatError

    with pytest.raises(TrajectoryFormatError, match="hook_event_name"):
        codex.hook_call({"hook_event_name": "Stop"})


# -- Gemini CLI ----------------------------------------------------------------------

def _gemini_log(n_calls: int) -> list[dict[str, Any]]:
    """A chat log holding ``n_calls`` finished calls (the current one is not written yet
    when the AfterTool hook runs)."""
    recs: list[dict[str, Any]] = [
        {"sessionId": "g1", "projectHash": "h", "startTime": "2026-12-01T00:00:00Z",
         "lastUpdated": "2026-12-01T00:00:00Z", "kind": "main"},
        {"id": "u0", "type": "user", "content": [{"text": "go"}]},
    ]
    for i in range(n_calls):
        cid = f"run_shell_command_{i}"
        recs.append({"id": f"m{i}", "type": "gemini", "content": "", "toolCalls": [{
            "id": cid, "name": "run_shell_command", "args": {"command": "ls /nope"},
            "status": "success", "result": [{"functionResponse": {
                "id": cid, "name": "run_shell_command",
                "response": {"output": "Exit Code: 2"}}}]}]})
    return recs


def _gemini_payload(event: str, log: Path) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": "g1", "transcript_path": str(log), "cwd": "/w",
        "hook_event_name": event, "timestamp": "2026-12-01T00:00:00Z",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls /nope"}}
    if event == "AfterTool":
        payload["tool_response"] = {"llmContent": "Exit Code: 2", "returnDisplay": "x"}
    return payload


def test_gemini_warns_blocks_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    cache = tmp_path / "cache"
    seen = []
    for i in range(3):
        _jsonl(log, _gemini_log(i))
        out, _ = gemini_cli.guard(_gemini_payload("AfterTool", log), CONFIG, cache_dir=cache)
        seen.append(out.stdout)
    assert seen[:2] == [None, None]
    assert seen[2] is not None
    assert "(warning)" in seen[2]["hookSpecificOutput"]["additionalContext"]
    _jsonl(log, _gemini_log(3))
    out, _ = gemini_cli.guard(_gemini_payload("BeforeTool", log), CONFIG, cache_dir=cache)
    assert out.stdout is not None and out.stdout["decision"] == "deny"
    _jsonl(log, _gemini_log(4))
    out, _ = gemini_cli.guard(_gemini_payload("BeforeTool", log), CONFIG, cache_dir=cache)
    assert out.stdout is not None and out.stdout["continue"] is False
    assert "(stopped)" in out.stdout["stopReason"]


@pytest.mark.parametrize("match", ["name", "name-args", "observation"])
def test_gemini_parallel_calls_share_their_step(tmp_path: Path, match: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A model message with two calls run in parallel (as real Gemini CLI sessions have):
    Gemini CLI writes the message's calls once both finished, so the second call's hooks
    see neither call in the log. The guard keeps the first call from its own hook and
    judges the second in the same step, so a repeated message is told at the call where
    grading the log first fails; and it does not wait for a result the log cannot show
    yet (before: every hook after the first of a message waited LAG_WAIT, and a repeated
    message of parallel calls was never told)."""
    from maxrepeat.core.monitor import Monitor
    from maxrepeat.readers import Source, get_reader

    monkeypatch.setattr(agentlog, "LAG_WAIT", 30.0)  # a wait would show, not pass unseen
    source = FIXTURES / "gemini-cli" / "parallel-calls.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    config = [MaxRepeatConfig(1, match=match)]
    [traj] = list(get_reader("gemini-cli").read(Source.from_path(str(source))))
    monitor, calls, want = Monitor(config[0]), 0, None
    for event in traj.events:  # type: ignore[union-attr]
        calls += event.type == "tool_call"
        if want is None and monitor.feed(event).failed:
            want = calls - 1
    assert want == 3  # the second call of the second message
    log, cache = tmp_path / "session.jsonl", tmp_path / "cache"
    spoke, k = [], 0
    for i, raw in enumerate(lines):
        rec = json.loads(raw)
        for tc in rec.get("toolCalls", []):
            log.write_bytes(b"".join(lines[:i]))  # the message's calls not written yet
            for event in ("BeforeTool", "AfterTool"):
                payload = {**_gemini_payload(event, log), "tool_name": tc["name"],
                           "tool_input": tc["args"]}
                if event == "AfterTool":
                    output = tc["result"][0]["functionResponse"]["response"]["output"]
                    payload["tool_response"] = {"llmContent": output, "returnDisplay": ""}
                started = time.monotonic()
                out, _ = gemini_cli.guard(payload, config, cache_dir=cache)
                assert time.monotonic() - started < 15, "the hook waited for the log"
                if out.stdout is not None:
                    spoke.append(k)
            k += 1
    assert spoke and spoke[0] == want, spoke


def test_gemini_warns_after_a_failed_call_in_the_reason() -> None:
    from maxrepeat.guards.policy import Decision

    call = gemini_cli.hook_call({"hook_event_name": "AfterTool", "tool_name": "read_file",
                                 "tool_response": {"llmContent": "x",
                                                   "error": {"message": "File not found"}}})
    out = gemini_cli.render(call, Decision(Action.WARN, "M -> <x>", ()))
    # wrapped as Gemini CLI wraps additional context, which the reader drops from the
    # logged result: grading the log sees the error alone, as the guard did
    assert out.stdout == {"decision": "deny", "reason": "File not found\n\n"
                          "<hook_context>M -&gt; &lt;x&gt;</hook_context>"}


def test_gemini_error_result_is_a_failed_call() -> None:
    call = gemini_cli.hook_call({"hook_event_name": "AfterTool", "tool_name": "read_file",
                                 "tool_response": {"llmContent": "x",
                                                   "error": {"message": "no such file"}}})
    assert (call.result, call.ok) == ("no such file", False)


# -- Copilot CLI ---------------------------------------------------------------------

def _copilot_log(n_calls: int, answered: int) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = [
        {"type": "session.start", "data": {"sessionId": "c1"}, "id": "e0"},
        {"type": "user.message", "data": {"content": "go"}, "id": "e1"},
    ]
    for i in range(n_calls):
        cid = f"call_{i}"
        recs.append({"type": "assistant.message", "id": f"a{i}", "data": {
            "messageId": f"m{i}", "content": "", "toolRequests": [{
                "toolCallId": cid, "name": "bash",
                "arguments": {"command": "ls /nope", "description": "d"}}]}})
        recs.append({"type": "tool.execution_start", "id": f"s{i}", "data": {
            "toolCallId": cid, "toolName": "bash",
            "arguments": {"command": "ls /nope", "description": "d"}}})
        if i < answered:
            recs.append({"type": "tool.execution_complete", "id": f"c{i}", "data": {
                "toolCallId": cid, "success": True,
                "result": {"content": "<shellId: 0 completed with exit code 2>"}}})
    return recs


def _copilot_payload(event: str) -> dict[str, Any]:
    base: dict[str, Any] = {"sessionId": "c1", "timestamp": 1, "cwd": "/w", "toolName": "bash"}
    if event == "permissionRequest":
        return {**base, "hookName": "permissionRequest",
                "toolInput": {"command": "ls /nope"}, "permissionSuggestions": []}
    base["toolArgs"] = {"command": "ls /nope", "description": "d"}
    if event == "postToolUse":
        base["toolResult"] = {"resultType": "success",
                              "textResultForLlm": "<shellId: 0 completed with exit code 2>"}
    elif event == "postToolUseFailure":
        base["error"] = "boom"
    return base


def test_copilot_event_by_shape() -> None:
    assert [copilot_cli.event_of(_copilot_payload(e)) for e in copilot_cli.EVENTS] == list(
        copilot_cli.EVENTS)


def test_copilot_escalation(tmp_path: Path) -> None:
    env = {"COPILOT_HOME": str(tmp_path / "home")}
    log = Path(copilot_cli.session_log("c1", env))
    cache = tmp_path / "cache"
    said = []
    for i in range(3):
        _jsonl(log, _copilot_log(i + 1, i))
        out, _ = copilot_cli.guard(_copilot_payload("postToolUse"), CONFIG, cache_dir=cache,
                                   environ=env)
        said.append(out.stdout)
    assert said[:2] == [None, None]
    assert said[2] is not None and "(warning)" in said[2]["additionalContext"]
    _jsonl(log, _copilot_log(4, 3))
    out, _ = copilot_cli.guard(_copilot_payload("preToolUse"), CONFIG, cache_dir=cache,
                               environ=env)
    assert out.stdout is not None and out.stdout["permissionDecision"] == "deny"
    _jsonl(log, _copilot_log(5, 4))
    pre, decision = copilot_cli.guard(_copilot_payload("preToolUse"), CONFIG,
                                      cache_dir=cache, environ=env)
    assert decision.action is Action.STOP and pre.stdout is None  # left to the next event
    perm, _ = copilot_cli.guard(_copilot_payload("permissionRequest"), CONFIG,
                                cache_dir=cache, environ=env)
    assert perm.stdout is not None
    assert perm.stdout["behavior"] == "deny" and perm.stdout["interrupt"] is True


@pytest.mark.parametrize("log_late", [False, True], ids=["log-from-start", "log-created-late"])
def test_copilot_waits_for_a_lagging_log(tmp_path: Path, log_late: bool) -> None:
    """Copilot writes its log asynchronously: when a hook runs before the previous
    result is on disk, the guard waits for it instead of taking the previous call for
    the current one (which would count one copy too few).

    ``log_late`` (seen in CI): Copilot ran the first call's hooks before it created its
    log. The state saved then must be the one found once the log exists; a state kept
    apart ("no log") lost the first result from the count the guard waits for, and the
    repeat ran instead of being refused."""
    env = {"COPILOT_HOME": str(tmp_path / "home")}
    log = Path(copilot_cli.session_log("c1", env))
    cache = tmp_path / "cache"
    for i in range(3):
        if i or not log_late:
            _jsonl(log, _copilot_log(i + 1, i))
        else:
            copilot_cli.guard(_copilot_payload("preToolUse"), CONFIG, cache_dir=cache,
                              environ=env)
        copilot_cli.guard(_copilot_payload("postToolUse"), CONFIG, cache_dir=cache,
                          environ=env)
    assert len(list(cache.glob("*.state"))) == 1
    _jsonl(log, _copilot_log(3, 2))  # the 3rd result and the 4th call not written yet

    def catch_up() -> None:
        time.sleep(0.3)
        _jsonl(log, _copilot_log(4, 3))

    writer = threading.Thread(target=catch_up)
    writer.start()
    out, decision = copilot_cli.guard(_copilot_payload("preToolUse"), CONFIG,
                                      cache_dir=cache, environ=env)
    writer.join()
    assert decision.action is Action.BLOCK, decision
    assert out.stdout is not None and out.stdout["permissionDecision"] == "deny"


def test_copilot_rejects_a_path_as_session_id() -> None:
    from maxrepeat.core.errors import TrajectoryFormatError

    with pytest.raises(TrajectoryFormatError, match="sessionId"):
        copilot_cli.hook_call({**_copilot_payload("preToolUse"), "sessionId": "../x"})


# -- where the current call stands in the log ------------------------------------------

def test_place_call_adds_the_result_inside_the_calls_turn() -> None:
    from maxrepeat.core.events import tool_call, tool_result, turn_end, turn_start

    events = [turn_start("1"), tool_call("bash", "a", {}), tool_result("a", "x"), turn_end("1"),
              turn_start("2"), tool_call("bash", "b", {}), turn_end("2")]
    call = HookCall("post", "s", None, "codex", "id", "bash", call_id="b",
                    result="out", ok=False)
    history, current = place_call(events, call)
    assert history == events[:4]
    assert [e.type for e in current] == ["turn_start", "tool_call", "tool_result", "turn_end"]
    assert current[2].data.result == "out" and current[2].data.success is False
    pre = HookCall("pre", "s", None, "codex", "id", "bash", call_id="b")
    assert [e.type for e in place_call(events, pre)[1]] == [
        "turn_start", "tool_call", "turn_end"]
    absent = HookCall("post", "s", None, "gemini-cli", "absent", "bash",
                      arguments={}, result="r")
    history, current = place_call(events, absent)
    assert history == events and current[1].data.tool_name == "bash"


# -- settings writers ------------------------------------------------------------------

@pytest.mark.parametrize("writer", [CodexWriter(), GeminiCliWriter(), CopilotCliWriter()])
def test_writers_merge_and_remove_exactly(writer: Any) -> None:
    agent = writer.agent
    mine = f"/opt/bin/maxrepeat hook {agent} --max 3"
    other = {"type": "command", "command": "my-linter"} if agent != "copilot-cli" else {
        "type": "command", "bash": "my-linter"}
    event = writer.events[0]
    group = other if agent == "copilot-cli" else {"hooks": [other]}
    original = {"theme": "dark", "hooks": {event: [group]}}
    added = writer.add(original, mine)
    assert added["theme"] == "dark"
    assert sorted(added["hooks"]) == sorted(writer.events)
    assert added["hooks"][event][0] == group
    assert writer.add(added, mine) == added  # installing twice changes nothing
    assert writer.remove(added) == original
    assert writer.remove(writer.add({}, mine)) == {}


def test_install_and_uninstall_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    home, project = tmp_path / "home", tmp_path / "proj"
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"general": {"vimMode": true}}\n', encoding="utf-8")
    before = settings.read_bytes()
    res = install("gemini-cli", f"{EXE} hook gemini-cli --max 3", "user", project=project,
                  home=home)
    assert res.path == settings and res.changed
    assert res.backup is not None and res.backup.read_bytes() == before
    data = json.loads(settings.read_text())
    assert data["general"] == {"vimMode": True} and "AfterTool" in data["hooks"]
    assert uninstall("gemini-cli", "user", project=project, home=home).changed
    assert json.loads(settings.read_text()) == {"general": {"vimMode": True}}
    res = install("codex", f"{EXE} hook codex --max 3", "project", project=project, home=home)
    assert res.path == project / ".codex" / "hooks.json"
    res = install("copilot-cli", f"{EXE} hook copilot-cli --max 3", "project",
                  project=project, home=home)
    assert res.path == project / ".github" / "hooks" / "maxrepeat.json"
    assert json.loads(res.path.read_text())["version"] == 1


# -- the commands ----------------------------------------------------------------------

def test_hook_command_prints_the_agents_json(tmp_path: Path) -> None:
    log = tmp_path / "rollout.jsonl"
    _jsonl(log, _codex_log(3, 2))
    proc = subprocess.run(
        [EXE, "hook", "codex", "--max", "2", "--match", "name-args",
         "--cache-dir", str(tmp_path / "c")],
        input=json.dumps(_codex_payload("PostToolUse", log, 2)), capture_output=True,
        text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "(warning)" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("agent", ["codex", "gemini-cli", "copilot-cli"])
def test_hook_command_reports_bad_input_to_the_user(agent: str, tmp_path: Path) -> None:
    proc = subprocess.run([EXE, "hook", agent, "--max", "2", "--cache-dir", str(tmp_path)],
                          input="not json", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout == "" and "maxrepeat hook:" in proc.stderr
