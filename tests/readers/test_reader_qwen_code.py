"""The ``qwen-code`` reader on chat recordings the real Qwen Code 0.24.4 wrote
(tests/fixtures/qwen-code/, from ``qwen -p --yolo`` against the scripted Chat Completions
model of tests/scripted_chat.py):

* ``parallel-errors.jsonl``: a failing command, a good one, then one response with two
  calls run in parallel (one failing), then a final text;
* ``guarded-loop.jsonl``: the same failing command again and again (its description
  reworded each time) with the guard installed (``maxrepeat hook install qwen-code``):
  the 4th result carries the guard's warning (appended by Qwen Code after a blank line),
  the 5th call was refused before it ran, the 6th and 7th refused as stops.
"""

from __future__ import annotations

import json
from pathlib import Path

from maxrepeat import grade, read_trajectories
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_RESULT, Trajectory
from maxrepeat.readers import Source, detect, get_reader
from tests.conftest import FIXTURES
from tests.reader_checks import check_resumed_at_every_cut, command_steps

QWEN = FIXTURES / "qwen-code"
ERR = ("Command: ls /nonexistent-maxrepeat\nDirectory: (root)\nOutput: ls: cannot access "
       "'/nonexistent-maxrepeat': No such file or directory\nError: (none)\nExit Code: 2\n"
       "Signal: (none)")


def _read(path: Path) -> Trajectory:
    [traj] = list(read_trajectories(path, format="qwen-code"))
    return traj


def _results(traj: Trajectory) -> list[tuple[object, bool]]:
    return [(e.data.result, e.data.success) for e in traj.events if e.type == TOOL_RESULT]


def test_parallel_calls_are_one_step_and_errors_are_kept() -> None:
    traj = _read(QWEN / "parallel-errors.jsonl")
    assert command_steps(traj) == [["ls /nonexistent-qw"], ["echo one"],
                            ["echo two", "ls /nonexistent-qw"]]
    results = _results(traj)
    assert [ok for _, ok in results] == [False, True, True, False]
    assert results[1][0] == ("Command: echo one\nDirectory: (root)\nOutput: one\n"
                             "Error: (none)\nExit Code: 0\nSignal: (none)")
    assert results[0] == results[3] and "Exit Code: 2" in str(results[0][0])
    assert traj.metadata["session_id"] == "73db9bf3-681d-4b5d-81e8-f9535f0b9a7d"
    assert traj.format == "qwen-code"


def test_guard_words_are_taken_off_and_refusals_kept() -> None:
    traj = _read(QWEN / "guarded-loop.jsonl")
    assert command_steps(traj) == [["ls /nonexistent-maxrepeat"]] * 7
    results = _results(traj)
    # the warned call grades as the tool answered (the log's result holds the warning)
    assert results[:4] == [(ERR, False)] * 4
    raw = [json.loads(x) for x in (QWEN / "guarded-loop.jsonl").read_text().splitlines()]
    warned = [r for r in raw if r["type"] == "tool_result"
              and "maxrepeat loop guard (warning)" in json.dumps(r["message"])]
    assert len(warned) == 1
    assert str(results[4][0]).startswith("maxrepeat loop guard (blocked)") and not results[4][1]
    for text, ok in results[5:]:
        assert str(text).startswith("maxrepeat loop guard (stopped)") and not ok


def test_grade_reads_the_finished_session() -> None:
    live = MaxRepeatConfig.preset("live")
    assert grade(_read(QWEN / "guarded-loop.jsonl"), live).failed
    assert not grade(_read(QWEN / "parallel-errors.jsonl"), live).failed


def test_sniffing_finds_qwen_code_not_claude_code() -> None:
    for path in sorted(QWEN.glob("*.jsonl")):
        assert detect(Source.from_path(str(path))).name == "qwen-code", path
    sniff = get_reader("qwen-code").sniff
    assert sniff(b'{"type":"user","sessionId":"s","parentUuid":null,"message":{"role":'
                 b'"user","content":"hi"}}', Source.from_bytes(b"")) == 0


def test_resumed_conversion_equals_one_full_read_at_every_cut() -> None:
    for path in sorted(QWEN.glob("*.jsonl")):
        check_resumed_at_every_cut("qwen-code", path)


def test_a_cut_last_line_is_reported_and_the_rest_graded() -> None:
    data = (QWEN / "parallel-errors.jsonl").read_bytes()
    items = list(get_reader("qwen-code").read(Source.from_bytes(data[:-40], "cut.jsonl")))
    trajs = [t for t in items if isinstance(t, Trajectory)]
    assert len(items) == 2 and len(trajs) == 1
    assert len(command_steps(trajs[0])) == 3
