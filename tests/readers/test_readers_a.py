"""Readers atif, codex, gemini-cli, copilot-cli and otel: fixtures written for this project
with their expected events, detection, error positions, and the shared helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.core.canonical import canonical_bytes
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.core.events import Trajectory
from maxrepeat.readers import Source, detect, read_source
from maxrepeat.readers._toolevents import EventBuilder, content_text, decode_arguments
from tests.strategies import json_values

FIXTURES = Path(__file__).parents[1] / "fixtures"


def compact(traj: Trajectory) -> list[tuple[Any, ...]]:
    """The events as short tuples: ("T", turnId), ("/T",), ("call", name, id, args),
    ("res", id, result, success)."""
    out: list[tuple[Any, ...]] = []
    for e in traj.events:
        d = e.data
        if e.type == "turn_start":
            out.append(("T", d.turn_id))
        elif e.type == "turn_end":
            out.append(("/T",))
        elif e.type == "tool_call":
            out.append(("call", d.tool_name, d.tool_call_id, d.arguments))
        elif e.type == "tool_result":
            out.append(("res", d.tool_call_id, d.result, d.success))
    return out


def read_fixture(fmt: str, name: str) -> list[Trajectory]:
    """Every trajectory of one fixture, auto-detected; fails on any error item."""
    source = Source.from_path(FIXTURES / fmt / name)
    assert detect(source).name == fmt
    items = list(read_source(source))
    errors = [str(i) for i in items if isinstance(i, TrajectoryFormatError)]
    assert not errors
    return [i for i in items if isinstance(i, Trajectory)]


# --- atif -------------------------------------------------------------------------------

def test_atif_parallel_calls_form_one_turn_and_results_join_by_call_id() -> None:
    """ATIF v1.6: a step's calls are one turn; JSON-string arguments and part lists decode."""
    [traj] = read_fixture("atif", "v16_parallel.json")
    assert traj.format == "atif"
    assert traj.metadata["session_id"] == "fixture-v16"
    assert compact(traj) == [
        ("T", "step-2"),
        ("call", "bash", "c1", {"cmd": "ls"}),
        ("call", "bash", "c2", {"cmd": "pwd"}),
        ("res", "c2", "/app", True),
        ("res", "c1", "a.txt", True),
        ("/T",),
        ("T", "step-3"),
        ("call", "bash", "c3", {"cmd": "ls"}),
        ("res", "c3", "a.txt", True),
        ("/T",),
        ("T", "step-4"),
        ("call", "read", "c4", {"path": "b"}),
        ("res", "c4", "no such file", False),
        ("/T",),
    ]


def test_atif_skips_copied_context_and_yields_embedded_subagents() -> None:
    """ATIF v1.7: is_copied_context steps are skipped; each subagent is its own run."""
    main, sub = read_fixture("atif", "v17_copied_and_subagents.json")
    assert compact(main) == [
        ("T", "step-3"), ("call", "bash", "n1", {"cmd": "ls"}), ("res", "n1", "a.txt", False),
        ("/T",),
    ]
    assert sub.label.endswith("v17_copied_and_subagents.json#helper-1")
    assert compact(sub) == [
        ("T", "step-1"), ("call", "search", "h1", {"q": "x"}), ("res", "h1", {"hits": 0}, True),
        ("/T",),
    ]


def test_atif_nonconformant_14_dialect_joins_results_written_before_calls() -> None:
    """The 1.4 dialect: {id, name} calls, results as system steps naming the call."""
    [traj] = read_fixture("atif", "dialect14.json")
    assert compact(traj) == [
        ("T", "step-4"),
        ("call", "Bash", "toolu_A", {"command": "mkdir /app"}),
        ("res", "toolu_A", "EACCES: permission denied", False),
        ("call", "Bash", "toolu_B", {"command": "pwd"}),
        ("res", "toolu_B", "ok", True),
        ("/T",),
        ("T", "step-5"),
        ("call", "Bash", "toolu_C", {"command": "mkdir /app"}),
        ("res", "toolu_C", "EACCES: permission denied", False),
        ("/T",),
    ]


