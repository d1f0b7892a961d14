"""Headerless streamed ATIF: one step per line, no ``__header__`` line before them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from maxrepeat.readers import Source, detect, read_trajectories

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def _steps(repeats: int) -> list[dict[str, Any]]:
    """Steps as ATIF v1.x writers dump them (step_id, timestamp, source, ...)."""
    steps: list[dict[str, Any]] = [{"step_id": 1, "timestamp": "2025-12-05T08:07:41Z",
                                    "source": "user", "message": "Fix the failing test."}]
    for n in range(repeats):
        steps.append({
            "step_id": n + 2, "timestamp": "2025-12-05T08:08:00Z", "source": "agent",
            "model_name": "m", "message": "Running the tests again.",
            "tool_calls": [{"tool_call_id": f"call_{n}", "function_name": "bash",
                            "arguments": {"command": "pytest -x"}}],
            "observation": {"results": [{"source_call_id": f"call_{n}",
                                         "content": "1 failed"}]},
            "metrics": {"prompt_tokens": 10, "completion_tokens": 3}})
    return steps


def test_headerless_step_lines_are_one_atif_trajectory(tmp_path: Path) -> None:
    path = tmp_path / "agent.steps.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in _steps(5)))
    assert detect(Source.from_path(path)).name == "atif"
    [traj] = read_trajectories(path)
    assert traj.label == str(path) and traj.format == "atif"
    assert [e.type for e in traj.events].count("tool_call") == 5
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "3", "-o", "jsonl", "-q"],
                          capture_output=True, text=True, timeout=120)
    [result] = [json.loads(x) for x in proc.stdout.splitlines()]
    assert proc.returncode == 1 and result["metadata"]["occurrences"] == 5


def test_a_stream_cut_mid_step_grades_the_steps_before_it(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    text = "".join(json.dumps(s) + "\n" for s in _steps(2))
    path.write_text(text + json.dumps(_steps(3)[-1])[:60])
    cut, traj = list(read_trajectories(path, errors="yield"))
    assert [e.type for e in traj.events].count("tool_call") == 2  # type: ignore[union-attr]
    assert ":4:" in str(cut)
