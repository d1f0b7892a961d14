"""A report cut short by its reader (``| head``) has no verdict: exit 2 with one line,
whatever the output format, the number of workers and whether standard error shares the
pipe, and the process always ends (issue 29 item 1).

Each shape is run several times while two processes keep both cores busy: the hang that
was seen (the worker pool's exit-time join waiting for ever) came about once in fifteen
cut-short runs on a loaded machine, and the exit 1 (click's own broken-pipe exit) every
time standard error was the same pipe.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CLI = shlex.join([sys.executable, "-c", "from maxrepeat.cli import main; main()"])
MESSAGE = "maxrepeat: standard output was closed before the report was complete"

#: (what follows ``grade DIR --max 2``, where standard error goes)
SHAPES = [
    ("", "2>&1"),  # console (the default), in-process, stderr on the pipe
    ("-o jsonl -j 1", "2>&1"),
    ("-j 2", "2>&1"),  # worker processes, stderr on the pipe
    ("-o jsonl -j 2", "2>/dev/null"),
    ("-o junit -j 2", "2>&1"),  # a whole-document format, written at the end
    ("-j 2", "2>ERR"),  # the one line, read back from a file
]
RUNS = 3


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 looping trajectories, one file each (enough for a pool and a long report)."""
    root = tmp_path_factory.mktemp("cut") / "runs"
    root.mkdir()
    events = [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i),
                                             "arguments": {"command": "make"}}}
              for i in range(8)]
    for i in range(400):
        (root / f"r{i:03d}.json").write_text(json.dumps({"id": f"r{i}", "events": events}))
    return root


@pytest.fixture(scope="module")
def load() -> Iterator[None]:
    """Both cores kept busy while the runs are cut short."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(2)]
    try:
        yield
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize(("flags", "stderr"), SHAPES)
def test_a_cut_pipe_exits_2_every_time_and_never_hangs(
        runs: Path, load: None, tmp_path: Path, flags: str, stderr: str) -> None:
    err = tmp_path / "err.txt"
    redirect = stderr.replace("ERR", shlex.quote(str(err)))
    script = (f"{CLI} grade {shlex.quote(str(runs))} --max 2 {flags} {redirect} "
              "| head -2 >/dev/null; echo ${PIPESTATUS[0]}")
    for attempt in range(RUNS):
        started = time.monotonic()
        with subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as proc:
            try:
                out, errors = proc.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # the shell and the hung maxrepeat
                proc.communicate()
                pytest.fail(f"run {attempt + 1} of `{flags} {stderr} | head -2` did not "
                            "end in 90 s")
        code = out.strip()
        assert code == "2", (attempt, code, errors, time.monotonic() - started)
        if "ERR" in stderr:
            lines = err.read_text().splitlines()
            assert lines == [MESSAGE + " (the run was cut short: no verdict)"], lines