def test_atif_jsonl_header_dialect_keeps_object_content() -> None:
    """ATIF as JSONL with a __header__ line; object content is kept as the result."""
    [traj] = read_fixture("atif", "stream.atif.jsonl")
    assert traj.metadata["session_id"] == "fixture-stream"
    assert compact(traj) == [
        ("T", "step-2"),
        ("call", "verify", "v1", {"command": "make test"}),
        ("res", "v1", {"command": "make test", "passed": False, "output": "1 failed"}, True),
        ("/T",),
        ("T", "step-4"),
        ("call", "verify", "v2", {"command": "make test"}),
        ("res", "v2", {"command": "make test", "passed": True, "output": "ok"}, True),
        ("/T",),
    ]


def test_atif_call_without_name_is_an_error_with_its_key_path() -> None:
    """A tool call without function_name is reported with where it is."""
    doc = {"schema_version": "ATIF-v1.5", "steps": [
        {"step_id": 1, "source": "agent", "tool_calls": [{"tool_call_id": "x"}]}]}
    items = list(read_source(Source.from_bytes(json.dumps(doc).encode(), "bad.json")))
    assert len(items) == 1 and isinstance(items[0], TrajectoryFormatError)
    assert "bad.json" in str(items[0]) and "steps[0].tool_calls[0].function_name" in str(items[0])


# --- codex ------------------------------------------------------------------------------

def test_codex_rollout_turns_are_model_responses_with_error_flags() -> None:
    """Codex: parallel calls share a turn; exit codes and patch failures mark results."""
    [traj] = read_fixture("codex", "rollout.jsonl")
    assert traj.metadata == {"session_id": "sess-fixture-1"}
    assert compact(traj) == [
        ("T", "t1/1"),
        ("call", "shell", "c1", {"command": ["ls"]}),
        ("call", "shell", "c2", {"command": ["pwd"]}),
        ("res", "c1", "ls: cannot access\n", False),
        ("res", "c2", "Exit code: 0\nOutput:\n/w\n", True),
        ("/T",),
        ("T", "t1/2"),
        ("call", "apply_patch", "c3", "*** Begin Patch\n*** End Patch"),
        ("res", "c3", "patch rejected", False),
        ("/T",),
        ("T", "t2/1"),
        ("call", "update_plan", "c4", "not json"),
        ("res", "c4", '{"output":"bad","metadata":{"exit_code":1}}', False),
        ("/T",),
        ("T", "t2/2"),
        ("call", "local_shell", "c5", {"type": "exec", "command": ["ls"]}),
        ("res", "c5", "a.txt", True),
        ("/T",),
    ]


def test_codex_line_that_is_not_an_object_is_an_error_with_its_line() -> None:
    """A JSONL line holding a non-object names its line."""
    data = (FIXTURES / "codex" / "rollout.jsonl").read_bytes() + b"[1, 2]\n"
    items = list(read_source(Source.from_bytes(data, "r.jsonl"), "codex"))
    assert len(items) == 1 and isinstance(items[0], TrajectoryFormatError)
    assert str(items[0]).startswith("r.jsonl:26:")


# --- gemini-cli -------------------------------------------------------------------------

def test_gemini_jsonl_last_write_wins_and_rewind_drops_messages() -> None:
    """Gemini CLI JSONL: rewritten message ids replace, $rewindTo cuts, status=error fails."""
    [traj] = read_fixture("gemini-cli", "session.jsonl")
    assert traj.metadata["sessionId"] == "gem-fixture"
    assert compact(traj) == [
        ("T", "g1"),
        ("call", "run_shell_command", "a", {"command": "ls"}),
        ("res", "a", "a.txt", True),
        ("/T",),
        ("T", "g2"),
        ("call", "read_file", "b", {"path": "x"}),
        ("res", "b", "not found", False),
        ("call", "run_shell_command", "c", {"command": "pwd"}),
        ("res", "c", "/w", True),
        ("/T",),
        ("T", "g4"),
        ("call", "run_shell_command", "e", {"command": "ls"}),
        ("/T",),
    ]


def test_gemini_legacy_json_falls_back_to_result_display() -> None:
    """Legacy Gemini CLI JSON: one turn per gemini message; resultDisplay when no result."""
    [traj] = read_fixture("gemini-cli", "legacy.json")
    assert compact(traj) == [
        ("T", "g1"), ("call", "glob", "a", {"pattern": "*.py"}), ("res", "a", "a.py\nb.py", True),
        ("/T",),
        ("T", "g2"), ("call", "glob", "b", {"pattern": "*.py"}),
        ("res", "b", "Found 2 files", True), ("/T",),
    ]


