"""The Codex guard's result for a command: the hook input gives the output, the rollout
the exit code (`maxrepeat.guards.codex_results`), and together they make the result the
``codex`` reader reads from the finished rollout. Rollouts shaped as Codex 0.171.0 writes
them (the end-to-end matrix, tests/guards/agents/test_live_parity_e2e.py, runs the real binary)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from maxrepeat import grade
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_RESULT
from maxrepeat.guards.agents import codex
from maxrepeat.guards.codex_results import WAIT, command_result
from maxrepeat.readers import Source, get_reader


def _call(i: int, name: str = "exec_command", cmd: str = "ls /nope") -> dict[str, Any]:
    return {"type": "response_item", "payload": {
        "type": "function_call", "name": name, "call_id": f"call_{i}",
        "arguments": json.dumps({"cmd": cmd})}}


def _item(i: int, code: int | None, output: str) -> dict[str, Any]:
    """The record Codex writes when the command ends, before the PostToolUse hook."""
    return {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": f"call_{i}", "command": ["/bin/bash", "-lc", "x"],
        "status": "completed" if code == 0 else "failed", "aggregated_output": output,
        "exit_code": code}}}


def _output(i: int, code: int, output: str) -> dict[str, Any]:
    """The function_call_output Codex writes after the hook."""
    text = (f"Chunk ID: {i:06x}\nWall time: 0.00{i} seconds\nProcess exited with code "
            f"{code}\nOriginal token count: {(len(output) + 3) // 4}\nOutput:\n{output}")
    return {"type": "response_item", "payload": {
        "type": "function_call_output", "call_id": f"call_{i}", "output": text}}


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    head = [{"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.171.0"}},
            {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in head + records), encoding="utf-8")
    return path


def _post(log: Path, i: int, output: str) -> dict[str, Any]:
    return {"session_id": "s1", "turn_id": "t1", "transcript_path": str(log), "cwd": "/w",
            "hook_event_name": "PostToolUse", "model": "m", "permission_mode": "default",
            "tool_name": "Bash", "tool_input": {"command": "ls /nope"},
            "tool_use_id": f"call_{i}", "tool_response": output}


def _read_results(log: Path) -> list[tuple[Any, bool | None]]:
    [traj] = list(get_reader("codex").read(Source.from_path(str(log))))
    return [(e.data.result, e.data.success) for e in traj.events  # type: ignore[union-attr]
            if e.type == TOOL_RESULT]


def test_the_result_is_the_one_the_reader_reads_from_the_finished_rollout(
        tmp_path: Path) -> None:
    out = "ls: cannot access '/nope': No such file or directory\n"
    log = _write(tmp_path / "r.jsonl", [_call(0), _item(0, 2, out)])
    assert command_result(str(log), "call_0") == ("call_0", 2)
    call = codex.hook_call(_post(log, 0, out))
    _write(log, [_call(0), _item(0, 2, out), _output(0, 2, out)])
    [(recorded, success)] = _read_results(log)
    assert call.result == recorded == f"Process exited with code 2\nOutput:\n{out}"
    assert call.ok is success is False


def test_no_exit_code_for_other_tools_written_outputs_or_unknown_calls(
        tmp_path: Path) -> None:
    log = _write(tmp_path / "r.jsonl", [
        _call(0, name="apply_patch"), _call(1), _item(1, 0, "a\n"), _output(1, 0, "a\n"),
        _call(2), _item(2, None, "")])
    assert command_result(str(log), "call_0") is None  # not a command
    assert command_result(str(log), "call_1") is None  # its output is in the rollout
    assert command_result(str(log), "call_2") is None  # still running: no exit code
    assert command_result(str(log), "call_9") is None
    assert command_result(None, "call_1") is None
    assert command_result(str(tmp_path / "missing.jsonl"), "call_1") is None
    # without a record the result stays the hook input's
    assert codex.hook_call(_post(log, 0, "patched")).result == "patched"


def _running(i: int, session: int) -> dict[str, Any]:
    """The output of a command still running after its first wait."""
    text = (f"Chunk ID: {i:06x}\nWall time: 0.2500 seconds\nProcess running with session "
            f"ID {session}\nOriginal token count: 0\nOutput:\n")
    return {"type": "response_item", "payload": {
        "type": "function_call_output", "call_id": f"call_{i}", "output": text}}


def _poll(i: int, session: int) -> dict[str, Any]:
    return {"type": "response_item", "payload": {
        "type": "function_call", "name": "write_stdin", "call_id": f"call_{i}",
        "arguments": json.dumps({"session_id": session, "chars": ""})}}


def test_a_command_polled_to_its_end_reports_through_the_poll(tmp_path: Path) -> None:
    """A command that outlives its first wait: Codex 0.171 writes its output (still
    running), then the write_stdin call that polls it, then the command's record; the
    PostToolUse hook names the command but reports the poll's output, which the rollout
    will record as the poll's result."""
    out = "same\n"
    log = _write(tmp_path / "r.jsonl", [
        _call(0), _running(0, 41), _poll(1, 41), _item(0, 0, out), _output(1, 0, out),
        _call(2), _running(2, 77), _poll(3, 12), _poll(4, 77), _item(2, 1, out)])
    assert command_result(str(log), "call_2") == ("call_4", 1)
    call = codex.hook_call(_post(log, 2, out))
    assert (call.call_id, call.ok) == ("call_4", False)
    _write(log, [_call(0), _running(0, 41), _poll(1, 41), _item(0, 0, out),
                 _output(1, 0, out), _call(2), _running(2, 77), _poll(3, 12), _poll(4, 77),
                 _item(2, 1, out), _output(4, 1, out)])
    assert _read_results(log)[-1] == (call.result, False)
    # the first command's poll has its output: nothing left to report for it
    assert command_result(str(log), "call_0") is None


