"""Observations without agent chrome: what Copilot CLI and Gemini CLI wrap around a tool's
output is taken off by their readers and, identically, by their live guards
(readers/_agent_chrome.py; Claude Code's in test_agent_chrome_claude_code.py).

The strings are the agents' own, from sessions recorded with the real binaries
(``tests/fixtures/copilot-cli/shell-loop.jsonl``, ``tests/fixtures/gemini-cli/
shell-loop.jsonl``: four runs of one failing command, recorded with Copilot CLI 1.0.102 and
Gemini CLI 0.61.0 against the scripted model of tests/agent_harness.py; Copilot's system
prompt is left out of its fixture) and a Claude Code 2.1.332 session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, Trajectory
from maxrepeat.core.monitor import Monitor
from maxrepeat.guards.agents import copilot_cli, gemini_cli
from maxrepeat.readers import Source, get_reader
from maxrepeat.readers._agent_chrome import (
    copilot_cli_content,
    copilot_cli_result,
    gemini_cli_result,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
OBSERVATION = MaxRepeatConfig(2, match="observation")


def _trajectory(fmt: str, path: Path) -> Trajectory:
    [traj] = list(get_reader(fmt).read(Source.from_path(str(path))))
    assert isinstance(traj, Trajectory)
    return traj


def _results(traj: Trajectory) -> list[Any]:
    return [e.data.result for e in traj.events if e.type == TOOL_RESULT]


def _first_failing_call(traj: Trajectory) -> int | None:
    monitor, calls = Monitor(OBSERVATION), 0
    for event in traj.events:
        if event.type == TOOL_CALL:
            calls += 1
        if monitor.feed(event).failed:
            return calls - 1
    return None


# -- Copilot CLI ---------------------------------------------------------------------

@pytest.mark.parametrize(("logged", "kept"), [
    ("hi\n<shellId: 0 completed with exit code 0>", "hi\n<completed with exit code 0>"),
    ("ls: cannot access '/nope': No such file or directory\n"
     "<shellId: 13 completed with exit code 2>",
     "ls: cannot access '/nope': No such file or directory\n<completed with exit code 2>"),
    # no output: Copilot still closes with the line
    ("\n<shellId: 2 completed with exit code 0>", "\n<completed with exit code 0>"),
    # a named shell, a detached command, a negative code, blank lines after it
    ("x\n<shellId: build completed with exit code -1>\n\n",
     "x\n<completed with exit code -1>\n\n"),
    ("<detached command with shellId: 4 completed with exit code 1>",
     "<detached command completed with exit code 1>"),
    # a command still running when the call returned (as Copilot CLI 1.0.102 wrote it)
    ("<command with shellId: 2 is still running after 30 seconds. The command is still "
     "running but hasn't produced output yet. You will be automatically notified when it "
     "completes; if you need the command to complete end your response with no tool "
     "calls to wait for the notification, or use stop_bash to stop it.>",
     "<command is still running after 30 seconds. The command is still running but "
     "hasn't produced output yet. You will be automatically notified when it completes; "
     "if you need the command to complete end your response with no tool calls to wait "
     "for the notification, or use stop_bash to stop it.>"),
    ("partial\n<command with shellId: 9 is still running after 5 seconds.>",
     "partial\n<command is still running after 5 seconds.>"),
    # a command started detached (the sentence in Copilot CLI 1.0.102's runtime)
    ("<command started in detached background with shellId: 3. You will be automatically "
     "notified when it completes.>", "<command started in detached background. You will "
     "be automatically notified when it completes.>"),
    # the sandbox notices Copilot writes after the line stay
    ("out\n<shellId: 5 completed with exit code 1>\n<sandbox is active and blocked x>",
     "out\n<completed with exit code 1>\n<sandbox is active and blocked x>"),
])
def test_copilot_shell_id_comes_off_the_closing_line(logged: str, kept: str) -> None:
    assert copilot_cli_result(logged) == kept


@pytest.mark.parametrize("printed", [
    # the command printed the words itself: not on the last line, or not the whole line
    "<shellId: 9 completed with exit code 0>\nmore output",
    "see <shellId: 9 completed with exit code 0>",
    "<shellId: 9 completed with exit code 0> and more",
    "shellId: 3",
    "<shellId: 9 still running>",
    "<shellId:  completed with exit code 0>",
    "<shellId: 9 completed with exit code zero>",
    "<with shellId: 9 completed with exit code 0>",
    "<command with shellId: 2 is still running.>",
    "<command started in detached background with shellId: 3.>",
])
def test_copilot_output_that_only_looks_like_the_line_stays(printed: str) -> None:
    assert copilot_cli_result(printed) == printed


def test_copilot_the_command_printing_the_line_keeps_it() -> None:
    logged = ("<shellId: 9 completed with exit code 0>\n"
              "<shellId: 2 completed with exit code 0>")
    assert copilot_cli_result(logged) == ("<shellId: 9 completed with exit code 0>\n"
                                          "<completed with exit code 0>")


@pytest.mark.parametrize("value", [None, 3, ["<shellId: 1 completed with exit code 0>"],
                                   {"content": "x"}])
def test_copilot_values_other_than_text_are_kept(value: Any) -> None:
    assert copilot_cli_result(value) == value


#: a result as Copilot CLI 1.0.102 logged it after the guard's postToolUse warning
GUIDED = {"content": "ls: cannot access '/nonexistent-maxrepeat': No such file or "
          "directory\n<shellId: 2 completed with exit code 2>\n\nTool \"bash\" succeeded. "
          "Additional guidance from postToolUse hooks:\nmaxrepeat loop guard (warning): you "
          "repeated bash 3 times in a row.\nThis is not making progress.",
          "detailedContent": "ls: cannot access '/nonexistent-maxrepeat': No such file or "
          "directory\n<shellId: 2 completed with exit code 2>"}


def test_copilot_hook_guidance_comes_off_the_logged_result(tmp_path: Path) -> None:
    assert copilot_cli_content(GUIDED["content"], GUIDED["detailedContent"]) \
        == GUIDED["detailedContent"]
    records = [
        {"type": "session.start", "data": {"sessionId": "s"}},
        {"type": "tool.execution_start", "data": {
            "toolCallId": "c1", "toolName": "bash", "arguments": {"command": "ls"}}},
        {"type": "tool.execution_complete", "data": {
            "toolCallId": "c1", "success": True, "result": GUIDED}}]
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert _results(_trajectory("copilot-cli", log)) == [
        "ls: cannot access '/nonexistent-maxrepeat': No such file or directory\n"
        "<completed with exit code 2>"]


@pytest.mark.parametrize(("content", "detailed"), [
    # the tool's own text differs from the detail, or the words are not Copilot's
    (GUIDED["content"], "something else"),
    (GUIDED["content"], None),
    ("ok\n\nTool \"bash\" succeeded. More guidance:\nx", "ok"),
    ("ok\nTool \"bash\" succeeded. Additional guidance from postToolUse hooks:\nx", "ok"),
    ("ok", "ok"),
])
def test_copilot_results_without_hook_guidance_stay(content: Any, detailed: Any) -> None:
    assert copilot_cli_content(content, detailed) == content


def test_copilot_grade_fails_a_loop_in_observation_mode() -> None:
    log = FIXTURES / "copilot-cli" / "shell-loop.jsonl"
    raw = [json.loads(line)["data"]["result"]["content"]
           for line in log.read_text(encoding="utf-8").splitlines()
           if json.loads(line)["type"] == "tool.execution_complete"]
    assert len(set(raw)) == 4  # the log: four outputs, told apart only by the shell id
    traj = _trajectory("copilot-cli", log)
    assert len(set(_results(traj))) == 1
    assert not grade(traj, OBSERVATION).passed
    assert _first_failing_call(traj) == 2


def test_copilot_hook_judges_what_grade_judges(tmp_path: Path) -> None:
    """Replayed as Copilot runs its hook (the call logged, its result not yet): the
    guard's result for each call is the reader's, and it warns at the call where grading
    the log first fails."""
    source = FIXTURES / "copilot-cli" / "shell-loop.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    traj = _trajectory("copilot-cli", source)
    want = _first_failing_call(traj)
    env = {"COPILOT_HOME": str(tmp_path / "home")}
    spoke, results = [], []
    for i, raw in enumerate(lines):
        rec = json.loads(raw)
        if rec["type"] != "tool.execution_complete":
            continue
        session = json.loads(lines[0])["data"]["sessionId"]
        log = Path(copilot_cli.session_log(session, env))
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_bytes(b"".join(lines[:i]))
        payload = {"sessionId": session, "timestamp": 1, "cwd": "/w", "toolName": "bash",
                   "toolArgs": {"command": "ls /nonexistent-maxrepeat",
                                "description": "run it"},
                   "toolResult": {"resultType": "success",
                                  "textResultForLlm": rec["data"]["result"]["content"]}}
        results.append(copilot_cli.hook_call(payload, env).result)
        out, _ = copilot_cli.guard(payload, [OBSERVATION], cache_dir=tmp_path / "cache",
                                   environ=env)
        if out.stdout is not None:
            spoke.append(len(results) - 1)
    assert results == _results(traj)
    assert want is not None and spoke and spoke[0] == want, (spoke, want)


# -- Gemini CLI ----------------------------------------------------------------------

@pytest.mark.parametrize(("logged", "kept"), [
    ("<untrusted_context>\nOutput: hi\nProcess Group PGID: 12872\n</untrusted_context>",
     "<untrusted_context>\nOutput: hi\n</untrusted_context>"),
    ("<untrusted_context>\nOutput: ls: cannot access '/nope': No such file or directory\n"
     "Exit Code: 2\nProcess Group PGID: 12889\n</untrusted_context>",
     "<untrusted_context>\nOutput: ls: cannot access '/nope': No such file or directory\n"
     "Exit Code: 2\n</untrusted_context>"),
    ("<untrusted_context>\nOutput: bg\nBackground PIDs: 12916\nProcess Group PGID: 12914\n"
     "</untrusted_context>", "<untrusted_context>\nOutput: bg\n</untrusted_context>"),
    # without the wrapper (older releases), background ids alone, several of them
    ("Output: (empty)\nSignal: 15\nBackground PIDs: 7, 8\nProcess Group PGID: 6",
     "Output: (empty)\nSignal: 15"),
    ("Output: bg\nBackground PIDs: 7", "Output: bg"),
    # the older layout, every section written, "(none)" where nothing applies
    ("Command: ls\nDirectory: (root)\nOutput: a.txt\nError: (none)\nExit Code: 0\n"
     "Signal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4321",
     "Command: ls\nDirectory: (root)\nOutput: a.txt\nError: (none)\nExit Code: 0\n"
     "Signal: (none)"),
    # the command printed the words as its last line: only Gemini's own line goes
    ("Output: Process Group PGID: 7\nProcess Group PGID: 99", "Output: Process Group PGID: 7"),
    # a command left running in the background (the strings of Gemini CLI 0.61.0)
    ("<untrusted_context>\nCommand moved to background (PID: 77). Output hidden. Press "
     "Ctrl+B to view.\n</untrusted_context>", "<untrusted_context>\nCommand moved to "
     "background. Output hidden. Press Ctrl+B to view.\n</untrusted_context>"),
    ("Command is running in background. PID: 78. Initial output:\nserving on :8000",
     "Command is running in background. Initial output:\nserving on :8000"),
])
def test_gemini_process_ids_come_off_a_shell_result(logged: str, kept: str) -> None:
    assert gemini_cli_result("run_shell_command", logged) == kept


def test_gemini_hook_context_comes_off_any_result() -> None:
    """As Gemini CLI 0.61.0 logged a shell result after the guard's AfterTool warning
    (the context's angle brackets escaped)."""
    logged = ("<untrusted_context>\nOutput: ls: cannot access '/nonexistent-maxrepeat': No "
              "such file or directory\nExit Code: 2\nProcess Group PGID: 29424\n"
              "</untrusted_context>\n\n<hook_context>maxrepeat loop guard (warning): you "
              "repeated run_shell_command -&gt; \"&lt;untrusted_context&gt;\\nOutput: ls"
              "\u2026 3 times in a row.</hook_context>")
    assert gemini_cli_result("run_shell_command", logged) == (
        "<untrusted_context>\nOutput: ls: cannot access '/nonexistent-maxrepeat': No such "
        "file or directory\nExit Code: 2\n</untrusted_context>")
    assert gemini_cli_result("read_file", "a\n\n<hook_context>b</hook_context>") == "a"


@pytest.mark.parametrize(("tool", "value"), [
    ("read_file", "a\n<hook_context>b</hook_context>"),
    ("read_file", "a\n\n<hook_context>b</hook_context>\n"),
    ("read_file", "a\n\n<hook_context><b></hook_context>"),
    ("read_file", "a\n\n<hook_context>b</hook_context> c"),
    ("read_file", "Output: hi\nProcess Group PGID: 4242"),
    ("run_shell_command", "Output: Process Group PGID: 1\nmore"),
    ("run_shell_command", "Output: hi"),
    ("run_shell_command", "hi\nProcess Group PGID: 4242"),  # not the shell tool's layout
    ("run_shell_command", "Command moved to background (PID: 77). Output hidden."),
    ("run_shell_command", "Command is running in background. PID: 78. Initial output: x"),
    ("run_shell_command", "Output: Command is running in background. PID: 78. Initial "
                          "output:\nx"),
    ("read_file", "Command moved to background (PID: 77). Output hidden. Press Ctrl+B to "
                  "view."),
    ("run_shell_command", "Output: x\nProcess Group PGID: 12 \n"),
    ("run_shell_command", "<untrusted_context>\nOutput: x\nProcess Group PGID: 1"),
    ("run_shell_command", {"output": "Output: x\nProcess Group PGID: 1"}),
    (None, "Output: x\nProcess Group PGID: 1"),
])
def test_gemini_other_results_stay(tool: str | None, value: Any) -> None:
    assert gemini_cli_result(tool, value) == value


def test_gemini_grade_fails_a_loop_in_observation_mode() -> None:
    traj = _trajectory("gemini-cli", FIXTURES / "gemini-cli" / "shell-loop.jsonl")
    results = _results(traj)
    assert len(results) == 4 and len(set(results)) == 1
    assert "PGID" not in results[0] and "Exit Code: 2" in results[0]
    assert not grade(traj, OBSERVATION).passed
    assert _first_failing_call(traj) == 2


def test_gemini_hook_judges_what_grade_judges(tmp_path: Path) -> None:
    """Replayed as Gemini CLI runs its hook (the message's calls not written yet)."""
    source = FIXTURES / "gemini-cli" / "shell-loop.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    traj = _trajectory("gemini-cli", source)
    want = _first_failing_call(traj)
    log = tmp_path / "session.jsonl"
    spoke, results, seen = [], [], set()
    for i, raw in enumerate(lines):
        rec = json.loads(raw)
        calls = [c for c in rec.get("toolCalls", []) if c.get("result")]
        if not calls or rec["id"] in seen:
            continue
        seen.add(rec["id"])
        log.write_bytes(b"".join(lines[:i]))
        for call in calls:
            output = call["result"][0]["functionResponse"]["response"]["output"]
            payload = {"session_id": "s", "transcript_path": str(log), "cwd": "/w",
                       "hook_event_name": "AfterTool", "timestamp": "t",
                       "tool_name": call["name"], "tool_input": call["args"],
                       "tool_response": {"llmContent": output, "returnDisplay": ""}}
            results.append(gemini_cli.hook_call(payload).result)
            out, _ = gemini_cli.guard(payload, [OBSERVATION], cache_dir=tmp_path / "cache")
            if out.stdout is not None:
                spoke.append(len(results) - 1)
    assert results == _results(traj)
    assert want is not None and spoke and spoke[0] == want, (spoke, want)


# -- the real agents -----------------------------------------------------------------

@pytest.mark.parametrize("agent", ["copilot-cli", "gemini-cli"])
def test_real_agent_loop_is_told_where_grading_fails_by_observation(agent: str,
                                                                     tmp_path: Path) -> None:
    """The real Copilot CLI and Gemini CLI, the guard installed with ``--match
    observation``: the loop is caught, and the guard's warning reaches the model at the
    very call where grading the agent's own log first fails (the third copy)."""
    from tests.guards.agents.test_agent_hooks_e2e import _check_guarded, _run

    flags = ["--max", "2", "--match", "observation"]
    run, model = _run(agent, tmp_path, ["ls /nonexistent-maxrepeat"] * 5, flags)
    assert _check_guarded(agent, run, model, flags) == 2


# -- Codex ---------------------------------------------------------------------------

def test_codex_running_command_loses_its_session_id(tmp_path: Path) -> None:
    """Two runs of one command still running when the call returned, as Codex 0.171.0
    wrote them: only the session id (and the chunk id and wall time) told them apart."""
    outputs = ["Chunk ID: db4c25\nWall time: 0.5010 seconds\nProcess running with session "
               "ID 60360\nOriginal token count: 0\nOutput:\n",
               "Chunk ID: c937a7\nWall time: 0.5037 seconds\nProcess running with session "
               "ID 57583\nOriginal token count: 0\nOutput:\n"]
    records: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.171.0"}},
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}]
    for i, output in enumerate(outputs):
        records += [
            {"type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": f"call_{i}",
                "arguments": json.dumps({"cmd": "sleep 3; echo x", "yield_time_ms": 500})}},
            {"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"call_{i}", "output": output}}]
    log = tmp_path / "rollout.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert _results(_trajectory("codex", log)) == ["Process running\nOutput:\n"] * 2