# --- copilot-cli ------------------------------------------------------------------------

def test_copilot_counts_each_call_once_and_splits_responses_and_subagents() -> None:
    """Copilot CLI: toolRequests + execution_start count once; a call after every call of
    the turn was answered opens a new turn; subagent calls are a run of their own."""
    main, sub = read_fixture("copilot-cli", "events.jsonl")
    assert main.metadata == {"session_id": "cop-fixture"}
    assert compact(main) == [
        ("T", "0"),
        ("call", "bash", "c1", {"command": "ls"}),
        ("call", "view", "c2", {"path": "a.txt"}),
        ("res", "c1", "a.txt\n", True),
        ("res", "c2", "file is binary", False),
        ("/T",),
        ("T", "m2"),
        ("call", "task", "c3", {"prompt": "find it"}),
        ("res", "c3", "found in x.py", True),
        ("/T",),
        ("T", "1"),
        ("call", "bash", "c4", {"command": "ls", "description": "list"}),
        ("res", "c4", "a.txt\n", True),
        ("/T",),
        ("T", "1"),
        ("call", "bash", "c5", {"command": "ls"}),
        ("res", "c5", "a.txt\n", True),
        ("/T",),
    ]
    assert sub.label.endswith("events.jsonl#subagent:c3")
    assert compact(sub) == [
        ("T", "s1"), ("call", "grep", "s1c", {"pattern": "x"}), ("res", "s1c", "x.py:1", True),
        ("/T",),
    ]


# --- otel -------------------------------------------------------------------------------

OTEL_TRACE = [
    ("call", "lookup", "k1", None),
    ("T", "x2"), ("call", "lookup", "k2", None), ("res", "k2", "ok", False), ("/T",),
]
OTEL_CONVERSATION = [
    ("T", "c1"),
    ("call", "get_time", "call_2", None),
    ("res", "call_2", "timeout", False),
    ("call", "get_weather", "call_1", {"city": "Paris"}),
    ("res", "call_1", "rainy", True),
    ("/T",),
    ("T", "c2"), ("call", "get_weather", "call_3", {"city": "Paris"}), ("/T",),
]


@pytest.mark.parametrize("name", ["export.json", "export.jsonl"])
def test_otel_groups_by_conversation_or_trace_and_turns_follow_model_calls(name: str) -> None:
    """OTel: tool spans after one chat span form its turn; error status fails the call."""
    trajs = read_fixture("otel", name)
    by_key = {t.label.split("#", 1)[1]: compact(t) for t in trajs}
    assert by_key["conversation:conv-42"] == OTEL_CONVERSATION
    if name == "export.json":
        assert list(by_key) == ["trace:1bf7651916cd43dd8448eb211c80319d", "conversation:conv-42"]
        assert by_key["trace:1bf7651916cd43dd8448eb211c80319d"] == OTEL_TRACE


def test_otel_bad_line_is_reported_and_other_lines_still_read() -> None:
    """OTLP JSONL: a line that is not JSON is an error naming its line; the rest is read."""
    first, second = (FIXTURES / "otel" / "export.jsonl").read_bytes().splitlines(True)
    data = first + b'{"resourceSpans": [\n' + second
    items = list(read_source(Source.from_bytes(data, "o.jsonl"), "otel"))
    errors = [i for i in items if isinstance(i, TrajectoryFormatError)]
    assert [(e.source, e.line) for e in errors] == [("o.jsonl", 2)]
    assert any(isinstance(i, Trajectory) and compact(i) == OTEL_CONVERSATION for i in items)


# --- detection and grading --------------------------------------------------------------