def test_a_late_record_is_waited_for_when_codex_writes_them(tmp_path: Path) -> None:
    earlier = [_call(0), _item(0, 0, "x\n"), _output(0, 0, "x\n")]
    log = _write(tmp_path / "r.jsonl", [*earlier, _call(1)])

    def append() -> None:
        time.sleep(0.3)
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(_item(1, 3, "")) + "\n")

    writer = threading.Thread(target=append)
    start = time.monotonic()
    writer.start()
    try:
        assert command_result(str(log), "call_1") == ("call_1", 3)
    finally:
        writer.join()
    assert time.monotonic() - start >= 0.3
    # a rollout with no such record for an earlier command: nothing is waited for
    bare = _write(tmp_path / "bare.jsonl", [_call(0), _output(0, 0, "x\n"), _call(1)])
    start = time.monotonic()
    assert command_result(str(bare), "call_1") is None
    assert time.monotonic() - start < WAIT / 2  # (not the wait, with room for a busy machine)


def test_observation_guard_warns_at_the_third_identical_command(tmp_path: Path) -> None:
    """Default match (observation), max 2: the same command with the same output three
    times, as Codex writes it at each PostToolUse hook (the call and its record, not yet
    its output): the guard warns at the third, as grading the finished rollout fails."""
    out = "same output\n"
    configs = [MaxRepeatConfig(2)]
    log = tmp_path / "r.jsonl"
    done: list[dict[str, Any]] = []
    said = []
    for i in range(3):
        _write(log, [*done, _call(i, cmd="echo same output"), _item(i, 0, out)])
        hook_out, _ = codex.guard(_post(log, i, out), configs, cache_dir=tmp_path / "c")
        said.append(hook_out.stdout)
        done += [_call(i, cmd="echo same output"), _item(i, 0, out), _output(i, 0, out)]
    assert said[:2] == [None, None]
    assert said[2] is not None
    assert "maxrepeat loop guard (warning)" in json.dumps(said[2])
    _write(log, done)
    [traj] = list(get_reader("codex").read(Source.from_path(str(log))))
    assert grade(traj, configs[0]).failed  # type: ignore[arg-type]
