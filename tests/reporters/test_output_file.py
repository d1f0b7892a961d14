"""``--output-file`` never clobbers what is not a report (issue 18, findings 1 and 12):
devices, symlinks, directories, FIFOs and the inputs themselves are refused with exit 2
and no traceback; a run killed with SIGKILL leaves no temporary file behind."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def loop_file(path: Path, calls: int = 4) -> Path:
    events = [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i)}}
              for i in range(calls)]
    path.write_text(json.dumps({"id": "t", "events": events}), encoding="utf-8")
    return path


def grade(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "grade", *args, "--max", "9", "--match", "name", "-q"],
                          capture_output=True, text=True, timeout=60, cwd=cwd)


def refused(proc: subprocess.CompletedProcess[str], why: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "--output-file must be a regular file or a new path" in proc.stderr
    assert why in proc.stderr


def test_a_symlink_is_refused_and_left_alone(tmp_path: Path) -> None:
    run = loop_file(tmp_path / "run.json")
    target = tmp_path / "keep.txt"
    target.write_text("precious")
    (tmp_path / "link.json").symlink_to(target)
    refused(grade(str(run), "--output-file", "link.json", cwd=tmp_path), "symbolic link")
    assert (tmp_path / "link.json").is_symlink() and target.read_text() == "precious"


def test_a_directory_is_refused_without_traceback(tmp_path: Path) -> None:
    run = loop_file(tmp_path / "run.json")
    (tmp_path / "out.json").mkdir()
    refused(grade(str(run), "--output-file", "out.json", cwd=tmp_path), "a directory")
    assert (tmp_path / "out.json").is_dir()


def test_a_fifo_is_refused(tmp_path: Path) -> None:
    run = loop_file(tmp_path / "run.json")
    os.mkfifo(tmp_path / "pipe.json")
    refused(grade(str(run), "--output-file", "pipe.json", cwd=tmp_path), "a FIFO")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe.json").st_mode)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full", "/dev/stdout"])
def test_devices_are_refused_and_stay_devices(tmp_path: Path, device: str) -> None:
    run = loop_file(tmp_path / "run.json")
    before = os.lstat(device).st_mode
    proc = grade(str(run), "--output-file", device, cwd=tmp_path)
    refused(proc, "it is a")
    assert os.lstat(device).st_mode == before


def test_an_input_is_never_overwritten(tmp_path: Path) -> None:
    run = loop_file(tmp_path / "self.json")
    text = run.read_text()
    refused(grade("self.json", "--output-file", "self.json", cwd=tmp_path), "the input")
    refused(grade(str(run), "--output-file", "./self.json", cwd=tmp_path), "the input")
    (tmp_path / "hard.json").hardlink_to(run)
    refused(grade("self.json", "--output-file", "hard.json", cwd=tmp_path), "the input")
    assert run.read_text() == text


def test_the_file_on_standard_input_is_never_overwritten(tmp_path: Path) -> None:
    """``grade - --output-file run.json < run.json`` (issue 30, row 12): standard input
    read from a file is an input; a pipe on standard input is not a file to protect."""
    run = loop_file(tmp_path / "run.json")
    text = run.read_text()
    with run.open("rb") as stdin:
        proc = subprocess.run([*CLI, "grade", "-", "--output-file", "run.json", "--max", "9",
                               "-q"], stdin=stdin, capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
    refused(proc, "it is the input on standard input")
    assert run.read_text() == text
    piped = subprocess.run([*CLI, "grade", "-", "--output-file", "out.json", "--max", "9",
                            "-q"], input=text, capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
    assert piped.returncode == 0 and (tmp_path / "out.json").exists(), piped.stderr


def test_a_file_inside_a_graded_directory_is_refused(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    loop_file(runs / "a.json")
    loop_file(runs / "report.json")
    refused(grade("runs", "--output-file", "runs/report.json", cwd=tmp_path),
            "inside the input directory")


def test_a_regular_file_or_new_path_is_written(tmp_path: Path) -> None:
    run = loop_file(tmp_path / "run.json")
    (tmp_path / "old.json").write_text("old")
    for name in ("old.json", "new.json"):
        proc = grade(str(run), "--output-file", name, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads((tmp_path / name).read_text())["results"][0]["passed"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json", "old.json", "run.json"]


def test_kill_9_mid_write_leaves_no_part_file_after_the_next_run(tmp_path: Path) -> None:
    """SIGKILL cannot be cleaned up after at once: the dead run's .part file (its lock is
    free) is removed by the next run writing the same target, which also succeeds."""
    runs = tmp_path / "runs"
    runs.mkdir()
    events = [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i)}}
              for i in range(20)]
    with (runs / "many.jsonl").open("w") as fh:
        for i in range(100_000):
            fh.write(json.dumps({"id": f"r{i}", "events": events}) + "\n")
    proc = subprocess.Popen([*CLI, "grade", "runs", "--max", "9", "-j", "1", "-o", "jsonl",
                             "--output-file", "out.jsonl"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while not any(p.suffix == ".part" for p in tmp_path.iterdir()):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert "out.jsonl" not in {p.name for p in tmp_path.iterdir()}
    (runs / "many.jsonl").write_text(json.dumps({"id": "x", "events": events}) + "\n")
    again = subprocess.run([*CLI, "grade", "runs", "--max", "99", "-q", "--output-file",
                            "out.jsonl"], cwd=tmp_path, capture_output=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "runs"]


def test_a_live_writers_part_file_is_never_removed(tmp_path: Path) -> None:
    """Two writers of one target: the second does not delete the first one's .part."""
    from maxrepeat.reporters._atomic import AtomicTextFile

    first = AtomicTextFile(str(tmp_path / "out.json"))
    first.write("first")
    with AtomicTextFile(str(tmp_path / "out.json")) as second:
        second.write("second")
    first.commit()
    assert (tmp_path / "out.json").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
