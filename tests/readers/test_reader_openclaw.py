"""The ``openclaw`` reader on a database the real OpenClaw 2026.9.6 wrote.

``tests/fixtures/openclaw/session.sqlite`` was recorded by ``openclaw agent exec`` driven by
the scripted model of ``tests/openclaw_harness.py`` (see the fixture folder's README): a
failing command, two commands in one response (parallel calls), the failing command
again, then a final text. The database is OpenClaw's own, copied with SQLite's backup.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, TURN_START, Trajectory
from maxrepeat.readers import Source, detect, get_reader
from maxrepeat.readers.openclaw import session_trajectory, tool_result
from tests.conftest import FIXTURES

DB = FIXTURES / "openclaw" / "session.sqlite"


def _one() -> Trajectory:
    items = list(get_reader("openclaw").read(Source(str(DB), str(DB))))
    assert len(items) == 1 and isinstance(items[0], Trajectory), items
    return items[0]


def test_detected_as_openclaw() -> None:
    assert detect(Source(str(DB), str(DB))).name == "openclaw"


def test_turns_calls_results_and_errors() -> None:
    events = _one().events
    turns = [e for e in events if e.type == TURN_START]
    calls = [e.data for e in events if e.type == TOOL_CALL]
    results = [e.data for e in events if e.type == TOOL_RESULT]
    assert len(turns) == 3  # one model response each; the parallel pair is one step
    assert [c.arguments["command"] for c in calls] == \
        ["ls /nonexistent", "echo a", "echo b", "ls /nonexistent"]
    assert {c.tool_name for c in calls} == {"exec"}
    assert [r.success for r in results] == [False, True, True, False]  # exit 2 kept
    assert "No such file" in results[0].result


def test_session_trajectory_reads_one_session() -> None:
    sid = _one().metadata["session_id"]
    assert session_trajectory(str(DB), sid).events == _one().events


def test_bytes_without_a_path(tmp_path: Path) -> None:
    data = DB.read_bytes()
    items = list(get_reader("openclaw").read(Source.from_bytes(data, "-")))
    assert isinstance(items[0], Trajectory) and items[0].events == _one().events


def test_not_an_agent_database(tmp_path: Path) -> None:
    other = tmp_path / "x.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (a)").connection.commit()
    assert get_reader("openclaw").sniff(other.read_bytes()[:4096], Source(str(other),
                                                                         str(other))) == 0


def test_guard_words_taken_off() -> None:
    own = {"content": [{"type": "text", "text": "out"}], "isError": False,
           "details": {"exitCode": 0}}
    shown = [{"type": "text", "text": "out"}, {"type": "text", "text": "loop warning"}]
    assert tool_result(shown, False, {"exitCode": 0, "maxrepeatGuard": own}) == ("out", True)
    assert tool_result([{"type": "text", "text": "no"}], False,
                       {"status": "blocked", "reason": "no"}) == ("no", False)
