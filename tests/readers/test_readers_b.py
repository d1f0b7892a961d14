"""Readers for swe-agent, mini-swe-agent, openhands, inspect, openai-messages and
anthropic-messages: fixtures with expected events, detection, error positions, and the
shared corpus pinned to golden figures."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, Trajectory, grade
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.readers import Item, Source, detect, get_reader, read_source
from tests.conftest import CORPUS, ROOT, UPDATE_GOLDEN, needs_corpus, rewrite_golden

FIXTURES = ROOT / "tests" / "fixtures"
GOLDEN = ROOT / "tests" / "golden"

#: corpus folder -> the format its files must be detected as
CORPUS_FORMATS = {
    "swe-agent": "swe-agent",
    "mini-swe-agent": "mini-swe-agent",
    "openhands": "openhands",
    "inspect-ai": "inspect",
    "openai-chat": "openai-messages",
}
MY_FORMATS = ("swe-agent", "mini-swe-agent", "openhands", "inspect", "openai-messages",
              "anthropic-messages")
GOLDEN_CONFIG = MaxRepeatConfig(max=1, max_cycle_period=2, match="name-args")


def compact(t: Trajectory) -> list[tuple[Any, ...]]:
    """The events as short tuples: ("[",), ("call", name, id, args), ("res", id, result,
    success), ("]",)."""
    out: list[tuple[Any, ...]] = []
    for e in t.events:
        d = e.data
        if e.type == "turn_start":
            out.append(("[",))
        elif e.type == "turn_end":
            out.append(("]",))
        elif e.type == "tool_call":
            out.append(("call", d.tool_name, d.tool_call_id, d.arguments))
        elif e.type == "tool_result":
            out.append(("res", d.tool_call_id, d.result, d.success))
    return out


def read_all(path: Path | str, fmt: str = "auto") -> list[Item]:
    return list(read_source(Source.from_path(str(path)), fmt))


def trajectories(path: Path | str, fmt: str = "auto") -> list[Trajectory]:
    items = read_all(path, fmt)
    errors = [i for i in items if isinstance(i, TrajectoryFormatError)]
    assert not errors, errors
    return [i for i in items if isinstance(i, Trajectory)]


def only(path: Path) -> Trajectory:
    (t,) = trajectories(path)
    return t


# --- fixtures: expected events ---------------------------------------------------------


def test_swe_agent_v0_action_strings() -> None:
    """0.x steps: tool = first word of the action, arguments = the action string."""
    t = only(FIXTURES / "swe-agent" / "v0_actions.traj")
    assert t.format == "swe-agent"
    assert t.metadata["exit_status"] == "submitted"
    assert compact(t) == [
        ("[",), ("call", "open", "step-0", "open src/app.py\n"),
        ("res", "step-0", "[File: src/app.py (3 lines total)]", True), ("]",),
        ("[",), ("call", "python", "step-1", "python test.py"), ("res", "step-1", "FAIL", True),
        ("]",),
        ("[",), ("call", "python", "step-2", "python test.py"), ("res", "step-2", "FAIL", True),
        ("]",),
        ("[",), ("call", "submit", "step-4", "submit"),
        ("res", "step-4", "diff --git a/src/app.py b/src/app.py", True), ("]",),
    ]


def test_swe_agent_function_calling_takes_history_tool_calls() -> None:
    """1.x steps use the matching history tool call: decoded args, ids kept unique."""
    t = only(FIXTURES / "swe-agent" / "v1_function_calling.traj")
    assert compact(t) == [
        ("[",), ("call", "find_file", "call_1", {"file_name": "app.py"}),
        ("res", "call_1", "Found 1 matches", True), ("]",),
        ("[",), ("call", "bash", "call_1@step-1", "not json {"),
        ("res", "call_1@step-1", "ok", True), ("]",),
        ("[",), ("call", "submit", "step-2", "submit"), ("res", "step-2", "diff", True), ("]",),
    ]


def test_swe_agent_history_only_joins_tool_call_ids() -> None:
    """Without trajectory[], assistant messages are turns and tool_call_ids lists answer."""
    t = only(FIXTURES / "swe-agent" / "history_only.traj")
    assert compact(t) == [
        ("[",), ("call", "bash", "c1", {"command": "ls"}),
        ("call", "bash", "c2", {"command": "pwd"}),
        ("res", "c1", "a.txt", True), ("res", "c2", "/repo", True), ("]",),
        ("[",), ("call", "cat", "msg-5.0", "cat a.txt"), ("res", "msg-5.0", "hello", True),
        ("]",),
    ]


def test_mini_swe_agent_v1_text_actions() -> None:
    """v1: the one bash block is the call, a returncode other than 0 fails it, and a reply
    with two blocks (refused by the agent) has no call."""
    t = only(FIXTURES / "mini-swe-agent" / "v1_text.traj.json")
    assert t.format == "mini-swe-agent"
    assert compact(t) == [
        ("[",), ("call", "bash", "action-2.0", {"command": "cat hello.txt"}),
        ("res", "action-2.0",
         "<returncode>1</returncode>\n<output>\ncat: hello.txt: No such file\n</output>", False),
        ("]",),
        ("[",), ("call", "bash", "action-6.0", {"command": "echo hi > hello.txt"}),
        ("res", "action-6.0", "<returncode>0</returncode>\n<output>\n</output>", True), ("]",),
    ]


def test_mini_swe_agent_bare_message_list() -> None:
    """A bare list of mini-swe-agent messages (no info wrapper) is detected as
    mini-swe-agent, not as a tool-less OpenAI list, and its fenced actions are calls."""
    t = only(FIXTURES / "mini-swe-agent" / "bare_list.traj.json")
    assert t.format == "mini-swe-agent"
    assert compact(t) == [
        ("[",), ("call", "bash", "action-2.0", {"command": "cat greet.sh"}),
        ("res", "action-2.0", "<returncode>1</returncode>\n<output>\ncat: greet.sh: missing\n"
         "</output>", False), ("]",),
        ("[",), ("call", "bash", "action-4.0", {"command": "cat bin/greet.sh"}),
        ("res", "action-4.0", "<returncode>0</returncode>\n<output>\necho goodbye\n</output>",
         True), ("]",),
    ]


def test_mini_swe_agent_detected_when_the_submission_fills_the_head(tmp_path: Path) -> None:
    """A .traj.json whose info.submission (a patch) is longer than the detection head is
    still read as mini-swe-agent: info comes before mini_version and trajectory_format."""
    patch = "".join(f"+added line {i} of a vendored copy\n" for i in range(5000))
    doc = {"info": {"exit_status": "Submitted", "submission": patch, "mini_version": "1.9.0"},
           "messages": [{"role": "assistant", "content": "Look.\n\n```bash\nls src\n```"},
                        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n"
                         "main.py\n</output>"}],
           "trajectory_format": "mini-swe-agent-1"}
    path = tmp_path / "big-patch.traj.json"
    path.write_text(json.dumps(doc, indent=2))
    assert len(patch) > 64 * 1024
    t = only(path)
    assert t.format == "mini-swe-agent"
    assert compact(t)[1] == ("call", "bash", "action-0.0", {"command": "ls src"})


def test_mini_swe_agent_v2_tool_calls_and_extra_actions() -> None:
    """v2: tool_calls answered by role tool; extra.actions answered by the next user message."""
    t = only(FIXTURES / "mini-swe-agent" / "v2_toolcalls.traj.json")
    assert t.metadata["exit_status"] == "LimitsExceeded"
    assert compact(t) == [
        ("[",), ("call", "bash", "tc1", {"command": "pytest -q"}),
        ("call", "bash", "tc2", {"command": "git status"}),
        ("res", "tc1", "<returncode>1</returncode>\n<output>1 failed</output>", False),
        ("res", "tc2", "<returncode>0</returncode>\n<output>clean</output>", True), ("]",),
        ("[",), ("call", "bash", "action-5.0", {"command": "pytest -q"}),
        ("res", "action-5.0", "<returncode>1</returncode>\n<output>1 failed</output>", False),
        ("]",),
    ]


def test_openhands_event_list() -> None:
    """Parallel calls share a turn by model_response.id; model arguments win over args;
    noise keys are dropped; error observations, exit codes and ERROR: text fail."""
    t = only(FIXTURES / "openhands" / "events.json")
    assert t.format == "openhands"
    assert compact(t) == [
        ("[",), ("call", "str_replace_editor", "tc_a", {"command": "view", "path": "/w/a.py"}),
        ("call", "execute_bash", "tc_b", {"command": "ls /w"}),
        ("res", "tc_a", "1\tprint('a')", True), ("res", "tc_b", "ls: cannot access", False),
        ("]",),
        ("[",), ("call", "execute_bash", "tc_c", {"command": "ls /w"}),
        ("res", "tc_c", "Agent tried to run a bad command", False), ("]",),
        ("[",), ("call", "edit", "event-8", {"path": "/w/a.py", "content": "print('b')"}),
        ("res", "event-8", "ERROR: no such file", False), ("]",),
    ]


def test_openhands_output_jsonl_one_trajectory_per_instance() -> None:
    """Each output.jsonl line is one trajectory named by its instance_id."""
    ts = trajectories(FIXTURES / "openhands" / "output.jsonl")
    assert [t.id for t in ts] == ["org__repo-1", "org__repo-2"]
    assert ts[0].metadata["error"].startswith("AgentStuckInLoopError")
    assert grade(ts[0], GOLDEN_CONFIG).metadata.occurrences == 3
    assert compact(ts[1]) == [("[",), ("call", "execute_bash", "t9", {"command": "git diff"}),
                              ("res", "t9", "", True), ("]",)]


def test_inspect_json_one_trajectory_per_sample_and_epoch() -> None:
    """Legacy .json: ids <task>/<sample>/epoch<n>; attachments resolved; errors fail."""
    ts = trajectories(FIXTURES / "inspect" / "two_epochs.json")
    assert [t.id for t in ts] == ["guess/s1/epoch1", "guess/s1/epoch2", "guess/7/epoch1"]
    assert compact(ts[0])[-3:] == [
        ("call", "bash", "call_s1_1_2", {"cmd": "cat big.log"}),
        ("res", "call_s1_1_2", "a very long log line", True), ("]",)]
    assert compact(ts[1])[:4] == [
        ("[",), ("call", "bash", "call_s1_2_0", {"cmd": "sleep 100"}),
        ("res", "call_s1_2_0", "Command timed out before completing.", False), ("]",)]
    assert compact(ts[2]) == []


def test_inspect_eval_zip() -> None:
    """.eval: samples read from the zip in sample order, task from header.json."""
    ts = trajectories(FIXTURES / "inspect" / "scripted.eval")
    assert [t.id for t in ts] == ["guess_eval/2/epoch1", "guess_eval/10/epoch1"]
    assert ts[1].source is not None and ts[1].source.endswith("!samples/10_epoch_1.json")
    assert grade(ts[1], GOLDEN_CONFIG).metadata.occurrences == 3


def test_openai_bare_list() -> None:
    """Parallel tool_calls are one turn; content lists become text; bad JSON args stay."""
    t = only(FIXTURES / "openai-messages" / "bare_list.json")
    assert t.format == "openai-messages" and t.id is None
    assert compact(t) == [
        ("[",), ("call", "list_files", "call_a", {"dir": "."}),
        ("call", "read_file", "call_b", {"path": "README.md"}),
        ("res", "call_b", "# Demo", True), ("res", "call_a", "README.md\nsrc", True), ("]",),
        ("[",), ("call", "list_files", "call_c", {"dir": "."}),
        ("res", "call_c", "README.md\nsrc", True), ("]",),
        ("[",), ("call", "search", "call_d", "grep -r TODO"), ("]",),
    ]


def test_openai_tau_bench_results() -> None:
    """A list of tau-bench results gives one trajectory per element, id task<id>-trial<n>."""
    ts = trajectories(FIXTURES / "openai-messages" / "tau_results.json")
    assert [t.id for t in ts] == ["task3-trial0", "task3-trial1"]
    assert grade(ts[0], GOLDEN_CONFIG).metadata.occurrences == 2
    assert compact(ts[1])[2] == ("res", "c1", "Error: not allowed", False)


def test_openai_legacy_function_call() -> None:
    """function_call / role function pair up by name with generated ids."""
    t = only(FIXTURES / "openai-messages" / "legacy_function_call.json")
    assert compact(t) == [
        ("[",), ("call", "get_weather", "call-1.0", {"city": "Paris"}),
        ("res", "call-1.0", "18C", True), ("]",),
        ("[",), ("call", "get_weather", "call-3.0", {"city": "Paris"}),
        ("res", "call-3.0", "18C", True), ("]",),
    ]


def test_openai_jsonl_of_conversations() -> None:
    """JSONL with {id, messages} per line: one trajectory per line named by id."""
    ts = trajectories(FIXTURES / "openai-messages" / "conversations.jsonl")
    assert [(t.id, t.source) for t in ts] == [
        ("conv-1", f"{FIXTURES / 'openai-messages' / 'conversations.jsonl'}:1"),
        ("conv-2", f"{FIXTURES / 'openai-messages' / 'conversations.jsonl'}:2")]
    assert compact(ts[1]) == []


def test_anthropic_conversation() -> None:
    """tool_use blocks of one message are one turn; is_error fails; string input decoded;
    server tool results answer in place."""
    t = only(FIXTURES / "anthropic-messages" / "conversation.json")
    assert t.format == "anthropic-messages"
    assert compact(t) == [
        ("[",), ("call", "bash", "toolu_1", {"command": "pytest -q"}),
        ("call", "read", "toolu_2", {"path": "setup.cfg"}),
        ("res", "toolu_1", "1 failed", False), ("res", "toolu_2", "[tool:pytest]", True), ("]",),
        ("[",), ("call", "bash", "toolu_3", {"command": "pytest -q"}),
        ("res", "toolu_3", "1 failed", False), ("]",),
        ("[",), ("call", "web_search", "srvtoolu_1", {"query": "pytest flaky"}),
        ("res", "srvtoolu_1",
         [{"type": "web_search_result", "url": "https://example.org", "title": "Flaky"}], True),
        ("]",),
    ]


def test_anthropic_request_body() -> None:
    """An object with messages (an API request body) is read as one conversation."""
    t = only(FIXTURES / "anthropic-messages" / "request_body.json")
    assert grade(t, GOLDEN_CONFIG).metadata.occurrences == 2


# --- detection ----------------------------------------------------------------------------


FIXTURE_FILES = sorted(p for fmt in MY_FORMATS for p in (FIXTURES / fmt).iterdir())


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_detected_as_its_folder(path: Path) -> None:
    """Every fixture is auto-detected as the format its folder names."""
    assert detect(Source.from_path(str(path))).name == path.parent.name


OTHER_SHAPES = {
    "claude-code": b'{"type":"assistant","uuid":"a1","sessionId":"S","message":{"id":"m1",'
    b'"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash",'
    b'"input":{"command":"ls"}}]}}\n{"type":"user","uuid":"u1","sessionId":"S","message":'
    b'{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]}}\n',
    "vally": b'{"id": "r", "events": [{"type": "turn_start", "data": {}}, {"type": '
    b'"tool_call", "data": {"toolName": "bash", "arguments": {"command": "ls"}}}]}',
    "atif": b'{"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", '
    b'"version": "1"}, "steps": [{"step_id": 1, "source": "agent", "message": "", '
    b'"tool_calls": [{"tool_call_id": "c", "function_name": "bash", "arguments": {}}]}]}',
}


@pytest.mark.parametrize("name", sorted(OTHER_SHAPES))
def test_sniffers_leave_other_formats_alone(name: str) -> None:
    """None of these readers claims another format's file with a confident score."""
    data = OTHER_SHAPES[name]
    source = Source.from_bytes(data, "x.jsonl")
    for fmt in MY_FORMATS:
        assert get_reader(fmt).sniff(data, source) < 50, fmt


