"""The ``pi`` reader on session logs the real Pi 0.73.1 wrote (tests/fixtures/pi/, from
``pi -p`` against the scripted model of tests/pi_harness.py):

* ``parallel-errors.jsonl``: a failing command, a good one, then one response with two
  calls run in parallel (one failing), then a final text;
* ``guarded-loop.jsonl``: the same failing command again and again with the guard
  installed (``maxrepeat hook install pi``): the 4th result carries the guard's warning
  (the tool's own result kept in ``details.maxrepeatGuard``), the 5th call was refused
  and the 6th refused and the run aborted (an empty ``aborted`` response ends the log).
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

PI = FIXTURES / "pi"
ERR = ("ls: cannot access '/nonexistent-maxrepeat': No such file or directory\n\n\n"
       "Command exited with code 2")


def _read(path: Path) -> Trajectory:
    [traj] = list(read_trajectories(path, format="pi"))
    return traj


def test_parallel_calls_are_one_step_and_errors_are_kept() -> None:
    traj = _read(PI / "parallel-errors.jsonl")
    assert command_steps(traj) == [["ls /nonexistent-x"], ["echo hi"], ["echo a", "ls /nope"]]
    results = [(e.data.result, e.data.success) for e in traj.events if e.type == TOOL_RESULT]
    assert results[1:3] == [("hi\n", True), ("a\n", True)]
    assert [ok for _, ok in results] == [False, True, True, False]
    assert results[0][0].endswith("Command exited with code 2")
    assert traj.metadata["session_id"] == "01a233f8-4955-70ad-866a-a169d1193a40"
    assert traj.format == "pi"


def test_guard_words_are_taken_off_and_refusals_kept() -> None:
    traj = _read(PI / "guarded-loop.jsonl")
    assert command_steps(traj) == [["ls /nonexistent-maxrepeat"]] * 6
    results = [(e.data.result, e.data.success) for e in traj.events if e.type == TOOL_RESULT]
    # the warned call grades as the tool answered (the log's content holds the warning)
    assert results[:4] == [(ERR, False)] * 4
    raw = [json.loads(x) for x in (PI / "guarded-loop.jsonl").read_text().splitlines()]
    warned = [r for r in raw if r.get("message", {}).get("details", {}).get("maxrepeatGuard")]
    assert len(warned) == 1 and "maxrepeat loop guard (warning)" in json.dumps(warned[0])
    assert results[4][0].startswith("maxrepeat loop guard (blocked)") and not results[4][1]
    assert results[5][0].startswith("maxrepeat loop guard (stopped)") and not results[5][1]


def test_grade_reads_the_finished_session() -> None:
    live = MaxRepeatConfig(3, max_cycle_period=3, match="name-args")
    assert grade(_read(PI / "guarded-loop.jsonl"), live).failed
    assert not grade(_read(PI / "parallel-errors.jsonl"), live).failed


def test_sniffing_finds_pi() -> None:
    for path in sorted(PI.glob("*.jsonl")):
        assert detect(Source.from_path(str(path))).name == "pi", path
    assert get_reader("pi").sniff(b'{"type":"session.start"}', Source.from_bytes(b"")) == 0


def test_resumed_conversion_equals_one_full_read_at_every_cut() -> None:
    for path in sorted(PI.glob("*.jsonl")):
        check_resumed_at_every_cut("pi", path)


def test_a_cut_last_line_is_reported_and_the_rest_graded() -> None:
    data = (PI / "parallel-errors.jsonl").read_bytes()
    items = list(get_reader("pi").read(Source.from_bytes(data[:-40], "cut.jsonl")))
    trajs = [t for t in items if isinstance(t, Trajectory)]
    assert len(items) == 2 and len(trajs) == 1
    assert len(command_steps(trajs[0])) == 3
