"""The claude-code reader: own fixtures with expected events, and the real corpus files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import maxrepeat
from maxrepeat import MaxRepeatConfig, Trajectory, TrajectoryFormatError, grade
from maxrepeat.core.events import event_to_dict
from maxrepeat.readers import Source, detect, read_source
from tests.conftest import CORPUS, ROOT, UPDATE_GOLDEN, needs_corpus, rewrite_golden

GOLDEN = ROOT / "tests" / "golden" / "corpus_claude-code.json"
GOLDEN_CONFIG: dict[str, Any] = {"max": 1, "max_cycle_period": 2, "match": "name-args"}
FILES = sorted((CORPUS / "claude-code").glob("*.jsonl")) if CORPUS.is_dir() else []


def _assistant(uuid: str, mid: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    rec = {"type": "assistant", "uuid": uuid, "sessionId": "S", "parentUuid": None,
           "isSidechain": False, "message": {"id": mid, "role": "assistant",
                                             "content": list(blocks)}}
    rec.update(extra)
    return rec


def _use(cid: str, name: str = "Bash", **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": inp}


def _user(uuid: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    rec = {"type": "user", "uuid": uuid, "sessionId": "S", "isSidechain": False,
           "message": {"role": "user", "content": list(blocks)}}
    rec.update(extra)
    return rec


def _res(cid: str, content: Any, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": cid, "content": content}
    if error:
        block["is_error"] = True
    return block


def _read(tmp_path: Path, records: list[dict[str, Any]], name: str = "s.jsonl") -> list[Any]:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return list(read_source(Source.from_path(path)))


def _events(traj: Any) -> list[dict[str, Any]]:
    return [event_to_dict(e) for e in traj.events]


SESSION: list[dict[str, Any]] = [
    {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
    {"type": "progress", "uuid": "p0", "sessionId": "S", "parentUuid": None, "data": {}},
    _user("u0", {"type": "text", "text": "list files"}),
    _assistant("a1", "msg_1", {"type": "thinking", "thinking": "hm"}),
    _assistant("a2", "msg_1", _use("t1", command="ls")),
    _assistant("a3", "msg_1", _use("t2", "Read", file_path="a.txt")),
    _user("u1", _res("t1", "a.txt")),
    _user("u2", _res("t2", [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}])),
    {"type": "system", "subtype": "stop_hook_summary", "uuid": "s1", "sessionId": "S"},
    _assistant("a4", "msg_2", _use("t3", command="false")),
    _user("u3", _res("t3", "Exit code 1", error=True)),
    _assistant("a2", "msg_1", _use("t1", command="ls")),  # a copied record: same uuid
    {"type": "queue-operation", "operation": "enqueue", "sessionId": "S"},
]


def test_one_message_id_is_one_turn(tmp_path: Path) -> None:
    """Lines sharing message.id form one turn; results stay in it; the next id opens the next."""
    (traj,) = _read(tmp_path, SESSION)
    assert traj.id == "S" and traj.format == "claude-code"
    assert _events(traj) == [
        {"type": "turn_start", "data": {"turnId": "msg_1"}},
        {"type": "tool_call", "data": {"toolName": "Bash", "toolCallId": "t1",
                                       "arguments": {"command": "ls"}}},
        {"type": "tool_call", "data": {"toolName": "Read", "toolCallId": "t2",
                                       "arguments": {"file_path": "a.txt"}}},
        {"type": "tool_result", "data": {"toolCallId": "t1", "result": "a.txt",
                                         "success": True}},
        {"type": "tool_result", "data": {"toolCallId": "t2", "result": "one\ntwo",
                                         "success": True}},
        {"type": "turn_end", "data": {}},
        {"type": "turn_start", "data": {"turnId": "msg_2"}},
        {"type": "tool_call", "data": {"toolName": "Bash", "toolCallId": "t3",
                                       "arguments": {"command": "false"}}},
        {"type": "tool_result", "data": {"toolCallId": "t3", "result": "Exit code 1",
                                         "success": False}},
        {"type": "turn_end", "data": {}},
    ]


def test_parallel_calls_of_one_response_are_one_step(tmp_path: Path) -> None:
    """Two identical parallel calls in one response are one step, never a loop."""
    records = [_assistant("a1", "m1", _use("t1", command="ls")),
               _assistant("a2", "m1", _use("t2", command="ls")),
               _user("u1", _res("t1", "x")), _user("u2", _res("t2", "x"))]
    (traj,) = _read(tmp_path, records)
    result = grade(traj, MaxRepeatConfig(max=1, match="name-args"))
    assert result.metadata.watched_steps == 1 and result.passed


def test_sidechain_records_are_their_own_trajectory(tmp_path: Path) -> None:
    """Inline subagent records (isSidechain) become a second trajectory named after the agent."""
    side = _assistant("b1", "m9", _use("t9", "WebFetch", url="u"), isSidechain=True,
                      agentId="a77")
    (main, sub) = _read(tmp_path, [*SESSION[:7], side])
    assert main.id == "S" and sub.id == "S/agent-a77"
    assert [e["data"].get("toolName") for e in _events(sub) if e["type"] == "tool_call"] == [
        "WebFetch"]
    assert sub.source.endswith("#agent-a77")


def test_stream_json_output_is_read(tmp_path: Path) -> None:
    """`claude -p --output-format stream-json` lines give the same events."""
    records: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": "Z", "tools": ["Bash"]},
        {"type": "assistant", "session_id": "Z", "parent_tool_use_id": None,
         "message": {"id": "m1", "content": [_use("t1", command="ls")]}},
        {"type": "user", "session_id": "Z", "parent_tool_use_id": None,
         "message": {"role": "user", "content": [_res("t1", "a.txt")]}},
        {"type": "result", "subtype": "success", "session_id": "Z", "result": "done"},
    ]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert detect(Source.from_path(path)).name == "claude-code"
    (traj,) = list(read_source(Source.from_path(path)))
    assert isinstance(traj, maxrepeat.Trajectory) and traj.id == "Z"
    assert [e["type"] for e in _events(traj)] == ["turn_start", "tool_call", "tool_result",
                                                   "turn_end"]


def test_detects_a_session_whose_head_is_only_progress(tmp_path: Path) -> None:
    """A head of progress and snapshot records is still recognised as Claude Code."""
    head = [{"type": "progress", "uuid": f"p{i}", "parentUuid": None, "sessionId": "S",
             "isSidechain": False, "data": {"pad": "x" * 2000}} for i in range(40)]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in head + SESSION), encoding="utf-8")
    assert detect(Source.from_path(path)).name == "claude-code"


def test_detects_a_session_whose_first_prompt_outgrows_the_head(tmp_path: Path) -> None:
    """A first prompt longer than the detection head (2.x writes sessionId after message)
    is still read as Claude Code from the record's opening keys."""
    pasted = "a line of a pasted build log\n" * 4000
    first = {"parentUuid": None, "isSidechain": False, "promptId": "q1", "type": "user",
             "message": {"role": "user", "content": "why does the build fail?\n" + pasted},
             "uuid": "u0", "timestamp": "2026-02-01T08:00:00Z", "cwd": "/w", "sessionId": "S"}
    records = [first, _assistant("a1", "msg_1", _use("t1", command="make")),
               _user("u1", _res("t1", "make: ok"))]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert len(json.dumps(first)) > 64 * 1024
    assert detect(Source.from_path(path)).name == "claude-code"
    [traj] = list(read_source(Source.from_path(path)))
    assert [e["type"] for e in _events(traj)] == [
        "turn_start", "tool_call", "tool_result", "turn_end"]


