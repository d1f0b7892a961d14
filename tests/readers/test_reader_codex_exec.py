"""The ``codex exec --json`` event stream, from the real Codex CLI.

The test starts a scripted OpenAI Responses API server on 127.0.0.1 and points ``codex
exec --json`` at it (a custom model provider). The model asks for two commands in one
response (Codex runs them side by side), then the same command four times. The stream
Codex prints is graded by a separate ``maxrepeat`` process, and so is the rollout file
Codex writes for the same run: both readers must see the same loop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import Trajectory
from maxrepeat.readers import Source, detect, read_trajectories
from tests.conftest import ROOT

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
CODEX = ROOT / ".npm-agents" / "node_modules" / ".bin" / "codex"


def _script() -> list[list[dict[str, Any]]]:
    """The model's output items, one list per request."""
    def call(n: int, cmd: str) -> dict[str, Any]:
        return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                "name": "exec_command", "arguments": json.dumps({"cmd": cmd})}

    responses = [[call(0, "sleep 0.5; echo a"), call(1, "false")]]
    responses += [[call(n, "echo hi")] for n in range(2, 6)]
    responses.append([{"type": "message", "id": "msg_1", "role": "assistant",
                       "content": [{"type": "output_text", "text": "done"}]}])
    return responses


class _Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: list[list[dict[str, Any]]] = []
    tools: list[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # model list look-ups
        self._send(json.dumps({"models": [], "data": []}).encode(), "application/json")

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        self.tools.append([t.get("name") for t in request.get("tools", [])])
        n = len(self.tools)
        items = self.script[min(n, len(self.script)) - 1]
        events = [{"type": "response.created", "response": {"id": f"resp_{n}"}}]
        events += [{"type": "response.output_item.done", "item": i} for i in items]
        events.append({"type": "response.completed", "response": {"id": f"resp_{n}", "usage": {
            "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
            "output_tokens_details": None, "total_tokens": 2}}})
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        self._send(body.encode(), "text/event-stream")


@pytest.fixture()
def model_server() -> Iterator[str]:
    _Model.script, _Model.tools = _script(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _grade(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "3", "-o", "jsonl", "-q", *extra],
                          capture_output=True, text=True, timeout=120)
    [result] = [json.loads(x) for x in proc.stdout.splitlines()]
    return proc.returncode, result


def codex_exec(tmp_path: Path, model_server: str) -> tuple[Path, Path]:
    """Run the real ``codex exec --json`` against the scripted server: (the stream it
    printed, the rollout file it wrote). Also used by tests/project/test_examples.py."""
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
    env.update(CODEX_HOME=str(home), MAXREPEAT_TEST_KEY="unused")
    provider = (f'model_providers.scripted={{name="scripted",base_url="{model_server}",'
                f'wire_api="responses",env_key="MAXREPEAT_TEST_KEY"}}')
    proc = subprocess.run(
        [str(CODEX), "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access",
         "-c", "model_provider=scripted", "-c", provider, "-m", "gpt-5", "Make the tests pass."],
        cwd=work, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "exec_command" in _Model.tools[0]
    stream = tmp_path / "codex-exec.jsonl"
    stream.write_text(proc.stdout)
    [rollout] = list((home / "sessions").rglob("rollout-*.jsonl"))
    return stream, rollout


@pytest.mark.skipif(not CODEX.exists(), reason="scripts/test.sh installs @openai/codex")
def test_real_codex_exec_json_stream(tmp_path: Path, model_server: str) -> None:
    stream, rollout = codex_exec(tmp_path, model_server)
    assert detect(Source.from_path(stream)).name == "codex-exec"
    [traj] = read_trajectories(stream)
    calls = [e.data for e in traj.events if e.type == "tool_call"]
    results = {e.data.tool_call_id: e.data for e in traj.events if e.type == "tool_result"}
    assert len(calls) == 6 and {c.tool_name for c in calls} == {"command_execution"}
    assert all("echo hi" in c.arguments["command"] for c in calls[2:])
    failed = [c for c in calls if results[c.tool_call_id].success is False]
    assert len(failed) == 1 and "false" in failed[0].arguments["command"]
    # The first response asks for two calls; Codex runs them side by side, so they are one
    # step when their runs overlap in the stream (they do unless the machine is loaded
    # enough that the first ends before the second starts), then four steps of one call.
    records = [json.loads(line) for line in stream.read_text().splitlines() if line.strip()]
    order = [(r["type"], r["item"]["id"]) for r in records
             if r.get("type", "").startswith("item.") and
             r.get("item", {}).get("type") == "command_execution"]
    first, second = calls[0].tool_call_id, calls[1].tool_call_id
    overlapped = order.index(("item.started", second)) < order.index(("item.completed", first))
    assert [e.type for e in traj.events].count("turn_start") == (5 if overlapped else 6)
    assert traj.metadata["thread_id"]

    code, result = _grade(stream)
    assert (code, result["passed"], result["metadata"]["occurrences"]) == (1, False, 4)
    assert result["metadata"]["format"] == "codex-exec"
    # The rollout Codex wrote for the same run holds the same calls, by arguments and by
    # observation (the chunk id and wall time heading each exec_command output differ on
    # every run; the reader drops them, or no repeat would ever be seen by observation)
    for path, fmt in ((stream, "codex-exec"), (rollout, "codex")):
        for match in ("name-args", "observation"):
            code, same = _grade(path, "--match", match)
            assert (code, same["metadata"]["format"], same["metadata"]["occurrences"]) == (
                1, fmt, 4), (match, same["evidence"])
    [from_rollout] = read_trajectories(rollout)
    outputs = [e.data for e in from_rollout.events if e.type == "tool_result"]
    assert not any("Chunk ID" in str(r.result) or "Wall time" in str(r.result) for r in outputs)
    assert sum(r.success is False for r in outputs) == 1  # `false` exited with code 1


def test_cut_stream_grades_the_complete_lines(tmp_path: Path) -> None:
    """A run killed mid-line (the last line has no newline) is graded up to that line;
    an MCP call and a file change become calls, their errors failed results."""
    lines = [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "item.started", "item": {"id": "item_0", "type": "mcp_tool_call",
                                          "server": "docs", "tool": "search",
                                          "arguments": {"q": "x"}, "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "item_0", "type": "mcp_tool_call",
                                            "server": "docs", "tool": "search",
                                            "arguments": {"q": "x"}, "status": "failed",
                                            "error": {"message": "server gone"}}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "file_change",
                                            "changes": [{"path": "a.py", "kind": "update"}],
                                            "status": "completed"}},
    ]
    path = tmp_path / "exec.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines)
                    + '{"type":"item.started","item":{"id":"item_2","ty')
    items = list(read_trajectories(path, errors="yield"))
    traj, cut = items
    assert "truncated" in str(cut) or ":6:" in str(cut)
    calls = [e.data for e in traj.events if e.type == "tool_call"]
    assert [c.tool_name for c in calls] == ["docs.search", "file_change"]
    results = [e.data for e in traj.events if e.type == "tool_result"]
    assert [(r.result, r.success) for r in results] == [("server gone", False),
                                                        ("completed", True)]


def test_items_of_odd_shapes_are_skipped_not_a_crash(tmp_path: Path) -> None:
    """A type that is a list or null (found by the fuzz test) is no call, not a TypeError."""
    lines = [{"type": "thread.started", "thread_id": "t"},
             {"type": "item.completed", "item": {"id": "i", "type": [None]}},
             {"type": "item.completed", "item": {"id": "j", "type": None}},
             {"type": [None]},
             {"type": "item.completed", "item": {"id": "k", "type": "command_execution",
                                                 "command": "ls", "exit_code": 0}}]
    path = tmp_path / "exec.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    [traj] = list(read_trajectories(path, format="codex-exec"))
    assert isinstance(traj, Trajectory)
    assert [e.data.tool_name for e in traj.events if e.type == "tool_call"] == ["command_execution"]
