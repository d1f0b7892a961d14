"""`maxrepeat hook claude-code`: live decisions equal the monitor's and grade()'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import maxrepeat
from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.cli import cli
from maxrepeat.guards.claude_code import guard, hook_output
from maxrepeat.guards.policy import Action, Escalation
from maxrepeat.readers.claude_code import SessionStream
from tests.conftest import CORPUS, needs_corpus

CONFIGS = [
    MaxRepeatConfig(max=1, max_cycle_period=3, match="name"),
    MaxRepeatConfig(max=1, max_cycle_period=2, match="observation"),
    MaxRepeatConfig(max=2, match="name-args", tools=["^(Read|Bash)$"]),
]
#: corpus transcripts in which CONFIGS find a loop above max (so the hook must block)
LOOPING = {"spotter_258c7280.jsonl", "spotter_4d5611e5__subagents__agent-a2898e3.jsonl",
           "spotter_ae4a77f8.jsonl", "spotter_tool_heavy.jsonl"}
FILES = sorted((CORPUS / "claude-code").glob("*.jsonl")) if CORPUS.is_dir() else []


def _record(kind: str, uuid: str, mid: str | None, blocks: list[dict[str, Any]]) -> str:
    msg: dict[str, Any] = {"role": kind, "content": blocks}
    if mid is not None:
        msg["id"] = mid
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "S", "parentUuid": None,
                       "isSidechain": False, "message": msg}) + "\n"


def _loop_lines(n: int, command: str = "make") -> list[str]:
    """A session whose model runs the same Bash command n times."""
    out = [json.dumps({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}) + "\n"]
    for i in range(n):
        use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": command}}
        res = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "Error 1",
               "is_error": True}
        out.append(_record("assistant", f"a{i}", f"msg_{i}", [use]))
        out.append(_record("user", f"u{i}", None, [res]))
    return out


def _payload(path: Path, session: str = "S") -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(path), "cwd": "/tmp",
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}}


def _strip(result: maxrepeat.GraderResult) -> dict[str, Any]:
    out = result.to_dict()
    del out["trajectory"]
    out["metadata"].pop("source", None)  # where the run was read from differs by design
    return out


def _graded(path: Path) -> list[dict[str, Any]]:
    """grade() of the transcript's first trajectory, read in full by the reader."""
    traj = next(iter(maxrepeat.read_trajectories(path, format="claude-code")))
    return [_strip(grade(traj, c, name=n)) for c, n in
            zip(CONFIGS, maxrepeat.core.config.unique_names(CONFIGS), strict=True)]


