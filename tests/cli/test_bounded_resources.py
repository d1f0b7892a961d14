"""Hangs and unbounded resources (issue 18, finding 11): each hostile shape ends quickly
with a clear error or a word on standard error, never a hang."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def bomb(levels: int = 9) -> str:
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + (f"\ngraders:\n  - type: max-repeat\n    config:\n      max: 2\n"
                               f"      tools: *l{levels - 1}\n")


#: the CLI with 1 GB of address space at most, set in the child's Python (a ``preexec_fn``
#: can deadlock a process with threads, and a pytest-xdist worker has them)
LIMITED_CLI = [sys.executable, "-c", ("import resource\n"
                                      "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
                                      "from maxrepeat.cli import main; main()")]


def limited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI with 1 GB of address space at most and 60 s."""
    return subprocess.run([*LIMITED_CLI, *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_a_yaml_alias_bomb_is_a_clear_lint_and_grade_error(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(bomb(), encoding="utf-8")
    (tmp_path / "run.json").write_text('{"events": []}', encoding="utf-8")
    start = _children_cpu()  # CPU seconds, not wall time: no flake on a loaded machine
    lint = limited(["lint", "bomb.yaml"], tmp_path)
    grade = limited(["grade", "run.json", "--config", "bomb.yaml"], tmp_path)
    assert _children_cpu() - start < 30
    for proc in (lint, grade):
        assert "at most 100,000 values once its aliases are expanded" in proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
    assert (lint.returncode, grade.returncode) == (1, 2)


def test_small_aliases_still_work(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text(
        "common: &tools ['^bash$']\ngraders:\n  - type: max-repeat\n    config:\n"
        "      max: 2\n      tools: *tools\n", encoding="utf-8")
    proc = limited(["lint", "g.yaml"], tmp_path)
    assert proc.returncode in (0, 1) and "aliases are expanded" not in proc.stdout


def test_a_fifo_in_a_graded_directory_is_skipped_with_a_word(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    os.mkfifo(runs / "pipe.jsonl")
    events = [{"type": "tool_call", "data": {"toolName": "t", "toolCallId": "1"}}]
    (runs / "a.json").write_text(json.dumps({"id": "a", "events": events}), encoding="utf-8")
    proc = limited(["grade", "runs", "--max", "2", "-o", "jsonl"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "pipe.jsonl: skipped: not a regular file" in proc.stderr
    assert len(proc.stdout.splitlines()) == 1


def test_streaming_is_not_quadratic_in_the_length_of_one_string(tmp_path: Path) -> None:
    """A 24 MB string read by streaming (threshold lowered instead of writing 512 MiB)
    costs about what the in-memory path costs: the streaming parser is fed 2 MiB at a
    time, not 64 KiB (each block of a long string was copied again: 40 s for 64 MB)."""
    text = "x" * (24 << 20)
    events = [{"type": "tool_call", "data": {"toolName": "t", "toolCallId": "1",
                                             "arguments": {"a": text}}},
              {"type": "tool_result", "data": {"toolCallId": "1", "result": text}}]
    (tmp_path / "long.json").write_text(json.dumps({"id": "x", "events": events}))
    timings = []
    for threshold in ("", "1000"):
        env = {**os.environ, "MAXREPEAT_STREAM_THRESHOLD": threshold}
        # CPU seconds of the child, not wall time: other load on the machine does not
        # inflate them, and copying a long string again and again is CPU
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([*CLI, "grade", "long.json", "--max", "3", "-q", "-o", "jsonl"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        timings.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        assert proc.returncode == 0, proc.stderr
    in_memory, streamed = timings
    assert streamed < 6 * in_memory + 3, timings


@pytest.mark.slow  # ~11 CPU-seconds
def test_a_large_json_array_is_graded_without_holding_every_result(tmp_path: Path) -> None:
    """One JSON array is one unit; graded in this process its results are written as they
    come instead of being held until the file ends (a 290 MB array of 5 million runs used
    3.1 GB). 100,000 runs: about 50 MB peak now, 115 MB before."""
    run = '{"id":"r%d","events":[{"type":"tool_call","data":{"toolName":"t"}}]}'
    (tmp_path / "runs.json").write_text("[" + ",".join(run % i for i in range(100_000)) + "]")
    # VmHWM (peak RSS of this image), not ru_maxrss, which counts the forking parent's
    code = ("import atexit, sys\n"
            "def peak():\n"
            "    for line in open('/proc/self/status'):\n"
            "        if line.startswith('VmHWM:'):\n"
            "            sys.stderr.write('RSS=%s\\n' % line.split()[1])\n"
            "atexit.register(peak)\n"
            "from maxrepeat.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code, "grade", "runs.json", "--max", "3",
                           "-q", "-o", "jsonl"], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 100_000
    rss_kb = int(proc.stderr.rsplit("RSS=", 1)[1].split()[0])
    assert rss_kb < 85_000, rss_kb
