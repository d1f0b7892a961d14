"""One rule for repeated keys whatever the file's size (issue 18, finding 5): above the
streaming threshold (lowered here through MAXREPEAT_STREAM_THRESHOLD instead of writing
512 MiB), a document with two ``events`` keys is read as the in-memory path reads it: the
last one wins, as in JSON.parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def calls(n: int, name: str = "bash") -> str:
    return json.dumps([{"type": "tool_call", "data": {"toolName": name, "toolCallId": str(i)}}
                       for i in range(n)])


def occurrences(path: Path, threshold: str | None) -> list[int]:
    env = dict(os.environ)
    env.pop("MAXREPEAT_STREAM_THRESHOLD", None)
    if threshold is not None:
        env["MAXREPEAT_STREAM_THRESHOLD"] = threshold
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "3", "--match", "name", "-o",
                           "jsonl", "-q"], capture_output=True, text=True, timeout=60, env=env)
    assert "Traceback" not in proc.stderr
    return [json.loads(line)["metadata"]["occurrences"] for line in proc.stdout.splitlines()]


DOCUMENTS = {
    "five then one": '{"id": "x", "events": %s, "events": %s}' % (calls(5), calls(1)),
    "one then five": '{"id": "x", "events": %s, "events": %s}' % (calls(1), calls(5)),
    "three copies": '{"events": %s, "id": "x", "events": %s, "events": %s}' % (
        calls(2), calls(6), calls(4)),
    "nested record": '{"trajectory": {"id": "x", "events": %s, "events": %s}}' % (
        calls(6), calls(2)),
    "repeated trajectory": '{"trajectory": {"events": %s}, "trajectory": {"events": %s}}' % (
        calls(6), calls(2)),
    "escaped key": '{"id": "x", "\\u0065vents": %s, "events": %s}' % (calls(7), calls(2)),
    "events inside values": '{"id": "x", "meta": {"events": [1, 2]}, "events": %s}' % (
        calls(4).replace('"bash"}', '"bash", "arguments": {"events": [], "events": 1}}')),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_streaming_and_in_memory_read_repeated_keys_alike(tmp_path: Path, name: str) -> None:
    path = tmp_path / "doc.json"
    path.write_text(DOCUMENTS[name], encoding="utf-8")
    in_memory = occurrences(path, None)
    assert in_memory == occurrences(path, "16")
    assert in_memory == [len(json.loads(DOCUMENTS[name]).get("events")
                             or json.loads(DOCUMENTS[name])["trajectory"]["events"])]
