"""Hostile values (issue 18, findings 6, 7, 9 and the recursive values of 11): non-finite
numbers and look-alike objects never compare equal to each other, bytes never equal their
base64 text, numbers with thousands of digits grade, a value containing itself is a clear
error, and the grader's own bugs are labelled internal, never blamed on the file."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.core.canonical import canonical_bytes

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
SENTINELS = [{"$maxrepeat$nonfinite": "NaN"}, {"$maxrepeat$nonfinite": "Infinity"},
             {"$maxrepeat$nonfinite": "-Infinity"}, "NaN", "Infinity", None]


def alternating(a: Any, b: Any, match: str = "name-args") -> dict[str, Any]:
    """Four calls whose arguments alternate a, b: a loop only if a equals b."""
    events = []
    for i, value in enumerate([a, b, a, b]):
        events.append({"type": "tool_call", "data": {"toolName": "t", "toolCallId": str(i),
                                                     "arguments": value}})
        events.append({"type": "tool_result", "data": {"toolCallId": str(i), "result": value}})
    return {"id": "x", "events": events}


def verdicts(traj: dict[str, Any], match: str) -> tuple[Any, ...]:
    config = MaxRepeatConfig(1, match=match)
    result = grade(traj, config)
    monitor = Monitor(config)
    for event in traj["events"]:
        monitor.feed(event)
    live = monitor.result()
    assert (live.status, live.passed, live.evidence) == (result.status, result.passed,
                                                          result.evidence)
    return result.status, result.passed


@pytest.mark.parametrize("match", ["name-args", "observation"])
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("other", SENTINELS)
def test_non_finite_numbers_never_equal_look_alike_values(
        number: float, other: Any, match: str) -> None:
    assert canonical_bytes([number]) != canonical_bytes([other])
    assert verdicts(alternating([number], [other]), match) == ("ok", True)


def test_equal_doubles_stay_equal() -> None:
    """1e309 and 1e400 are the same double (infinity), as JSON.parse reads them."""
    raw = '{"id": "x", "events": [%s]}' % ", ".join(
        '{"type": "tool_call", "data": {"toolName": "t", "arguments": [%s]}}' % n
        for n in ("1e309", "1e400", "1e309"))
    from maxrepeat.readers.vally import read_one

    traj = read_one(raw.encode(), "x.json")
    assert grade(traj, MaxRepeatConfig(2, match="name-args")).metadata.occurrences == 3


def test_bytes_are_not_json_and_never_equal_their_base64() -> None:
    for match in ("name-args", "observation"):
        result = grade(alternating(b"hi", "aGk="), MaxRepeatConfig(1, match=match))
        assert result.status == "error"
        assert result.evidence.startswith("malformed value in trajectory: bytes is not a JSON")


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_a_value_containing_itself_is_a_clear_error(kind: str) -> None:
    value: Any = {} if kind == "dict" else []
    if kind == "dict":
        value["self"] = value
    else:
        value.append(value)
    for match in ("name-args", "observation"):
        traj = alternating(value, value)
        result = grade(traj, MaxRepeatConfig(1, match=match))
        assert result.status == "error" and "nested too deeply" in result.evidence
        monitor = Monitor(MaxRepeatConfig(1, match=match))
        for event in traj["events"]:
            monitor.feed(event)
        assert monitor.result().status == "error"


HUGE = "1" * 5000


def test_a_5000_digit_number_grades_everywhere(tmp_path: Path) -> None:
    """Valid JSON with a 5,000-digit number: graded (an infinity, as JSON.parse reads it)
    in a JSONL file split across workers, a single document and grade_record."""
    line = ('{"id": "r%d", "n": %s, "events": [' % (0, HUGE) + ", ".join(
        '{"type": "tool_call", "data": {"toolName": "t", "toolCallId": "%d", '
        '"arguments": {"n": %s}}}' % (i, HUGE) for i in range(3)) + "]}")
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(line.replace('"r0"', f'"r{i}"') for i in range(40)) + "\n")
    proc = subprocess.run([*CLI, "grade", str(path), "--max", "2", "--match", "name-args",
                           "-o", "jsonl", "-j", "2", "-q"], capture_output=True, text=True,
                          timeout=120, env={"MAXREPEAT_JSONL_CHUNK": "4096",
                                            **__import__("os").environ})
    assert "Traceback" not in proc.stderr
    results = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert len(results) == 40 and all(r["status"] == "ok" and not r["passed"] for r in results)
    single = tmp_path / "one.json"
    single.write_text(line)
    proc = subprocess.run([*CLI, "grade", str(single), "--max", "2", "--match", "name-args",
                           "-o", "jsonl", "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    from maxrepeat.engines.records import grade_record

    record = grade_record(json.loads(line, parse_int=lambda t: float(t) if len(t) > 4000
                                     else int(t)), MaxRepeatConfig(2, match="name-args"))
    assert record is not None


def test_a_grader_bug_is_labelled_internal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ValueError raised by maxrepeat's own code is not "malformed value in trajectory"."""
    import maxrepeat.core.grade as core_grade

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("a bug")

    monkeypatch.setattr(core_grade, "result_from_table", broken)
    result = grade(alternating(1, 2), MaxRepeatConfig(1))
    assert result.status == "error"
    assert result.evidence.startswith("internal error while grading: ValueError: a bug")


def test_a_5000_digit_number_in_a_split_jsonl_file(tmp_path: Path) -> None:
    """The batch engine splits a JSONL file into byte ranges (a small chunk here): every
    range with 5,000-digit numbers grades, none is an error or a traceback."""
    from maxrepeat.engines.batch import BatchGrader

    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        for i in range(30):
            events = [{"type": "tool_call", "data": {"toolName": "t", "toolCallId": str(k),
                                                     "arguments": {"n": "HUGE"}}}
                      for k in range(3)]
            fh.write(json.dumps({"id": f"r{i}", "events": events}).replace('"HUGE"', HUGE)
                     + "\n")
    batch = BatchGrader([str(path)], [MaxRepeatConfig(2, match="name-args")], jobs=1,
                        chunk=40_000)
    results = list(batch.results())
    assert batch.total > 1  # really split
    assert len(results) == 30
    assert all(r.status == "ok" and not r.passed for r in results)
