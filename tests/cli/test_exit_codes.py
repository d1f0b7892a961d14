"""Exit 1 means "a loop was found": nothing else may end with it (issue 18, finding 8).
A full disk, a worker killed, an internal error and a reader that closes standard output
early all exit 2, with one line on standard error and no traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def loops(path: Path, records: int = 1, calls: int = 6) -> Path:
    events = [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i)}}
              for i in range(calls)]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(records):
            fh.write(json.dumps({"id": f"r{i}", "events": events}) + "\n")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 files of 3,000 looping trajectories, for the runs that are stopped midway: made
    once (~4 s of CPU) for the module's tests, which only read them."""
    runs = tmp_path_factory.mktemp("exit-codes") / "runs"
    runs.mkdir()
    for f in range(40):
        loops(runs / f"p{f:02d}.jsonl", records=3000, calls=20)
    return runs


def default_signal(sig: int) -> list[str]:
    """The CLI with ``sig``'s default action, whatever this process inherited (under nohup
    SIGHUP is ignored, and the child would rightly ignore it too). Set in the child's
    Python, not in a ``preexec_fn``, which can deadlock a process with threads (a
    pytest-xdist worker has them)."""
    return [sys.executable, "-c", (f"import signal; signal.signal({int(sig)}, signal.SIG_DFL)\n"
                                   "from maxrepeat.cli import main; main()")]


def test_a_full_disk_on_standard_output_exits_2(tmp_path: Path) -> None:
    run = loops(tmp_path / "run.jsonl")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*CLI, "grade", str(run), "--max", "2", "-o", "jsonl", "-q"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "No space left on device" in proc.stderr and "Traceback" not in proc.stderr


def test_an_internal_error_exits_2_and_says_so(tmp_path: Path) -> None:
    run = loops(tmp_path / "run.jsonl")
    code = ("import maxrepeat.core.summary as s\n"
            "def broken(self, *a, **k): raise ZeroDivisionError('boom')\n"
            "s.SummaryBuilder.build = broken\n"
            "from maxrepeat.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code, "grade", str(run), "--max", "2",
                           "-o", "jsonl"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "internal error: ZeroDivisionError: boom" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_closed_standard_output_is_not_a_pass(tmp_path: Path) -> None:
    """`grade … | head -c 100`: the report is cut short, so exit 2 (was 0)."""
    run = loops(tmp_path / "run.jsonl", records=20_000, calls=2)
    with subprocess.Popen([*CLI, "grade", str(run), "--max", "5", "-o", "jsonl", "-j", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(100)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 2, err
    assert "closed before the report was complete" in err and "Traceback" not in err


def test_a_killed_worker_exits_2(runs: Path) -> None:
    proc = subprocess.Popen([*CLI, "grade", str(runs), "--max", "50", "-o", "jsonl", "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    with proc:
        deadline = time.monotonic() + 30
        workers: list[int] = []
        while not workers:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
            out = subprocess.run(["ps", "-o", "pid=,ppid=,args=", "-g", str(proc.pid)],
                                 capture_output=True, text=True).stdout
            # workers are children of the forkserver, itself a child of the main process
            workers = [int(line.split()[0]) for line in out.splitlines()
                       if int(line.split()[1]) not in (proc.pid, 1)
                       and int(line.split()[0]) != proc.pid]
        os.kill(workers[0], signal.SIGKILL)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 2, err
        assert "Traceback" not in err


def _group(pgid: int) -> list[str]:
    out = subprocess.run(["ps", "-o", "pid=,args=", "-g", str(pgid)], capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_killing_the_main_process_leaves_no_worker_running(runs: Path, sig: int) -> None:
    """Finding 12: the workers (children of the forkserver) watch the process that started
    them and end when it is gone; then the forkserver and resource tracker end too."""
    cli = CLI if sig == signal.SIGKILL else default_signal(sig)
    proc = subprocess.Popen([*cli, "grade", str(runs), "--max", "50", "-o", "jsonl", "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(_group(proc.pid)) < 4:  # main, tracker, forkserver, a worker
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _group(proc.pid) == []
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()  # reaped here, not warned about by a later test's garbage collection


def test_ctrl_c_prints_no_leaked_semaphore_warning(runs: Path) -> None:
    """Finding 12: the quick exit after Ctrl-C releases the pool's semaphores first, so
    the resource tracker has nothing to warn about."""
    proc = subprocess.Popen([*default_signal(signal.SIGINT), "grade", str(runs), "--max", "50",
                             "-o", "jsonl", "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    with proc:
        deadline = time.monotonic() + 30
        while len(_group(proc.pid)) < 4:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
        time.sleep(2.0)  # the workers are busy: their queues hold semaphores
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 130, err
    deadline = time.monotonic() + 10
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "leaked" not in err and "Traceback" not in err, err