@needs_corpus
@pytest.mark.parametrize("source", FILES, ids=[p.name for p in FILES])
def test_replayed_corpus_transcript_decisions_equal_the_monitor(
    source: Path, tmp_path: Path
) -> None:
    """Replaying a real transcript line by line, every hook call decides as the monitor
    (and, at sampled prefixes, as grade()) does on that prefix."""
    lines = source.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"")
    cache = tmp_path / "cache"
    stream = SessionStream()
    names = maxrepeat.core.config.unique_names(CONFIGS)
    reference = [Monitor(c, name=n, format="claude-code")
                 for c, n in zip(CONFIGS, names, strict=True)]
    sample = set(range(0, len(lines), max(1, len(lines) // 8))) | {len(lines) - 1}
    escalation = Escalation(reference)
    blocks = 0
    with transcript.open("ab") as out:
        for k, line in enumerate(lines):
            out.write(line)
            out.flush()
            key, events = stream.record(json.loads(line))
            if events and key == stream.primary:
                for m in reference:
                    m.feed_all(events)
            verdict = guard(_payload(transcript), CONFIGS, cache_dir=cache)
            assert verdict.read_from > 0 or k == 0, "the cache was not used"
            want = [m.result() for m in reference]
            assert [_strip(r) for r in verdict.results] == [_strip(r) for r in want], k
            expected = escalation.decide()
            assert (verdict.decision.action, verdict.decision.message) == (
                expected.action, expected.message), k
            blocks += verdict.decision.speaks
            if k in sample:
                assert [_strip(r) for r in verdict.results] == _graded(transcript), k
    if source.name in LOOPING:
        assert blocks > 0, "no loop above max found: the replay checks no block"


def test_cache_missing_falls_back_to_a_full_read(tmp_path: Path) -> None:
    """Without its cache file the hook reads the whole transcript and decides the same."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("".join(_loop_lines(3)), encoding="utf-8")
    first = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    for f in (tmp_path / "c").iterdir():
        f.unlink()
    again = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    assert again.read_from == 0 and not again.cache_used
    assert [r.to_dict() for r in again.results] == [r.to_dict() for r in first.results]


@pytest.mark.parametrize("change", ["shrunk", "rewritten", "corrupt", "config", "version"])
def test_stale_cache_falls_back_to_a_full_read(
    tmp_path: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache that no longer fits (transcript shrunk or rewritten, garbage, other config
    or version) is ignored: the result equals grade() of the transcript."""
    transcript = tmp_path / "s.jsonl"
    cache = tmp_path / "c"
    lines = _loop_lines(4)
    transcript.write_text("".join(lines), encoding="utf-8")
    guard(_payload(transcript), CONFIGS, cache_dir=cache)
    configs = CONFIGS
    if change == "shrunk":
        transcript.write_text("".join(lines[:3]), encoding="utf-8")
    elif change == "rewritten":
        # Same length, different bytes before the saved offset.
        transcript.write_text("".join(_loop_lines(4, command="mako")), encoding="utf-8")
    elif change == "corrupt":
        for f in cache.iterdir():
            f.write_bytes(b"\x93garbage")
    elif change == "config":
        configs = [MaxRepeatConfig(max=3, match="name")]
    else:
        monkeypatch.setattr(maxrepeat.guards.session, "CACHE_FORMAT", 999)
    verdict = guard(_payload(transcript), configs, cache_dir=cache)
    assert verdict.read_from == 0
    traj = next(iter(maxrepeat.read_trajectories(transcript, format="claude-code")))
    names = maxrepeat.core.config.unique_names(configs)
    assert [r.to_dict() for r in verdict.results] == [
        grade(traj, c, name=n).to_dict() for c, n in zip(configs, names, strict=True)]


def test_a_growing_transcript_is_read_from_the_saved_offset(tmp_path: Path) -> None:
    """The second call starts where the first one stopped."""
    transcript = tmp_path / "s.jsonl"
    lines = _loop_lines(3)
    transcript.write_text("".join(lines[:3]), encoding="utf-8")
    guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    with transcript.open("a", encoding="utf-8") as out:
        out.write("".join(lines[3:]))
    verdict = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    assert verdict.read_from == len("".join(lines[:3]).encode())


def test_an_unterminated_last_line_counts_but_is_not_saved(tmp_path: Path) -> None:
    """A last line without its newline is graded when it is whole JSON, and read again
    next time."""
    transcript = tmp_path / "s.jsonl"
    lines = _loop_lines(2)
    text = "".join(lines)
    transcript.write_text(text[:-1], encoding="utf-8")
    verdict = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    assert verdict.results[0].metadata.watched_calls == 2
    transcript.write_text(text, encoding="utf-8")
    again = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    assert again.read_from == len(text.encode()) - len(lines[-1].encode())
    assert [r.to_dict() for r in again.results] == [r.to_dict() for r in verdict.results]


def test_speaks_only_while_the_loop_goes_on(tmp_path: Path) -> None:
    """The guard speaks while the run grows and is silent once the model left it (the
    session still fails grade)."""
    cfg = [MaxRepeatConfig(max=2, match="name-args")]
    transcript = tmp_path / "s.jsonl"
    lines = _loop_lines(3) + _loop_lines(1, command="ls")[1:]
    lines[-2] = lines[-2].replace('"a0"', '"b0"').replace('"t0"', '"x0"').replace(
        '"msg_0"', '"msg_x"')
    lines[-1] = lines[-1].replace('"u0"', '"v0"').replace('"t0"', '"x0"')
    transcript.write_text("".join(lines[:-2]), encoding="utf-8")
    assert guard(_payload(transcript), cfg, cache_dir=tmp_path / "c").decision.speaks
    transcript.write_text("".join(lines), encoding="utf-8")
    after = guard(_payload(transcript), cfg, cache_dir=tmp_path / "c")
    assert after.results[0].failed and not after.decision.speaks and after.output is None


def test_cli_warns_with_claude_codes_hook_json(tmp_path: Path) -> None:
    """At the first failing call the command prints additional context naming the pattern
    and the count."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("".join(_loop_lines(4)), encoding="utf-8")
    run = CliRunner().invoke(
        cli, ["hook", "claude-code", "--max", "3", "--match", "name-args",
              "--cache-dir", str(tmp_path / "c")], input=json.dumps(_payload(transcript)))
    assert run.exit_code == 0, run.output
    out = json.loads(run.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    assert 'Bash {"command": "make"} 4 times in a row' in out["additionalContext"]


def test_cli_is_silent_when_no_grader_fails(tmp_path: Path) -> None:
    """Below max the hook prints nothing and exits 0."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("".join(_loop_lines(3)), encoding="utf-8")
    run = CliRunner().invoke(
        cli, ["hook", "claude-code", "--max", "3", "--cache-dir", str(tmp_path / "c")],
        input=json.dumps(_payload(transcript)))
    assert run.exit_code == 0 and run.stdout == ""


def test_cli_reads_graders_from_a_config_file(tmp_path: Path) -> None:
    """--config FILE works like the inline flags."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("".join(_loop_lines(3)), encoding="utf-8")
    cfg = tmp_path / "g.yaml"
    cfg.write_text("graders:\n  - type: max-repeat\n    config: {max: 2, match: name}\n")
    run = CliRunner().invoke(
        cli, ["hook", "claude-code", "--config", str(cfg), "--cache-dir", str(tmp_path / "c")],
        input=json.dumps(_payload(transcript)))
    assert run.exit_code == 0 and "hookSpecificOutput" in json.loads(run.stdout)


@pytest.mark.parametrize("stdin", ["not json", "[]", '{"session_id": "S"}',
                                   '{"session_id": "S", "transcript_path": "/nonexistent/x"}'])
def test_cli_bad_input_is_a_non_blocking_error(stdin: str, tmp_path: Path) -> None:
    """Bad hook input or a missing transcript exits 1 with a message on standard error."""
    run = CliRunner().invoke(
        cli, ["hook", "claude-code", "--max", "3", "--cache-dir", str(tmp_path / "c")],
        input=stdin)
    assert run.exit_code == 1
    assert run.stdout == "" and "maxrepeat hook:" in run.stderr


def test_cli_without_grader_is_an_error(tmp_path: Path) -> None:
    """No --config and no --max: exit 1, nothing on standard output."""
    run = CliRunner().invoke(cli, ["hook", "claude-code"], input="{}")
    assert run.exit_code == 1 and "no grader" in run.stderr


@needs_corpus
def test_replay_through_the_command_line(tmp_path: Path) -> None:
    """The real command, called after each line of a short real session, prints the block
    JSON exactly when the monitor's results call for it."""
    source = CORPUS / "claude-code" / "spotter_tool_heavy.jsonl"
    transcript = tmp_path / "session.jsonl"
    config = MaxRepeatConfig(max=1, match="name")
    reference = Monitor(config, format="claude-code")
    escalation = Escalation([reference])
    stream = SessionStream()
    outputs = []
    with transcript.open("ab") as out:
        for line in source.read_bytes().splitlines(keepends=True):
            out.write(line)
            out.flush()
            key, events = stream.record(json.loads(line))
            if events and key == stream.primary:
                reference.feed_all(events)
            run = CliRunner().invoke(
                cli, ["hook", "claude-code", "--max", "1", "--match", "name",
                      "--cache-dir", str(tmp_path / "c")], input=json.dumps(_payload(transcript)))
            assert run.exit_code == 0, run.output
            said = hook_output("PostToolUse", escalation.decide())
            want = "" if said is None else json.dumps(said, ensure_ascii=False) + "\n"
            assert run.stdout == want
            outputs.append(run.stdout)
    assert any(outputs) and not all(outputs)


def test_a_leniently_read_line_is_reported_as_grade_does(tmp_path: Path) -> None:
    """A transcript line only the lenient decoder reads (NaN) marks the result lenient, in
    the hook as in grade()."""
    transcript = tmp_path / "s.jsonl"
    lines = _loop_lines(2)
    lines[1] = lines[1].replace('"input": {"command": "make"}', '"input": {"x": NaN}')
    transcript.write_text("".join(lines), encoding="utf-8")
    verdict = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    again = guard(_payload(transcript), CONFIGS, cache_dir=tmp_path / "c")
    traj = next(iter(maxrepeat.read_trajectories(transcript, format="claude-code")))
    assert traj.lenient and verdict.results[0].metadata.lenient
    names = maxrepeat.core.config.unique_names(CONFIGS)
    want = [grade(traj, c, name=n).to_dict() for c, n in zip(CONFIGS, names, strict=True)]
    assert [r.to_dict() for r in verdict.results] == want
    assert [r.to_dict() for r in again.results] == want


def _pending_call(lines: list[str], i: int, command: str = "make") -> list[str]:
    """The transcript as the hook sees it after call i: the call, not yet its result."""
    use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": command}}
    return [*lines, _record("assistant", f"a{i}", f"msg_{i}", [use])]


def _done_call(i: int, content: str = "Error 1", command: str = "make") -> list[str]:
    use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": command}}
    res = {"type": "tool_result", "tool_use_id": f"t{i}", "content": content,
           "is_error": content.startswith("Error")}
    rec = json.loads(_record("user", f"u{i}", None, [res]))
    rec["toolUseResult"] = ("Error: " + content) if content.startswith("Error") else {
        "stdout": content, "stderr": "", "interrupted": False}
    return [_record("assistant", f"a{i}", f"msg_{i}", [use]), json.dumps(rec) + "\n"]


@pytest.mark.parametrize("failing", [True, False], ids=["PostToolUseFailure", "PostToolUse"])
def test_observation_mode_takes_the_current_result_from_the_payload(
        tmp_path: Path, failing: bool) -> None:
    """The transcript lacks the current call's result when the hook runs; the payload's
    result (error or tool_response) makes the guard speak at the call where grade of the
    finished transcript first fails (the 3rd, with max 2)."""
    cfg = [MaxRepeatConfig(max=2)]  # observation
    transcript = tmp_path / "s.jsonl"
    content = "Error 1" if failing else "same output"
    lines: list[str] = []
    spoken = []
    for i in range(4):
        transcript.write_text("".join(_pending_call(lines, i)), encoding="utf-8")
        payload = {**_payload(transcript), "tool_use_id": f"t{i}",
                   "tool_input": {"command": "make"}}
        if failing:
            payload.update(hook_event_name="PostToolUseFailure", error=content)
        else:
            payload.update(tool_response={"stdout": content, "stderr": "",
                                          "interrupted": False})
        verdict = guard(payload, cfg, cache_dir=tmp_path / "c")
        spoken.append(verdict.decision.action)
        lines += _done_call(i, content)
        transcript.write_text("".join(lines), encoding="utf-8")
        full = next(iter(maxrepeat.read_trajectories(transcript, format="claude-code")))
        assert verdict.results[0].metadata.occurrences == grade(full, cfg[0]).occurrences
    assert spoken == [Action.NONE, Action.NONE, Action.WARN, Action.BLOCK]


def test_learned_pairs_predict_an_unusual_rendering(tmp_path: Path) -> None:
    """A response whose transcript text is not the usual rendering (here a Read error
    wrapped in tags) is predicted from the earlier identical response."""
    from maxrepeat.guards.claude_code_results import Learned, predicted_result

    learned = Learned()
    res = {"type": "tool_result", "tool_use_id": "t", "is_error": True,
           "content": "<tool_use_error>File does not exist.</tool_use_error>"}
    learned.learn({"type": "user", "toolUseResult": "Error: File does not exist.",
                   "message": {"content": [res]}})
    payload = {"hook_event_name": "PostToolUseFailure", "error": "File does not exist."}
    assert predicted_result(payload, learned) == (res["content"], False)
    assert predicted_result(payload, Learned()) == ("File does not exist.", False)
    ok = {"hook_event_name": "PostToolUse", "tool_response": {"filePath": "/x", "n": 1}}
    assert predicted_result(ok, Learned())[0] != predicted_result(
        {**ok, "tool_response": {"filePath": "/y"}}, Learned())[0]


def test_edits_answered_alike_are_told_where_grading_fails(tmp_path: Path) -> None:
    """Edits of one file, each answered with the same sentence in the transcript, while
    each hook input carries the Edit's own response (other old and new strings): the
    sentence is learned as a template of the response's fields, and the guard speaks at
    the call where grading the transcript so far first fails (before: never, in
    ``observation`` mode; found replaying real sessions, docs/robustness.md)."""
    source = Path(__file__).parents[1] / "fixtures" / "claude-code" / "edits-answered-alike.jsonl"
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    cfg = [MaxRepeatConfig(max=1)]  # observation: same tool, same answer
    transcript = tmp_path / "s.jsonl"
    spoken, first_fail = [], None
    for i in range(0, len(records), 2):
        use, done = records[i], records[i + 1]
        written = [json.dumps(r) + "\n" for r in records[:i + 1]]
        transcript.write_text("".join(written), encoding="utf-8")
        block = use["message"]["content"][0]
        payload = {**_payload(transcript, "E"), "tool_name": "Edit",
                   "tool_input": block["input"], "tool_use_id": block["id"],
                   "tool_response": done["toolUseResult"]}
        spoken.append(guard(payload, cfg, cache_dir=tmp_path / "c").decision.action)
        transcript.write_text("".join(written) + json.dumps(done) + "\n", encoding="utf-8")
        traj = next(iter(maxrepeat.read_trajectories(transcript, format="claude-code")))
        if first_fail is None and not grade(traj, cfg[0]).passed:
            first_fail = i // 2
    assert first_fail == 1
    assert spoken[first_fail] is Action.WARN and spoken[:first_fail] == [Action.NONE]


def test_a_long_template_is_used_only_once_two_pairs_agree() -> None:
    """A short sentence around the fields is used from one pair; a template with long
    literal text (text of that one call) only once the next pair agrees; a pair
    without any field forgets the shape's template."""
    from maxrepeat.guards.claude_code_results import Learned, predicted_result

    def pair(path: str, text: str) -> dict[str, Any]:
        return {"type": "user", "toolUseResult": {"filePath": path, "type": "create"},
                "message": {"content": [{"type": "tool_result", "tool_use_id": "t",
                                         "content": text}]}}

    def predict(learned: Learned, path: str) -> Any:
        return predicted_result({"hook_event_name": "PostToolUse", "tool_response": {
            "filePath": path, "type": "create"}}, learned)[0]

    learned = Learned()
    learned.learn(pair("/work/a/one.py", "File created successfully at: /work/a/one.py"))
    assert predict(learned, "/work/b/two.py") == "File created successfully at: /work/b/two.py"
    learned.learn(pair("/work/d/four.py", "Wrote it"))  # no field in it: forgotten
    assert predict(learned, "/work/b/two.py").startswith("\x00maxrepeat")
    snippet = "".join(f"{n:6}\tline {n}\n" for n in range(40))  # long literal text
    learned.learn(pair("/work/e/five.py", f"Updated /work/e/five.py:\n{snippet}"))
    assert predict(learned, "/work/b/two.py").startswith("\x00maxrepeat")
    learned.learn(pair("/work/f/six.py", f"Updated /work/f/six.py:\n{snippet}"))
    assert predict(learned, "/work/b/two.py") == f"Updated /work/b/two.py:\n{snippet}"


def test_a_stop_after_a_failure_is_carried_out_at_the_next_call(tmp_path: Path) -> None:
    """Claude Code ignores continue:false from PostToolUseFailure: the guard blocks with
    the reason there and stops the agent from the next PreToolUse."""
    cfg = [MaxRepeatConfig(max=1, match="name")]
    transcript = tmp_path / "s.jsonl"
    lines: list[str] = []
    outs = []
    for i in range(4):
        transcript.write_text("".join(_pending_call(lines, i)), encoding="utf-8")
        payload = {**_payload(transcript), "tool_use_id": f"t{i}",
                   "hook_event_name": "PostToolUseFailure", "error": "Error 1"}
        outs.append(guard(payload, cfg, cache_dir=tmp_path / "c").output)
        lines += _done_call(i)
    assert outs[0] is None and "hookSpecificOutput" in outs[1]
    assert outs[2] is not None and outs[2]["decision"] == "block"
    assert outs[3] is not None and outs[3]["decision"] == "block" and \
        outs[3]["continue"] is False and "(stopped)" in outs[3]["reason"]
    transcript.write_text("".join(_pending_call(lines, 4)), encoding="utf-8")
    pre = guard({**_payload(transcript), "hook_event_name": "PreToolUse",
                 "tool_use_id": "t4"}, cfg, cache_dir=tmp_path / "c").output
    assert pre is not None and pre["continue"] is False
    assert pre["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_pre_tool_use_refuses_only_in_name_modes(tmp_path: Path) -> None:
    """Before a call, a name-args grader refuses the repeat that reaches block_at; an
    observation grader cannot know the result and says nothing."""
    transcript = tmp_path / "s.jsonl"
    lines: list[str] = []
    for i in range(3):
        lines += _done_call(i)
    transcript.write_text("".join(_pending_call(lines, 3)), encoding="utf-8")
    payload = {**_payload(transcript), "hook_event_name": "PreToolUse", "tool_use_id": "t3"}
    out = guard(payload, [MaxRepeatConfig(max=2, match="name-args")],
                cache_dir=tmp_path / "a").output
    assert out is not None and "continue" not in out
    spec = out["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    assert "this call would repeat" in spec["permissionDecisionReason"]
    assert guard(payload, [MaxRepeatConfig(max=2)], cache_dir=tmp_path / "b").output is None
    # At the warning rung nothing is refused: the call runs and the model is warned after.
    assert guard(payload, [MaxRepeatConfig(max=3, match="name-args")],
                 cache_dir=tmp_path / "d").output is None
