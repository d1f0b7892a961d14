"""The loop benchmark (bench/loops/run.py) runs on its labelled set, with or without the
corpus beside the repository, and its constructed labels hold for the recommended
settings (the figures themselves are printed, in CI too, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "loops" / "run.py"


def _run(env_shared: str | None) -> str:
    env = dict(os.environ)
    if env_shared is not None:
        env["MAXREPEAT_SHARED"] = env_shared
    out = subprocess.run([sys.executable, str(SCRIPT), "--turns", "200"], env=env,
                         capture_output=True, text=True, timeout=300, check=True)
    return out.stdout


def test_benchmark_runs_without_the_corpus(tmp_path: Path) -> None:
    """Without ../shared/corpus: one line says so, the constructed runs are still scored."""
    text = _run(str(tmp_path / "nowhere"))
    assert sum("corpus absent" in line for line in text.splitlines()) == 1
    assert "exact observation" in text and "cost on the large benchmark trajectory" in text
    rows = {line[:52].strip(): line[52:].split() for line in text.splitlines()
            if line.startswith(("exact", "observation", "name-args"))}
    # On the constructed volatile loops exact observation matching finds 1 of 7;
    # normalize: [volatile] finds all of them, and flags none of the legitimate runs.
    assert float(rows["exact observation"][4]) < 0.5
    assert rows["observation + normalize volatile"][5] == "0.00"
    assert rows["observation + normalize volatile"][4] == "1.00"
    assert rows["name-args + volatile + ignore description/summary"][4] == "1.00"
