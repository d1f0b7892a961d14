"""Detection reads further when the head cannot decide, and a stream is read once.

Each file here is generated in the real shape of its format with the deciding keys placed
past the first 64 KiB (a long tool output, a long first prompt, tau2's ``simulations``
after ``info`` and ``tasks``), or is read through a pipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.readers import HEAD_BYTES, Source, detect, read_trajectories

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
BIG = "x" * (HEAD_BYTES + 10_000)


def _native(ident: str, repeats: int, output: str = "") -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for n in range(repeats):
        events += [{"type": "turn_start"},
                   {"type": "tool_call", "data": {"toolName": "bash", "toolCallId": f"c{n}",
                                                  "arguments": {"cmd": "ls"}}},
                   {"type": "tool_result", "data": {"toolCallId": f"c{n}", "result": "a",
                                                    "success": True}},
                   {"type": "turn_end"}]
    return {"id": ident, "output": output, "events": events}


def _grade(path: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "3", "-o", "jsonl", "-q", *extra],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, [json.loads(x) for x in proc.stdout.splitlines()], proc.stderr


def test_native_jsonl_whose_first_line_is_longer_than_the_head(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [_native("big", 2, BIG), _native("loop", 5), _native("fine", 1)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert len(path.read_text().split("\n", 1)[0]) > HEAD_BYTES
    got = {t.label: t for t in read_trajectories(path)}
    assert sorted(got) == ["big", "fine", "loop"]
    code, results, _ = _grade(path)
    assert code == 1 and [r["passed"] for r in results] == [True, False, True]


def test_native_jsonl_with_a_malformed_first_line_grades_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"id": "cut", "events": [{"type": "turn_st\n'
                    + json.dumps(_native("loop", 5)) + "\n" + json.dumps(_native("ok", 1)) + "\n")
    items = list(read_trajectories(path, errors="yield"))
    assert [getattr(i, "label", None) for i in items] == [None, "loop", "ok"]
    assert ":1:" in str(items[0])  # the bad line is named
    code, results, stderr = _grade(path)
    assert [r["status"] for r in results] == ["error", "ok", "ok"]
    assert results[1]["passed"] is False and code == 2  # errors take precedence


def test_tau2_simulations_after_info_and_tasks(tmp_path: Path) -> None:
    """tau2-bench writes ``info`` and ``tasks`` first; ``simulations`` came at byte
    113,226 in a real 20-run telecom file."""
    tasks = [{"id": str(i), "description": {"purpose": "p" * 2000},
              "user_scenario": {"instructions": "u" * 3000}} for i in range(25)]
    sims = []
    for trial in range(2):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "help"}]
        for n in range(4):
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"t{trial}-{n}", "name": "get_data_usage",
                 "arguments": {"customer_id": "C1"}, "requestor": "assistant"}]})
            messages.append({"role": "tool", "id": f"t{trial}-{n}", "content": "1.2 GB",
                             "requestor": "assistant"})
        sims.append({"id": f"sim-{trial}", "task_id": "0", "trial": trial,
                     "messages": messages, "reward_info": {"reward": 0.0}})
    doc = {"timestamp": "2025-06-01T00:00:00", "info": {"num_trials": 2, "domain": "telecom"},
           "tasks": tasks, "simulations": sims}
    path = tmp_path / "telecom.json"
    path.write_text(json.dumps(doc))
    assert path.read_text().index('"simulations"') > 110_000
    assert detect(Source.from_path(path)).name == "openai-messages"
    runs = list(read_trajectories(path))
    assert [t.label for t in runs] == ["task0-trial0", "task0-trial1"]
    assert all(sum(e.type == "tool_call" for e in t.events) == 4 for t in runs)


def test_anthropic_messages_with_a_long_first_prompt(tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": BIG}]}]
    for n in range(5):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"tu{n}", "name": "bash", "input": {"command": "ls"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"tu{n}", "content": "a.txt"}]})
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(messages))
    assert detect(Source.from_path(path)).name == "anthropic-messages"
    code, [result], _ = _grade(path)
    assert (code, result["passed"], result["metadata"]["format"]) == (
        1, False, "anthropic-messages")


def test_mini_swe_agent_bare_list_with_a_long_first_prompt(tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent."},
                                      {"role": "user", "content": BIG}]
    for _ in range(5):
        messages.append({"role": "assistant",
                         "content": "Look again.\n\n```mswea_bash_command\nls -la\n```"})
        messages.append({"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n"
                                                    "</output>"})
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(messages))
    assert detect(Source.from_path(path)).name == "mini-swe-agent"
    code, [result], _ = _grade(path)
    assert (code, result["passed"], result["metadata"]["format"]) == (1, False, "mini-swe-agent")


def _records(n: int) -> bytes:
    # more than 128 KiB of records: the part an early re-open used to swallow
    return "".join(json.dumps(_native(f"run-{i}", 1, "y" * 1000)) + "\n"
                   for i in range(n)).encode()


@pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="no /dev/stdin")
def test_dev_stdin_is_read_once(tmp_path: Path) -> None:
    data = _records(300)
    assert len(data) > 2 * 128 * 1024
    proc = subprocess.run([*CLI, "grade", "/dev/stdin", "--max", "3", "-o", "jsonl", "-q"],
                          input=data, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ids = [json.loads(x)["trajectory"] for x in proc.stdout.splitlines()]
    assert ids == [f"run-{i}" for i in range(300)]


@pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="needs bash for <(...)")
def test_process_substitution_is_read_once(tmp_path: Path) -> None:
    src = tmp_path / "runs.jsonl"
    src.write_bytes(_records(300))
    cli = " ".join(f"'{part}'" for part in CLI)
    proc = subprocess.run(["/bin/bash", "-c", f"{cli} grade <(cat '{src}') --max 3 -o jsonl -q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ids = [json.loads(x)["trajectory"] for x in proc.stdout.splitlines()]
    assert ids == [f"run-{i}" for i in range(300)]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jsonl_above_the_streaming_threshold_with_a_long_first_line(tmp_path: Path,
                                                                   jobs: str) -> None:
    """Above the size where single documents are streamed (lowered here), a JSONL file
    whose first record is longer than the head is still read as JSONL, split or not."""
    path = tmp_path / "runs.jsonl"
    lines = [_native("big", 2, BIG), _native("loop", 5), _native("fine", 1)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    env = {**os.environ, "MAXREPEAT_STREAM_THRESHOLD": "1000"}
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "3", "-o", "jsonl", "-q",
                           "-j", jobs], capture_output=True, text=True, timeout=120, env=env)
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [(r["trajectory"], r["passed"]) for r in rows] == [
        ("big", True), ("loop", False), ("fine", True)], proc.stderr


def test_malformed_first_line_then_records_longer_than_a_mebibyte(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    long_output = "z" * (2 * 1024 * 1024)
    path.write_text('{"id": "cut", "events": [\n'
                    + json.dumps(_native("loop", 5, long_output)) + "\n"
                    + json.dumps(_native("ok", 1, long_output)) + "\n")
    assert Source.from_path(path).is_jsonl()
    items = list(read_trajectories(path, errors="yield"))
    assert [getattr(i, "label", None) for i in items] == [None, "loop", "ok"]


@pytest.mark.parametrize("second", [b"", b"\n", b"\n  \n", b'\n{"events": []}\n', b"\n[1]\n"])
def test_lines_longer_than_the_bound_are_skipped_alike_in_files_and_streams(
        tmp_path: Path, second: bytes) -> None:
    """A first line longer than the 1 MiB bound is skipped by searching the file in place
    (mmap) or by reading it through (a stream): both see the same next line."""
    body = b'{"id": "x", "events": [], "pad": "' + b"a" * (3 * 1024 * 1024) + b'"}' + second
    path = tmp_path / "t.json"
    path.write_bytes(body)
    expect = second.strip().startswith(b"{")
    assert Source.from_path(path).is_jsonl() is expect
    assert Source.from_bytes(body, "t.json").is_jsonl() is expect
