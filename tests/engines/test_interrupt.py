"""Interruption and output safety (issue 8, item 5): Ctrl-C stops a batch promptly with a
partial summary and exit 130; ``--output-file`` is written whole or not at all."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def make_batch(directory: Path, files: int, records: int) -> None:
    """``files`` JSONL files of ``records`` trajectories with 20 calls each."""
    directory.mkdir(exist_ok=True)
    events = []
    for k in range(20):
        events += [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": f"c{k}",
                                                  "arguments": {"command": "ls " * k}}},
                   {"type": "tool_result", "data": {"toolCallId": f"c{k}", "result": "ok"}}]
    for f in range(files):
        with (directory / f"part-{f:03d}.jsonl").open("w", encoding="utf-8") as fh:
            for i in range(records):
                fh.write(json.dumps({"id": f"run-{f}-{i}", "events": events}) + "\n")


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The batch the interrupted runs read: 60 files of 400 trajectories, made once (~3 s
    of CPU) for the module's tests, which only read it."""
    runs = tmp_path_factory.mktemp("interrupt") / "runs"
    make_batch(runs, files=60, records=400)
    return runs


#: the CLI with Ctrl-C, SIGTERM and SIGHUP acting as in a terminal's foreground job. A test
#: run started as a background job of a script inherits SIGINT ignored (under ``nohup``,
#: SIGHUP too), and the CLI leaves an ignored signal ignored (as ``nohup`` asks), so the
#: signal would never arrive. Reset in the child's Python, not in a ``preexec_fn``, which
#: can deadlock a process with threads (a pytest-xdist worker has them).
SIGNALLED_CLI = [sys.executable, "-c",
                 ("import signal\n"
                  "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):\n"
                  "    signal.signal(s, signal.SIG_DFL)\n"
                  "from maxrepeat.cli import main; main()")]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_promptly_prints_partial_summary_and_exits_130(
    tmp_path: Path, batch: Path, jobs: str
) -> None:
    """SIGINT to the process group (what a terminal sends) mid-batch: the workers are gone
    within seconds, complete result lines stay, the partial summary is printed, exit 130.
    "Within seconds" is measured against how long the run took to start, so that a
    machine busy with other work (pytest-xdist, other jobs) does not fail it: stopping
    takes at most 5 s or three times the start, never the rest of the batch."""
    out = tmp_path / "out.jsonl"
    with out.open("wb") as stdout:
        begun = time.monotonic()
        proc = subprocess.Popen([*SIGNALLED_CLI, "grade", str(batch), "--max", "2", "-j", jobs,
                                 "-o", "jsonl"], stdout=stdout, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            assert wait_for(lambda: out.stat().st_size > 0, 60), "no result before the signal"
            os.killpg(proc.pid, signal.SIGINT)
            sent = time.monotonic()
            prompt = max(5.0, 3 * (sent - begun))
            _, stderr = proc.communicate(timeout=4 * prompt)
            stopped = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()  # reap it and close its pipes (no ResourceWarning later)
    assert proc.returncode == 130, stderr.decode()
    assert stopped < prompt
    assert wait_for(lambda: not group_alive(proc.pid), prompt), "a worker outlived the interrupt"
    text = stderr.decode()
    assert "Traceback" not in text
    assert "(interrupted)" in text and "interrupted; partial summary" in text
    lines = out.read_text(encoding="utf-8").splitlines()
    assert 0 < len(lines) < 60 * 400
    assert all(json.loads(line)["status"] == "ok" for line in lines)  # no torn line
    found = re.search(r", (\d+) results?: ", text)  # "1 result" when stopped that early
    assert found, text
    counted = int(found.group(1))
    assert counted == len(lines)


def test_output_file_is_written_whole_with_no_temporary_left(tmp_path: Path) -> None:
    """--output-file writes the report, picks the format from the ending, leaves no temp."""
    make_batch(tmp_path / "runs", files=2, records=3)
    target = tmp_path / "reports" / "report.json"
    target.parent.mkdir()
    proc = subprocess.run([*CLI, "grade", str(tmp_path / "runs"), "--max", "2",
                           "--output-file", str(target)], capture_output=True, timeout=60)
    assert proc.returncode == 1, proc.stderr  # the generated runs loop
    assert proc.stdout == b""
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["summary"]["results"] == 6
    assert os.listdir(target.parent) == ["report.json"]


def _stopped_mid_run(batch: Path, target: Path, stop: Callable[[int], None]) -> tuple[int, str]:
    """``grade BATCH --output-file TARGET`` over a previous report there, ``stop(pid)`` once
    its temporary file exists (the run is its process group's leader): its exit and
    standard error, once it and its workers are gone. The previous report stays, alone
    in its folder (no temporary file left)."""
    target.parent.mkdir()
    target.write_text("previous report\n", encoding="utf-8")
    proc = subprocess.Popen([*SIGNALLED_CLI, "grade", str(batch), "--max", "2", "-j", "2",
                             "--output-file", str(target)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert wait_for(lambda: len(os.listdir(target.parent)) == 2, 30), "no temporary file"
        time.sleep(0.5)
        stop(proc.pid)
        _, stderr = proc.communicate(timeout=20)
        assert wait_for(lambda: not group_alive(proc.pid), 10), "workers outlived the run"
    finally:
        if proc.poll() is None or group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert target.read_text(encoding="utf-8") == "previous report\n"
    assert os.listdir(target.parent) == [target.name]
    return proc.returncode, stderr.decode()


def test_interrupted_run_leaves_the_previous_report_untouched(tmp_path: Path,
                                                              batch: Path) -> None:
    """Ctrl-C during a run with --output-file: the old report stays, no temporary file."""
    code, stderr = _stopped_mid_run(batch, tmp_path / "reports" / "report.jsonl",
                                    lambda pid: os.killpg(pid, signal.SIGINT))
    assert code == 130, stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("group", [False, True])
def test_sigterm_and_sighup_stop_as_ctrl_c_does(tmp_path: Path, batch: Path, signum: int,
                                               group: bool) -> None:
    """SIGTERM (``kill``, ``timeout``) or SIGHUP (a closed terminal), to the process or its
    whole group, mid-run with --output-file (issue 30, row 6): the old report stays, no
    ``.part`` file is left, the workers are gone and the exit is 128 + the signal."""
    code, stderr = _stopped_mid_run(batch, tmp_path / "reports" / "out.jsonl",
                                    lambda pid: (os.killpg if group else os.kill)(pid, signum))
    assert code == 128 + signum, stderr


def test_output_file_in_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    """An output file that cannot be created is refused up front with exit 2."""
    (tmp_path / "r.json").write_text('{"events": []}', encoding="utf-8")
    proc = subprocess.run([*CLI, "grade", str(tmp_path / "r.json"), "--max", "2",
                           "--output-file", str(tmp_path / "nope" / "out.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--output-file must be a file in a writable directory" in proc.stderr