# --- errors -----------------------------------------------------------------------------


def test_jsonl_bad_line_is_an_error_and_reading_goes_on() -> None:
    """A broken output.jsonl line is an error with its line; the next line still reads."""
    good = (FIXTURES / "openhands" / "output.jsonl").read_bytes().splitlines(keepends=True)
    data = good[0] + b'{"instance_id": "x", "history": [\n' + good[1]
    items = list(read_source(Source.from_bytes(data, "out.jsonl"), "openhands"))
    assert [type(i).__name__ for i in items] == [
        "Trajectory", "TrajectoryFormatError", "Trajectory"]
    err = items[1]
    assert isinstance(err, TrajectoryFormatError) and err.line == 2
    assert str(err).startswith("out.jsonl:2:")


def test_missing_tool_name_names_its_key_path() -> None:
    """A tool call without a name is an error naming the key path, not a crash."""
    data = json.dumps([{"role": "assistant", "tool_calls": [
        {"id": "c", "function": {"arguments": "{}"}}]}]).encode()
    (err,) = read_source(Source.from_bytes(data, "m.json"), "openai-messages")
    assert isinstance(err, TrajectoryFormatError)
    assert err.position == "[0].tool_calls[0].function.name"
    assert str(err) == "m.json: [0].tool_calls[0].function.name: must be a string (got null)"


