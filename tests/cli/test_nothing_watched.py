"""Runs in which no tool call was watched are counted, with the format they were read as."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def _inputs(tmp_path: Path) -> list[str]:
    # a conversion that kept the commands in the message text: no tool_calls anywhere
    text_only = tmp_path / "converted.json"
    text_only.write_text(json.dumps([
        {"role": "user", "content": "Fix the test."},
        *[{"role": "assistant", "content": "Running `pytest -x`.\n\n1 failed"}] * 6,
    ]))
    native = tmp_path / "run.json"
    native.write_text(json.dumps({"id": "native", "events": [
        {"type": "tool_call", "data": {"toolName": "bash", "toolCallId": "c1"}},
        {"type": "tool_result", "data": {"toolCallId": "c1", "result": "ok"}}]}))
    return [str(text_only), str(native)]


def _grade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "grade", *args, "--max", "3"], capture_output=True, text=True,
                          timeout=120)


def test_console_and_summary_name_the_format(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    console = _grade(*inputs, "-o", "console")
    assert console.returncode == 0
    assert ("no tool call watched in 1 result (read as: openai-messages 1)"
            in console.stdout), console.stdout
    doc = json.loads(_grade(*inputs, "-o", "json").stdout)
    assert doc["summary"]["nothingWatched"] == {"openai-messages": 1}
    # with a machine-readable output the summary on standard error says it too
    jsonl = _grade(*inputs, "-o", "jsonl")
    assert "no tool call watched in 1 result (read as: openai-messages 1)" in jsonl.stderr


def test_tools_that_match_nothing_are_counted_too(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    doc = json.loads(_grade(*inputs, "--tools", "^nothing$", "-o", "json").stdout)
    assert doc["summary"]["nothingWatched"] == {"openai-messages": 1, "vally": 1}
