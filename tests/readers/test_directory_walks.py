"""Directory walks say what they skipped; finding no trajectory is an error (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
RUN = json.dumps({"id": "r", "events": [
    {"type": "tool_call", "data": {"toolName": "bash", "toolCallId": "c1"}}]})


def _grade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "grade", *args, "--max", "3", "-o", "jsonl"],
                          capture_output=True, text=True, timeout=60)


def test_skipped_entries_are_named(tmp_path: Path) -> None:
    tree = tmp_path / "runs"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "a.json").write_text(RUN)
    (tree / ".cache").mkdir()
    (tree / ".cache" / "b.json").write_text(RUN)
    (tree / ".hidden.json").write_text(RUN)
    (tree / "notes.txt").write_text("not a run")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "c.json").write_text(RUN)
    (tree / "linked").symlink_to(outside, target_is_directory=True)
    os.mkfifo(tree / "pipe.jsonl")  # would block the batch if opened
    proc = _grade(str(tree))
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x)["metadata"]["source"] for x in proc.stdout.splitlines()] == [
        str(tree / "sub" / "a.json")]
    for name, why in ((".cache", "hidden directory"), (".hidden.json", "hidden file"),
                      ("linked", "symlinked directory (not followed)"),
                      ("pipe.jsonl", "not a regular file")):
        assert f"{tree / name}: skipped: {why}" in proc.stderr, proc.stderr
    assert "notes.txt" not in proc.stderr  # not a trajectory: no line for it


def test_a_directory_with_no_trajectory_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("nothing here")
    proc = _grade(str(empty))
    assert proc.returncode == 2
    [row] = [json.loads(x) for x in proc.stdout.splitlines()]
    assert row["status"] == "error" and "no trajectory file found" in row["evidence"]


def test_no_trajectory_in_any_input_is_exit_2(tmp_path: Path) -> None:
    nothing = tmp_path / "none.json"
    nothing.write_text("[]")  # a valid, empty array of trajectories
    proc = _grade(str(nothing), "--format", "vally")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no trajectory found" in proc.stderr


def test_an_unreadable_directory_is_named(tmp_path: Path) -> None:
    """Root can list any directory through its DAC capabilities, so as root (CI) the
    command runs without them (util-linux's setpriv drops them from the bounding set)."""
    import shutil

    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None, "util-linux's setpriv runs the check without DAC override"
        drop = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}"]
    tree = tmp_path / "runs"
    (tree / "locked").mkdir(parents=True)
    (tree / "ok.json").write_text(RUN)
    (tree / "locked").chmod(0)
    try:
        proc = subprocess.run([*prefix, *CLI, "grade", str(tree), "--max", "3", "-o", "jsonl"],
                              capture_output=True, text=True, timeout=60)
    finally:
        (tree / "locked").chmod(0o755)
    assert "locked: skipped: cannot list this directory" in proc.stderr, proc.stderr
    assert json.loads(proc.stdout.splitlines()[0])["trajectory"] == "r"
