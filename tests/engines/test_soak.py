"""Flat memory over long batches (issue 8, item 6). The full soak (1,000,000 trajectories
through the CLI) is ``python bench/soak.py``; these are its quick, CI-sized checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from maxrepeat import MaxRepeatConfig
from maxrepeat.engines.batch import BatchGrader
from tests.conftest import ROOT, call, result, turn


def test_one_process_batch_grades_a_large_jsonl_in_byte_ranges(tmp_path: Path) -> None:
    """With -j 1 a large JSONL file is cut into ranges, so only one range's results are
    held at a time, and the results keep file order and line labels."""
    path = tmp_path / "many.jsonl"
    events = turn(call("bash", "c1"), result("c1", "ok"))
    path.write_text("".join(json.dumps({"events": events}) + "\n" for _ in range(2000)),
                    encoding="utf-8")
    batch = BatchGrader([str(path)], [MaxRepeatConfig(2)], jobs=1, chunk=16 * 1024)
    labels = [r.trajectory for r in batch.results()]
    assert labels == [f"{path}:{n}" for n in range(1, 2001)]
    assert batch.total > 5


def test_soak_script_reports_flat_memory_on_a_small_run() -> None:
    """bench/soak.py runs end to end and finds memory flat over 40,000 trajectories."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--count", "40000",
                           "--interval", "0.02", "--tolerance-mb", "32", "--", "-j", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "results:             40,000" in proc.stdout
