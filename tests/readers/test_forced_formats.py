"""A forced format never invents data: a shape the reader does not understand is an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def _flat_openhands(steps: int) -> list[dict[str, Any]]:
    """The older flat OpenHands event shape: an action's fields inline (no ``args``, no
    ``id``), observations without ``cause``; every step runs a different cell."""
    events: list[dict[str, Any]] = [{"source": "user", "action": "message",
                                     "message": "Fix the bug.", "timestamp": "2024-06-01"}]
    for n in range(steps):
        events.append({"source": "agent", "action": "run_ipython", "code": f"print({n})",
                       "thought": "", "timestamp": "2024-06-01"})
        events.append({"source": "agent", "observation": "run_ipython", "content": str(n),
                       "code": f"print({n})", "timestamp": "2024-06-01"})
    return events


@pytest.mark.parametrize("fmt", ["openhands", "auto"])
def test_openhands_flat_events_are_an_error_not_null_arguments(tmp_path: Path, fmt: str
                                                               ) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(_flat_openhands(22)))
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "3", "--format", fmt,
                           "-o", "jsonl", "-q"], capture_output=True, text=True, timeout=120)
    [result] = [json.loads(x) for x in proc.stdout.splitlines()]
    assert proc.returncode == 2 and result["status"] == "error", result
    assert "older flat event shape" in result["evidence"]
    assert "[1]" in result["evidence"]  # the first action that was not understood
