"""The ``cline`` reader on a session the real Cline CLI 3.0.65 wrote.

``tests/fixtures/cline/loop.messages.json`` is the ``<id>.messages.json`` a ``cline -y``
run left in its data folder (``~/.cline/data/sessions/<id>/``), driven by the scripted
model of ``tests/cline_harness.py``: three failing ``ls missing-dir``, one response with
two parallel calls (``echo a`` and a ``read_files`` of a missing file), the ``ls`` again,
a ``submit_and_exit`` Cline rejected (``is_error``: its summary too short), a text answer,
then an accepted ``submit_and_exit``. Recorded with ``ChatModel`` and ``run_cline``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, TURN_START, Trajectory
from maxrepeat.readers import Source, detect, get_reader
from maxrepeat.readers.cline import persisted, tool_result
from tests.conftest import FIXTURES

LOG = FIXTURES / "cline" / "loop.messages.json"


def _read(path: Path) -> Trajectory:
    items = list(get_reader("cline").read(Source.from_path(str(path))))
    assert len(items) == 1 and isinstance(items[0], Trajectory), items
    return items[0]


def test_detected_as_cline() -> None:
    assert detect(Source.from_path(str(LOG))).name == "cline"


def test_one_turn_per_response_parallel_calls_one_step() -> None:
    traj = _read(LOG)
    turns: list[list[str]] = []
    for e in traj.events:
        if e.type == TURN_START:
            turns.append([])
        elif e.type == TOOL_CALL:
            turns[-1].append(e.data.tool_name)
    assert turns == [["run_commands"]] * 3 + [["run_commands", "read_files"],
                                              ["run_commands"], ["submit_and_exit"],
                                              ["submit_and_exit"]]
    assert traj.id == "1796168933150_2llg1" and traj.metadata["agent_version"] == "3.0.65"


def test_errors_are_kept() -> None:
    results = {e.data.tool_call_id: e.data for e in _read(LOG).events if e.type == TOOL_RESULT}
    assert [results[c].success for c in ("call_0_0", "call_3_0", "call_3_1", "call_5_0",
                                         "call_7_0")] == [False, True, False, False, True]
    assert "Too small" in results["call_5_0"].result
    assert results["call_0_0"].result[0]["query"] == "ls missing-dir"


def test_prompt_reminders_and_text_answers_are_not_steps() -> None:
    doc = json.loads(LOG.read_text(encoding="utf-8"))
    texts = sum(1 for m in doc["messages"] if all(b["type"] == "text" for b in m["content"]))
    assert texts >= 3  # the prompt, a [SYSTEM] reminder, the text answer
    assert sum(1 for e in _read(LOG).events if e.type == TURN_START) == 7


def test_grade_reads_the_finished_session() -> None:
    exe = Path(sys.executable).parent / "maxrepeat"
    live = subprocess.run([str(exe), "grade", str(LOG), "--preset", "live"],
                          capture_output=True, text=True, timeout=60)
    assert live.returncode == 0, live.stdout + live.stderr  # 3 in a row: at most 3
    tight = subprocess.run([str(exe), "grade", str(LOG), "--preset", "live", "--max", "2"],
                           capture_output=True, text=True, timeout=60)
    assert tight.returncode == 1, tight.stdout + tight.stderr
    assert "ls missing-dir" in tight.stdout


def test_a_call_without_result_and_a_bad_log(tmp_path: Path) -> None:
    doc = json.loads(LOG.read_text(encoding="utf-8"))
    doc["messages"] = doc["messages"][:3]  # cut after the first call (a hook's cancel)
    cut = tmp_path / "cut.messages.json"
    cut.write_text(json.dumps(doc), encoding="utf-8")
    assert [e.type for e in _read(cut).events] == ["turn_start", "tool_call", "turn_end"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"updated_at": 1, "sessionId": "x", "origin": {}, "messages": 3}',
                   encoding="utf-8")
    items = list(get_reader("cline").read(Source.from_path(str(bad))))
    assert len(items) == 1 and not isinstance(items[0], Trajectory)


def test_result_helpers_match_the_log() -> None:
    assert persisted({"error": "x"}) == '{"error":"x"}'
    assert tool_result("ok", None) == ("ok", True)
    assert tool_result("{}", True) == ("{}", False)