def test_tau_results_list_key_path_names_the_element() -> None:
    """An error inside the second tau-bench result names that element and its traj."""
    data = json.dumps([{"task_id": 1, "trial": 0, "traj": []},
                       {"task_id": 2, "trial": 0, "traj": [7]}]).encode()
    items = list(read_source(Source.from_bytes(data, "r.json"), "openai-messages"))
    assert isinstance(items[0], Trajectory)
    err = items[1]
    assert isinstance(err, TrajectoryFormatError)
    assert (err.source, err.position) == ("r.json[1]", "[1].traj[0]")


def test_truncated_eval_names_file_and_byte() -> None:
    """A cut .eval zip is one error with the file and its end byte."""
    data = (FIXTURES / "inspect" / "scripted.eval").read_bytes()[:700]
    (err,) = read_source(Source.from_bytes(data, "cut.eval"), "inspect")
    assert isinstance(err, TrajectoryFormatError)
    assert str(err).startswith("cut.eval: byte 700 (end of file): not a readable .eval")


def test_eval_with_broken_sample_names_the_member() -> None:
    """A sample member that is not JSON is an error naming the member and line; the other
    samples are still read."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t"}}))
        z.writestr("samples/1_epoch_1.json", '{"id": 1, "epoch": 1, "messages": [')
        z.writestr("samples/2_epoch_1.json", json.dumps({"id": 2, "epoch": 1, "messages": []}))
    items = list(read_source(Source.from_bytes(buf.getvalue(), "b.eval"), "inspect"))
    assert isinstance(items[0], TrajectoryFormatError)
    assert str(items[0]).startswith("b.eval!samples/1_epoch_1.json:1:")
    assert isinstance(items[1], Trajectory) and items[1].id == "t/2/epoch1"


def test_wrong_shape_for_forced_format_is_an_error() -> None:
    """Forcing a format on a file of another shape gives an error, not a traceback."""
    data = b'{"events": []}'
    for fmt in MY_FORMATS:
        items = list(read_source(Source.from_bytes(data, "n.json"), fmt))
        assert items and all(isinstance(i, TrajectoryFormatError) for i in items), fmt


# --- the shared corpus -------------------------------------------------------------------


def _corpus_files() -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for folder in sorted(CORPUS_FORMATS):
        directory = CORPUS / folder
        if directory.is_dir():
            out += [(folder, p) for p in sorted(directory.iterdir()) if p.is_file()]
    return out


CORPUS_FILES = _corpus_files()


def _figures(path: Path) -> list[dict[str, Any]]:
    return [
        {"id": t.id, "calls": sum(1 for e in t.events if e.type == "tool_call"),
         "occurrences": grade(t, GOLDEN_CONFIG).metadata.occurrences}
        for t in trajectories(path)
    ]


@needs_corpus
@pytest.mark.parametrize("folder,path", CORPUS_FILES,
                         ids=[f"{f}/{p.name[-50:]}" for f, p in CORPUS_FILES])
def test_corpus_file_detected_read_and_pinned(folder: str, path: Path) -> None:
    """A corpus file is detected as its format, read without error, and its figure for
    the fixed config equals the golden one."""
    assert detect(Source.from_path(str(path))).name == CORPUS_FORMATS[folder]
    golden_file = GOLDEN / f"corpus_{CORPUS_FORMATS[folder]}.json"
    figures = _figures(path)
    if UPDATE_GOLDEN:
        pinned = json.loads(golden_file.read_text()) if golden_file.exists() else {}
        pinned[path.name] = figures
        rewrite_golden(golden_file, json.dumps(dict(sorted(pinned.items())), indent=1) + "\n")
    assert json.loads(golden_file.read_text())[path.name] == figures


@needs_corpus
def test_corpus_eps_traj_is_a_stuck_submit_loop() -> None:
    """eps.traj submits the same wrong flag four times in a row (PROVENANCE's loop)."""
    path = CORPUS / "swe-agent" / "trajectories__demonstrations__ctf__crypto__eps.traj"
    (t,) = trajectories(path)
    result = grade(t, MaxRepeatConfig(max=3, match="name-args"))
    assert (result.passed, result.metadata.occurrences) == (False, 4)
    assert result.metadata.pattern_tools == ("submit",)


@needs_corpus
@pytest.mark.parametrize("folder,path", CORPUS_FILES,
                         ids=[f"{f}/{p.name[-50:]}" for f, p in CORPUS_FILES])
def test_truncated_corpus_copy_is_an_error_with_position(folder: str, path: Path) -> None:
    """Half a corpus file gives an error naming the file and a position, never a crash."""
    data = path.read_bytes()
    name = f"cut-{path.name}"
    items = list(read_source(Source.from_bytes(data[: len(data) // 2], name)))
    errors = [i for i in items if isinstance(i, TrajectoryFormatError)]
    assert errors
    assert all(e.source is not None and e.source.startswith(name) for e in errors)
    assert all(e.line is not None or e.position is not None for e in errors)


def test_swe_agent_retry_attempts_are_runs() -> None:
    """A RetryAgent .traj gives one trajectory per attempt and skips the top-level copy."""
    path = FIXTURES / "swe-agent" / "retry_attempts.traj"
    ts = trajectories(path)
    assert [t.source for t in ts] == [f"{path}#attempt0", f"{path}#attempt1"]
    assert [grade(t, GOLDEN_CONFIG).metadata.occurrences for t in ts] == [2, 1]
    assert ts[0].metadata["exit_status"] == "exit_cost"


def test_openhands_sdk_v1_older_observation_fields() -> None:
    """Older SDK observations: the text is `output` (there is no `content`), and
    `error: true` or a non-zero shell exit code in `metadata` fails the call."""
    t = only(FIXTURES / "openhands" / "sdk_output_v1_legacy_obs.jsonl")
    assert t.format == "openhands"
    assert compact(t) == [
        ("[",), ("call", "execute_bash", "call_n1", {"command": "ls notes"}),
        ("res", "call_n1", "monday.txt\ntuesday.txt\n", True), ("]",),
        ("[",), ("call", "execute_bash", "call_n2", {"command": "zip -r notes.zip notes"}),
        ("res", "call_n2", "bash: zip: command not found\n", False), ("]",),
        ("[",), ("call", "str_replace_editor", "call_n3",
                 {"command": "view", "path": "/workspace/notes/missing.txt"}),
        ("res", "call_n3", "", False), ("]",),
    ]


def test_openhands_output_detected_when_the_patch_fills_the_head(tmp_path: Path) -> None:
    """An output.jsonl record whose test_result.git_patch outgrows the detection head is
    still read as OpenHands from its opening keys (instance_id, then test_result)."""
    patch = "".join(f"+vendored line {i}\n" for i in range(5000))
    record = {"instance_id": "demo__big-patch", "test_result": {"git_patch": patch},
              "instruction": "Make the tests pass.", "metadata": {"agent_class": "CodeActAgent"},
              "history": [{"id": 1, "source": "agent", "action": "run",
                           "args": {"command": "pytest"}},
                          {"id": 2, "source": "agent", "observation": "run", "cause": 1,
                           "content": "2 passed", "extras": {"metadata": {"exit_code": 0}}}]}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert len(patch) > 64 * 1024
    t = only(path)
    assert (t.format, t.id) == ("openhands", "demo__big-patch")
    assert compact(t) == [("[",), ("call", "run", "event-1", {"command": "pytest"}),
                          ("res", "event-1", "2 passed", True), ("]",)]


def test_openhands_sdk_v1_events() -> None:
    """SDK events: calls grouped by llm_response_id, arguments from tool_call, results by
    tool_call_id with is_error and AgentErrorEvent failing."""
    t = only(FIXTURES / "openhands" / "sdk_events.json")
    assert compact(t) == [
        ("[",), ("call", "terminal", "call_1", {"command": "pytest"}),
        ("call", "file_editor", "call_2", {"command": "view", "path": "/w/a.py"}),
        ("res", "call_1", "1 failed", False), ("res", "call_2", "print(1)", True), ("]",),
        ("[",), ("call", "terminal", "call_3", {"command": "pytest"}),
        ("res", "call_3", "Command timed out", False), ("]",),
    ]