def test_a_cut_last_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    """A cut-off last line yields a TrajectoryFormatError with the file and the line, and
    the session of the complete lines before it."""
    path = tmp_path / "s.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in SESSION[:4])
    path.write_text(text + '{"type": "assistant", "mess', encoding="utf-8")
    items = list(read_source(Source.from_path(path), "claude-code"))
    assert len(items) == 2 and isinstance(items[0], TrajectoryFormatError)
    assert f"{path}:5" in str(items[0])
    assert isinstance(items[1], Trajectory)


def test_a_broken_inner_line_is_an_error_and_no_session(tmp_path: Path) -> None:
    """A broken line with more lines after it yields only the error naming file and line."""
    path = tmp_path / "s.jsonl"
    lines = [json.dumps(r) + "\n" for r in SESSION[:4]]
    lines.insert(2, '{"type": "assistant", "mess\n')
    path.write_text("".join(lines), encoding="utf-8")
    items = list(read_source(Source.from_path(path), "claude-code"))
    assert len(items) == 1 and isinstance(items[0], TrajectoryFormatError)
    assert f"{path}:3" in str(items[0])


def test_a_file_without_records_gives_an_empty_trajectory(tmp_path: Path) -> None:
    """A session with no user or assistant record is one empty trajectory that passes."""
    (traj,) = _read(tmp_path, [SESSION[0], SESSION[1]])
    assert list(traj.events) == []
    assert grade(traj, MaxRepeatConfig(max=1)).passed


@needs_corpus
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_file_is_detected_and_read(path: Path) -> None:
    """Every corpus transcript is auto-detected as claude-code and read without error."""
    source = Source.from_path(path)
    assert detect(source).name == "claude-code"
    items = list(read_source(source))
    assert items and not any(isinstance(i, TrajectoryFormatError) for i in items)


def _figures() -> dict[str, Any]:
    cfg = MaxRepeatConfig(**GOLDEN_CONFIG)
    out: dict[str, Any] = {}
    for path in FILES:
        rel = path.relative_to(CORPUS).as_posix()
        out[rel] = [
            {"trajectory": r.trajectory, "occurrences": r.metadata.occurrences,
             "watchedCalls": r.metadata.watched_calls, "passed": r.passed}
            for r in (grade(t, cfg) for t in maxrepeat.read_trajectories(path))
        ]
    return out


@needs_corpus
def test_corpus_figures_match_the_golden_file() -> None:
    """The figure of every corpus transcript is the one pinned in the golden file."""
    got = {"config": GOLDEN_CONFIG, "files": _figures()}
    if UPDATE_GOLDEN or not GOLDEN.exists():
        rewrite_golden(GOLDEN, json.dumps(got, indent=1) + "\n")
    assert json.loads(GOLDEN.read_text(encoding="utf-8")) == got


def test_odd_records_are_skipped_not_fatal(tmp_path: Path) -> None:
    """A tool_use without a name, a result without an id and string content are skipped."""
    records = [
        _assistant("a1", "m1", {"type": "tool_use", "id": "t0", "input": {}},
                   _use("t1", command="ls")),
        _user("u1", {"type": "tool_result", "content": "orphan"}, _res("t1", None)),
        {"type": "assistant", "uuid": "a2", "sessionId": "S", "message": {"content": "hi"}},
    ]
    (traj,) = _read(tmp_path, records)
    calls = [e for e in _events(traj) if e["type"] in ("tool_call", "tool_result")]
    assert [(e["type"], e["data"]["toolCallId"]) for e in calls] == [
        ("tool_call", "t1"), ("tool_result", "t1")]
