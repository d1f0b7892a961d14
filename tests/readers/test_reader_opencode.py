"""The ``opencode`` reader on databases recorded from the real OpenCode 1.18.33.

``tests/fixtures/opencode/``: ``loop-guarded.db``, a session the guard (``maxrepeat hook
install opencode``, the live preset) watched repeat one failing command: warned at the 4th
call (its note in the stored output), the 5th refused, the 6th refused and the session
aborted; ``parallel-refused-aborted.db``, a session run with a probe plug-in: a failing
command, a response of two parallel calls of which the plug-in refused the first before it
ran, then a call cut short by a session abort. Both were copied from the database OpenCode
wrote (SQLite's backup, which folds the write-ahead log in).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from maxrepeat import grade
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, TURN_START, Trajectory
from maxrepeat.readers import Source, detect, get_reader
from tests.conftest import FIXTURES

DIR = FIXTURES / "opencode"
LOOP = DIR / "loop-guarded.db"
PARALLEL = DIR / "parallel-refused-aborted.db"


def _read(source: Source) -> list[Trajectory | TrajectoryFormatError]:
    return list(get_reader("opencode").read(source))


def _one(path: Path) -> Trajectory:
    [traj] = _read(Source.from_path(path))
    assert isinstance(traj, Trajectory)
    return traj


def _steps(traj: Trajectory) -> list[list[tuple[str, object, object, object]]]:
    """Per turn: (name, arguments, result, success) of each call."""
    turns: list[list[tuple[str, object, object, object]]] = []
    results = {e.data.tool_call_id: e.data for e in traj.events if e.type == TOOL_RESULT}
    for e in traj.events:
        if e.type == TURN_START:
            turns.append([])
        elif e.type == TOOL_CALL:
            r = results.get(e.data.tool_call_id)
            turns[-1].append((e.data.tool_name or "", e.data.arguments,
                              r.result if r else None, r.success if r else None))
    return turns


def test_the_guarded_loop_reads_one_call_per_response() -> None:
    traj = _one(LOOP)
    turns = [t for t in _steps(traj) if t]
    assert len(turns) == 6 and all(len(t) == 1 for t in turns)
    args = {"command": "ls /nonexistent-x", "description": "look"}
    assert {(t[0][0], str(t[0][1])) for t in turns} == {("bash", str(args))}
    missing = "ls: cannot access '/nonexistent-x': No such file or directory\n"
    # the guard's warning was appended to the 4th output the model read; not the tool's
    assert [t[0][2] for t in turns[:4]] == [missing] * 4
    assert [t[0][3] for t in turns[:4]] == [False] * 4  # exit status 2
    refused, stopped = turns[4][0], turns[5][0]
    assert str(refused[2]).startswith("maxrepeat loop guard (blocked)") and refused[3] is False
    # the stop refused the 6th call and aborted the session: the abort marked it
    assert stopped[2:] == ("Tool execution aborted", False)
    assert traj.metadata["session_id"].startswith("ses_")


def test_grade_fails_the_loop_where_the_guard_spoke() -> None:
    result = grade(_one(LOOP), MaxRepeatConfig.preset("live"))
    assert result.failed and result.occurrences == 6


def test_parallel_calls_share_a_step_and_errors_are_kept() -> None:
    turns = [t for t in _steps(_one(PARALLEL)) if t]
    assert [len(t) for t in turns] == [1, 2, 1]
    assert turns[0][0][3] is False  # ls of a missing path: exit status 2
    (refused, ok), second = (turns[1][0][2:], turns[1][0][3]), turns[1][1]
    assert refused == ("refused by probe", False) and ok is False
    # another plug-in's addition to an output is part of what the model read
    assert second[2] == "two\n\nPROBE-APPENDED" and second[3] is True
    assert turns[2][0][2:] == ("Tool execution aborted", False)


def test_bytes_without_a_path_read_the_same() -> None:
    from_bytes = _read(Source.from_bytes(PARALLEL.read_bytes(), "x.db"))
    assert [t.events for t in from_bytes if isinstance(t, Trajectory)] == \
        [_one(PARALLEL).events]


def test_bytes_of_a_database_in_wal_mode_read_the_same() -> None:
    # OpenCode keeps its database in write-ahead-log mode: a copy piped in says so in its
    # header (bytes 18-19), which an in-memory database cannot open as it is
    data = bytearray(PARALLEL.read_bytes())
    data[18:20] = b"\x02\x02"
    from_bytes = _read(Source.from_bytes(bytes(data), "-"))
    assert [t.events for t in from_bytes if isinstance(t, Trajectory)] == \
        [_one(PARALLEL).events]


def test_detected_by_its_content() -> None:
    assert detect(Source.from_path(LOOP)).name == "opencode"
    assert get_reader("opencode").sniff(b'{"type": "x"}', Source.from_bytes(b"")) == 0


def test_one_trajectory_per_session(tmp_path: Path) -> None:
    both = tmp_path / "both.db"
    with sqlite3.connect(both) as conn:
        for path in (LOOP, PARALLEL):
            conn.execute("ATTACH ? AS src", (str(path),))
            for table in ("session", "message", "part"):
                if path == LOOP:
                    conn.execute(f"CREATE TABLE {table} AS SELECT * FROM src.{table}")
                else:
                    conn.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
            conn.commit()
            conn.execute("DETACH src")
    trajs = _read(Source.from_path(both))
    assert len(trajs) == 2 and all(isinstance(t, Trajectory) for t in trajs)
    assert {t.source.rsplit("#session:", 1)[0] for t in trajs if isinstance(t, Trajectory)} \
        == {str(both)}
    assert sorted(len(t.events) for t in trajs if isinstance(t, Trajectory)) == sorted(
        [len(_one(LOOP).events), len(_one(PARALLEL).events)])


def test_a_database_that_is_not_opencode_is_an_error(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    [err] = _read(Source.from_path(other))
    assert isinstance(err, TrajectoryFormatError) and "not an OpenCode database" in str(err)