@pytest.mark.parametrize("fmt,name", [
    ("atif", "v16_parallel.json"), ("atif", "dialect14.json"), ("atif", "stream.atif.jsonl"),
    ("codex", "rollout.jsonl"), ("gemini-cli", "session.jsonl"),
    ("gemini-cli", "legacy.json"), ("copilot-cli", "events.jsonl"), ("otel", "export.json"),
])
def test_native_round_trip_grades_identically(fmt: str, name: str) -> None:
    """A reader's output written as native JSON and read back grades the same."""
    cfg = MaxRepeatConfig(max=1, max_cycle_period=2, match="observation")
    for traj in read_fixture(fmt, name):
        data = json.dumps(traj.to_dict()).encode()
        [back] = list(read_source(Source.from_bytes(data, "back.json"), "vally"))
        assert isinstance(back, Trajectory)
        # the same verdict; only the format and where it was read differ
        assert replace(grade(back, cfg).metadata, format="atif", source=None) == replace(
            grade(traj, cfg).metadata, format="atif", source=None)


def test_atif_parallel_calls_of_one_step_are_never_a_loop() -> None:
    """Two bash calls in one ATIF step are one step, so name matching finds no repeat."""
    [traj] = read_fixture("atif", "v16_parallel.json")
    result = grade(traj, MaxRepeatConfig(max=1, match="name", tools=["^bash$"]))
    assert result.metadata.occurrences == 1 and result.passed


# --- helpers ----------------------------------------------------------------------------

JSON_VALUES = json_values(max_leaves=10)


@settings(max_examples=60, deadline=None)
@given(JSON_VALUES)
def test_decode_arguments_decodes_any_json_encoded_string(value: Any) -> None:
    """A JSON-encoded string decodes to the value it encodes."""
    assert canonical_bytes(decode_arguments(json.dumps(value))) == canonical_bytes(value)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=12))
def test_decode_arguments_keeps_strings_that_are_not_json(text: str) -> None:
    """A string that does not parse as JSON is the arguments itself."""
    try:
        json.loads(text)
    except ValueError:
        assert decode_arguments(text) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=4))
def test_content_text_joins_text_blocks(texts: list[str]) -> None:
    """A list of text blocks becomes its texts joined by newlines."""
    assert content_text([{"type": "text", "text": t} for t in texts]) == "\n".join(texts)


def test_builder_drops_repeated_call_ids_and_orphan_results() -> None:
    """A call id seen before is dropped; a result whose call never appears is dropped."""
    b = EventBuilder()
    b.add_result("ghost", "x")
    b.start_turn("1")
    assert b.add_call("bash", "c1", {"a": 1})
    b.end_turn()
    b.start_turn("2")
    assert not b.add_call("bash", "c1", {"a": 1})
    b.end_turn()
    assert [e.type for e in b.events()] == ["turn_start", "tool_call", "turn_end"]


# --- robustness -------------------------------------------------------------------------

MUTABLE_FIXTURES = [
    ("atif", "v16_parallel.json"), ("atif", "dialect14.json"), ("atif", "stream.atif.jsonl"),
    ("atif", "v17_copied_and_subagents.json"), ("codex", "rollout.jsonl"),
    ("gemini-cli", "session.jsonl"), ("gemini-cli", "legacy.json"),
    ("copilot-cli", "events.jsonl"), ("otel", "export.json"),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


@pytest.mark.parametrize("fmt,name", MUTABLE_FIXTURES)
@settings(max_examples=int(os.environ.get("MAXREPEAT_FUZZ_EXAMPLES", "40")), deadline=None)
@given(data=st.data())
def test_any_value_anywhere_gives_trajectories_or_errors(fmt: str, name: str,
                                                         data: st.DataObject) -> None:
    """Replacing any value of a fixture by any JSON value never raises from a reader."""
    raw = (FIXTURES / fmt / name).read_text(encoding="utf-8")
    jsonl = name.endswith(".jsonl")
    doc: Any = [json.loads(line) for line in raw.splitlines()] if jsonl else json.loads(raw)
    path = data.draw(st.sampled_from(_paths(doc)[1:] if jsonl else _paths(doc)))
    doc = _replace(doc, path, data.draw(JSON_VALUES))
    if jsonl:
        text = "".join(json.dumps(r) + "\n" for r in doc)
    else:
        text = json.dumps(doc)
    for item in read_source(Source.from_bytes(text.encode(), "m"), fmt):
        assert isinstance(item, (Trajectory, TrajectoryFormatError))
        if isinstance(item, Trajectory):
            grade(item, MaxRepeatConfig(max=1, max_cycle_period=3, match="observation"))
