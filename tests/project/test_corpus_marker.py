"""The `corpus` marker: without ../shared/corpus the corpus tests are deselected with one
summary line, and where the corpus is expected (CI) its absence fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

#: a module made only of corpus tests
TARGET = "tests/readers/test_readers_a_corpus.py"


def _pytest(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("CI", "MAXREPEAT_EXPECT_CORPUS", "MAXREPEAT_SHARED")}
    base["MAXREPEAT_SHARED"] = str(tmp_path / "no-shared-here")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args, TARGET], cwd=ROOT, env={**base, **env}, capture_output=True,
                          text=True, timeout=300, check=False)


def test_missing_corpus_is_one_summary_line(tmp_path: Path) -> None:
    """Deselected, not skipped: one line says how many and why; nothing fails."""
    run = _pytest(tmp_path)
    lines = [line for line in run.stdout.splitlines() if line.startswith("corpus tests:")]
    assert len(lines) == 1, run.stdout
    assert "deselected" in lines[0] and "no-shared-here/corpus not found" in lines[0]
    assert "skipped" not in run.stdout
    assert run.returncode == 5, run.stdout  # pytest's "no tests ran": all were deselected


def test_missing_corpus_fails_on_ci(tmp_path: Path) -> None:
    """CI=true (as .ci/run is called) turns a missing corpus into a failed run."""
    run = _pytest(tmp_path, CI="true")
    assert run.returncode not in (0, 5)
    assert "corpus tests need" in run.stderr + run.stdout


def test_missing_corpus_fails_when_asked(tmp_path: Path) -> None:
    """MAXREPEAT_EXPECT_CORPUS=1 does the same outside CI."""
    run = _pytest(tmp_path, MAXREPEAT_EXPECT_CORPUS="1")
    assert run.returncode not in (0, 5)
    assert "corpus tests need" in run.stderr + run.stdout


def test_missing_corpus_fails_on_ci_under_xdist_naming_it(tmp_path: Path) -> None:
    """As scripts/test.sh runs pytest (pytest-xdist workers, which collect): the missing
    corpus is named in each corpus test's failure, not lost in an INTERNALERROR."""
    run = _pytest(tmp_path, "-p", "xdist.plugin", "-n", "2", CI="true",
                  PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    assert run.returncode not in (0, 5)
    assert "INTERNALERROR" not in run.stdout + run.stderr
    assert "corpus tests need" in run.stdout and "no-shared-here/corpus" in run.stdout
