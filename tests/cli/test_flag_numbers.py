"""Numbers in flags are read one way everywhere (issue 30, row 11): ASCII digits only, no
underscores, spaces or other scripts' digits, for ``--max``, ``--max-cycle-period``,
``-j``, ``--max-runs`` and the hook's rungs (``--warn-at`` / ``--block-at`` /
``--stop-at``), whether click or the hook's own reader takes the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.cli import hookrun
from maxrepeat.cli.options import count

_BAD = ["1_0", "\uff13", "\u0663", " 3", "3 ", "+3", "-1", "3.0", "0x3", "", "\u00b3"]


def _grade(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = tmp / "run.json"
    run.write_text(json.dumps({"id": "r", "events": []}))
    return subprocess.run([sys.executable, "-m", "maxrepeat", "grade", str(run), *args],
                          capture_output=True, text=True, timeout=60)


def test_count_takes_ascii_digits_only() -> None:
    assert [count(t) for t in ("0", "7", "007", "10")] == [0, 7, 7, 10]
    assert [count(t) for t in _BAD] == [None] * len(_BAD)


@pytest.mark.parametrize("flag", ["--max", "--max-cycle-period", "-j", "--max-runs"])
@pytest.mark.parametrize("value", ["1_0", "\uff15", "\u0665"])
def test_grade_refuses_numbers_that_are_not_ascii_digits(tmp_path: Path, flag: str,
                                                        value: str) -> None:
    args = ["--max", "3", flag, value] if flag != "--max" else [flag, value]
    proc = _grade(tmp_path, *args)
    assert proc.returncode == 2, (flag, value, proc.stdout, proc.stderr)
    assert value in proc.stderr or repr(value) in proc.stderr


def test_grade_takes_plain_numbers(tmp_path: Path) -> None:
    proc = _grade(tmp_path, "--max", "10", "--max-cycle-period", "2", "-j", "1",
                  "--max-runs", "0", "-q")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("value", ["1_0", "\uff13", "\u00b3", " 1"])
def test_hook_rungs_are_read_alike_by_both_readers(tmp_path: Path, value: str) -> None:
    assert hookrun.plain_call(["claude-code", "--max", "3", "--warn-at", value]) is None
    proc = subprocess.run([sys.executable, "-m", "maxrepeat", "hook", "claude-code",
                           "--max", "3", "--warn-at", value], input="{}",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "ASCII digits" in proc.stderr, proc.stderr
