"""Hostile shapes (issue 8, item 2): each is graded, or refused with a clear error, within
bounded time and memory. Inputs are generated in temporary directories; the big ones run
through the real CLI in a subprocess so that time and peak memory are measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.core.events import Trajectory
from maxrepeat.readers import Source, read_source
from maxrepeat.reporters import get_reporter
from tests.conftest import call, result, turn

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
MB = 1 << 20


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float

    def results(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def run_cli(*args: str, timeout: float = 120) -> Run:
    """Run ``maxrepeat`` and measure its wall time and peak resident memory."""
    out_path = Path(os.environ.get("TMPDIR", "/tmp"))
    with open(os.devnull, "rb") as stdin, \
            _tempfile(out_path) as out, _tempfile(out_path) as err:
        start = time.monotonic()
        proc = subprocess.Popen([*CLI, *args], stdin=stdin, stdout=out, stderr=err)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, out.read().decode("utf-8"), err.read().decode("utf-8"),
                   seconds, usage.ru_maxrss / 1024)


def _tempfile(where: Path) -> Any:
    import tempfile

    return tempfile.TemporaryFile(dir=where)


def items_of(path: Path) -> list[Trajectory | TrajectoryFormatError]:
    return list(read_source(Source.from_path(str(path))))


def write_events(path: Path, events: list[dict[str, Any]], **extra: Any) -> Path:
    path.write_text(json.dumps({"id": path.stem, **extra, "events": events}), encoding="utf-8")
    return path


def three_same(name: str = "bash", value: Any = "ok") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i in range(3):
        events += turn(call(name, f"c{i}", {"command": "ls"}), result(f"c{i}", value))
    return events


# -- big shapes, through the CLI -----------------------------------------------------------

@pytest.mark.slow
def test_100_mb_tool_result_is_graded(tmp_path: Path) -> None:
    """One 100 MB tool result is graded in seconds, with memory a small multiple of it."""
    path = tmp_path / "big.json"
    with path.open("wb") as fh:
        fh.write(b'{"id":"big","events":[{"type":"tool_call","data":{"toolName":"cat",'
                 b'"toolCallId":"1"}},{"type":"tool_result","data":{"toolCallId":"1",'
                 b'"result":"')
        chunk = b"y" * MB
        for _ in range(100):
            fh.write(chunk)
        fh.write(b'"}}]}')
    run = run_cli("grade", str(path), "--max", "1", "-o", "jsonl", "-q")
    assert run.code == 0, run.stderr
    [res] = run.results()
    assert res["status"] == "ok" and res["passed"]
    assert len(run.stdout) < 4096  # the result is previewed, never echoed
    assert run.seconds < 60
    assert run.peak_mb < 1200


@pytest.mark.slow
def test_one_million_parallel_calls_in_one_turn_are_graded(tmp_path: Path) -> None:
    """A turn of 1,000,000 parallel calls is one step: graded, with a bounded preview."""
    path = tmp_path / "wide.json"
    with path.open("wb") as fh:
        fh.write(b'{"id":"wide","events":[{"type":"turn_start","data":{}}')
        piece = b',{"type":"tool_call","data":{"toolName":"b","toolCallId":"%d"}}'
        fh.write(b"".join(piece % i for i in range(1_000_000)))
        fh.write(b',{"type":"turn_end","data":{}}]}')
    run = run_cli("grade", str(path), "--max", "1", "--match", "name", "-o", "jsonl", "-q")
    assert run.code == 0, run.stderr
    [res] = run.results()
    assert res["metadata"]["watchedSteps"] == 1
    assert res["metadata"]["watchedCalls"] == 1_000_000
    assert len(run.stdout) < 8192
    assert run.seconds < 90
    assert run.peak_mb < 2000


def test_arguments_nested_100000_levels_are_refused_clearly(tmp_path: Path) -> None:
    """Arguments nested 100,000 levels deep give an error result naming the file."""
    path = tmp_path / "deep.json"
    depth = 100_000
    path.write_bytes(b'{"events":[{"type":"tool_call","data":{"toolName":"x","arguments":'
                     + b'{"a":' * depth + b"1" + b"}" * depth + b"}}]}")
    run = run_cli("grade", str(path), "--max", "1", "-o", "jsonl", "-q", timeout=60)
    assert run.code == 2
    [res] = run.results()
    assert res["status"] == "error"
    assert res["evidence"].startswith(str(path)) and "nested too deeply" in res["evidence"]
    assert run.seconds < 30


def test_one_megabyte_tool_name_is_matched_in_linear_time(tmp_path: Path) -> None:
    """A 1 MB tool name against patterns quadratic in `re` (.*_x, (a|aa)+$) is quick."""
    path = write_events(tmp_path / "name.json", three_same("a" * MB))
    run = run_cli("grade", str(path), "--max", "1", "--tools", ".*_x", "--tools", "(a|aa)+$",
                  "-o", "jsonl", "-q", timeout=60)
    assert run.code == 1, run.stderr
    [res] = run.results()
    assert res["metadata"]["occurrences"] == 3
    assert len(res["evidence"]) < 1000
    assert run.seconds < 20


# -- encodings and JSON corner cases -------------------------------------------------------

def test_non_utf8_bytes_give_an_error_with_line_and_column(tmp_path: Path) -> None:
    """Invalid UTF-8 is refused with the file, line, column and the offending byte."""
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"events": [\n {"type": "tool_call", "data": {"toolName": "caf\xe9"}}]}')
    [item] = items_of(path)
    assert isinstance(item, TrajectoryFormatError)
    assert str(item) == f"{path}:2:49: not UTF-8: invalid byte 0xe9"


def test_utf8_bom_is_accepted_in_json_and_jsonl(tmp_path: Path) -> None:
    """A leading UTF-8 byte order mark is skipped, in a JSON document and in JSONL."""
    doc = json.dumps({"events": three_same()}).encode()
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + doc)
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + doc + b"\n" + doc + b"\n")
    for name, count in (("bom.json", 1), ("bom.jsonl", 2)):
        items = items_of(tmp_path / name)
        assert len(items) == count and all(isinstance(t, Trajectory) for t in items)
        assert all(grade(t, MaxRepeatConfig(2)).metadata.occurrences == 3 for t in items)


def test_empty_file_is_an_error_result_and_exit_2(tmp_path: Path) -> None:
    """An empty file is named as such; the CLI gives an error result and exits 2."""
    path = tmp_path / "empty.json"
    path.write_bytes(b"")
    run = run_cli("grade", str(path), "--max", "1", "-o", "jsonl", "-q")
    assert run.code == 2
    [res] = run.results()
    assert res["status"] == "error" and res["trajectory"] == str(path)
    assert "empty file" in res["evidence"]


def test_nan_and_infinity_are_read_leniently_and_marked(tmp_path: Path) -> None:
    """NaN and Infinity (not JSON) are read leniently; results say metadata.lenient."""
    path = tmp_path / "nan.json"
    events = ('[{"type":"tool_call","data":{"toolName":"t","toolCallId":"%d","arguments":NaN}},'
              '{"type":"tool_result","data":{"toolCallId":"%d","result":Infinity}}]')
    body = ",".join(events % (i, i) for i in range(3)).replace("],[", ",")
    path.write_text('{"events":' + body + "}", encoding="ascii")
    [traj] = items_of(path)
    assert isinstance(traj, Trajectory) and traj.lenient
    res = grade(traj, MaxRepeatConfig(2, match="name-args"))
    assert res.status == "ok" and res.metadata.lenient
    assert res.metadata.occurrences == 3  # NaN equals NaN for the grader: a real loop
    get_reporter("jsonl").line(res).encode("utf-8")


def test_lone_surrogates_are_graded_and_written_as_valid_utf8(tmp_path: Path) -> None:
    """Lone surrogate escapes in ids, names and values grade, and every report is UTF-8."""
    path = tmp_path / "sur.json"
    path.write_text(json.dumps({"id": "run-\ud800", "events": three_same("x\udc00", "\ud83d")}),
                    encoding="ascii")
    [traj] = items_of(path)
    assert isinstance(traj, Trajectory)
    res = grade(traj, MaxRepeatConfig(2))
    assert res.status == "ok" and res.metadata.occurrences == 3
    assert res.trajectory == "run-\\ud800"
    assert res.metadata.pattern_tools == ("x\\udc00",)
    from maxrepeat.core.summary import summarize

    for name in ("json", "jsonl"):
        get_reporter(name).render([res], summarize([res])).encode("utf-8")


def test_duplicate_json_keys_last_one_wins_on_every_path(tmp_path: Path) -> None:
    """With duplicate keys the last value counts (as JSON.parse does), fast path or not."""
    fast = tmp_path / "dup.json"
    fast.write_text('{"events":[' + ",".join(
        '{"type":"tool_call","data":{"toolName":"a","toolName":"b","toolCallId":"%d"}}' % i
        for i in range(3)) + "]}", encoding="utf-8")
    slow = tmp_path / "dup-lenient.json"  # NaN forces the checked dict path
    slow.write_text(fast.read_text().replace('"toolCallId":"0"', '"toolCallId":"0","x":NaN'),
                    encoding="utf-8")
    for path in (fast, slow):
        [traj] = items_of(path)
        assert isinstance(traj, Trajectory)
        res = grade(traj, MaxRepeatConfig(2, match="name", tools=["^b$"]))
        assert res.metadata.occurrences == 3, path


def test_jsonl_with_a_cut_last_line_grades_the_complete_lines(tmp_path: Path) -> None:
    """A JSONL file cut mid-line: the complete lines are graded, the cut one is an error
    at its line and column that says the input ends early."""
    line = json.dumps({"events": three_same()})
    path = tmp_path / "cut.jsonl"
    path.write_text(line + "\n" + line + "\n" + line[: len(line) // 2], encoding="utf-8")
    run = run_cli("grade", str(path), "--max", "2", "-o", "jsonl", "-q")
    assert run.code == 2
    first, second, cut = run.results()
    assert [first["trajectory"], second["trajectory"]] == [f"{path}:1", f"{path}:2"]
    assert first["status"] == second["status"] == "ok" and not first["passed"]
    assert cut["status"] == "error"
    assert cut["evidence"].startswith(f"{path}:3:")
    assert "truncated?" in cut["evidence"]
