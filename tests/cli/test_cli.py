"""The `maxrepeat grade` command: input shapes, output modes, exit codes, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from maxrepeat.cli import cli
from tests.conftest import EXAMPLES, call, result, turn

SPEC_KEYS = ["trajectory", "name", "graderType", "kind", "status", "passed", "score", "evidence",
             "metadata"]
META_KEYS = {"max", "maxCyclePeriod", "match", "tools", "occurrences", "period", "startStep",
             "endStep", "startEvent", "endEvent", "watchedSteps", "watchedCalls", "emptySteps",
             "pattern"}


def run(*args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def looping(tid: str | None = "loop", n: int = 4) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for i in range(n):
        events += turn(call("bash", f"c{i}", {"command": "ls"}), result(f"c{i}", "a.txt"))
    out: dict[str, Any] = {"events": events}
    if tid is not None:
        out["id"] = tid
    return out


def jsonl(res: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]


def write(tmp: Path, name: str, obj: Any) -> str:
    path = tmp / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return str(path)


def test_exit_0_when_everything_passes() -> None:
    """A clean run exits 0."""
    res = run("grade", str(EXAMPLES / "clean.json"), "--config", str(EXAMPLES / "graders.yaml"),
              "-o", "jsonl", "-q")
    assert res.exit_code == 0
    assert all(r["passed"] for r in jsonl(res))


def test_exit_1_when_a_run_fails() -> None:
    """A looping run exits 1."""
    res = run("grade", str(EXAMPLES), "--config", str(EXAMPLES / "graders.yaml"), "-o", "jsonl")
    assert res.exit_code == 1


def test_exit_2_on_malformed_input_takes_precedence(tmp_path: Path) -> None:
    """A malformed file beside a failing one exits 2, and the good file is still graded."""
    bad = write(tmp_path, "bad.json", '{"events": [')
    good = write(tmp_path, "loop.json", looping())
    res = run("grade", bad, good, "--max", "2", "-o", "jsonl", "-q")
    assert res.exit_code == 2
    rows = jsonl(res)
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert rows[1]["passed"] is False
    assert "bad.json:1:" in rows[0]["evidence"]


def test_exit_2_on_bad_inline_flag(tmp_path: Path) -> None:
    """Inline flags are checked by the config rules; a bad one exits 2 with the grammar."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--max", "0")
    assert res.exit_code == 2
    assert "--max must be an integer >= 1 (got 0)" in res.stderr


def test_inline_match_typo_hints(tmp_path: Path) -> None:
    """A misspelt --match value gets a did-you-mean hint."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--max", "2", "--match", "names")
    assert res.exit_code == 2
    assert "did you mean name?" in res.stderr


def test_inline_blank_tools_pattern_rejected(tmp_path: Path) -> None:
    """--tools '' is refused before anything is read."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--max", "2", "--tools", " ")
    assert res.exit_code == 2
    assert "--tools[0] must be a non-blank regular expression" in res.stderr


def test_exit_2_on_bad_config_file(tmp_path: Path) -> None:
    """A config file with problems exits 2 and names each problem."""
    cfg = write(tmp_path, "g.yaml", "graders:\n  - type: max-repeat\n    config: {max: 0}\n")
    res = run("grade", write(tmp_path, "t.json", looping()), "--config", cfg)
    assert res.exit_code == 2
    assert "g.yaml:3:19: graders[0].config.max must be an integer >= 1 (got 0)" in res.stderr


def test_no_grader_is_a_usage_error(tmp_path: Path) -> None:
    """Without --config or --max there is nothing to grade with: exit 2."""
    res = run("grade", write(tmp_path, "t.json", looping()))
    assert res.exit_code == 2


def test_config_and_inline_together_is_a_usage_error(tmp_path: Path) -> None:
    """--config and --max together are ambiguous: exit 2."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--config",
              str(EXAMPLES / "graders.yaml"), "--max", "2")
    assert res.exit_code == 2


def test_no_path_is_a_usage_error() -> None:
    """grade needs at least one path."""
    assert run("grade", "--max", "2").exit_code == 2


def test_missing_file_is_an_error_result(tmp_path: Path) -> None:
    """A path that does not exist gives an error result naming it, exit 2."""
    res = run("grade", str(tmp_path / "nope.json"), "--max", "2", "-o", "jsonl", "-q")
    assert res.exit_code == 2
    [row] = jsonl(res)
    assert row["status"] == "error" and "nope.json" in row["evidence"]


def test_jsonl_rows_have_exactly_the_spec_keys(tmp_path: Path) -> None:
    """Each JSONL row has the keys of spec §5, metadata included."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--max", "3", "-o", "jsonl", "-q")
    [row] = jsonl(res)
    assert list(row) == SPEC_KEYS
    assert META_KEYS <= set(row["metadata"])
    assert row["graderType"] == "max-repeat" and row["kind"] == "code"
    assert row["score"] == 0.0 and row["metadata"]["occurrences"] == 4


def test_json_output_is_one_document(tmp_path: Path) -> None:
    """--output json writes one document with results and a summary."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--max", "3", "-o", "json")
    doc = json.loads(res.stdout)
    assert [r["trajectory"] for r in doc["results"]] == ["loop"]
    assert doc["summary"]["failed"] == 1 and doc["summary"]["results"] == 1


def test_console_output_lines_and_summary(tmp_path: Path) -> None:
    """--output console prints a mark, the name and the evidence, then a summary."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--max", "3", "-o", "console")
    first = res.stdout.splitlines()[0]
    assert first.startswith("FAIL") and "loop" in first and "repeated 4 times" in first
    assert "1 trajectory, 1 result: 0 passed, 1 failed, 0 errors" in res.stdout


def test_console_neutralises_control_characters(tmp_path: Path) -> None:
    """ANSI escapes in an id or a result never reach the terminal raw."""
    traj = looping(tid="evil\x1b[2J\x07")
    traj["events"][2]["data"]["result"] = "\x1b]0;pwned\x07"
    res = run("grade", write(tmp_path, "t.json", traj), "--max", "3", "-o", "console")
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "\\u001b" in res.stdout


def test_stdin_dash(tmp_path: Path) -> None:
    """`-` reads standard input."""
    res = run("grade", "-", "--max", "3", "-o", "jsonl", "-q",
              input=json.dumps(looping()).encode())
    [row] = jsonl(res)
    assert row["trajectory"] == "loop" and row["passed"] is False


def test_directory_is_walked_in_sorted_order() -> None:
    """A directory grades every trajectory file in it, in sorted order."""
    res = run("grade", str(EXAMPLES), "--max", "3", "-o", "jsonl", "-q")
    assert [r["trajectory"] for r in jsonl(res)] == [
        "clean-refactor", "push-pull-cycle", "stuck-on-flaky-test"]


@pytest.mark.parametrize("shape", ["object", "bare", "array", "jsonl", "jsonl-records"])
def test_input_shapes(shape: str, tmp_path: Path) -> None:
    """Every native input shape is read, and runs are named by id or position."""
    a, b = looping("a"), looping(None, 2)
    if shape == "object":
        text, names = json.dumps(a), ["a"]
    elif shape == "bare":
        text, names = json.dumps({"events": b["events"]}), ["{p}"]
    elif shape == "array":
        text, names = json.dumps([a, b]), ["a", "{p}[1]"]
    elif shape == "jsonl":
        text, names = json.dumps(a) + "\n" + json.dumps(b) + "\n", ["a", "{p}:2"]
    else:
        text = "\n".join(json.dumps({"trajectory": t, "score": 1}) for t in (a, b)) + "\n"
        names = ["a", "{p}:2"]
    path = write(tmp_path, "in.json", text)
    rows = jsonl(run("grade", path, "--max", "3", "-o", "jsonl", "-q"))
    assert [r["trajectory"] for r in rows] == [n.format(p=path) for n in names]
    assert [r["status"] for r in rows] == ["ok"] * len(names)


def test_jsonl_bad_line_is_an_error_other_lines_graded(tmp_path: Path) -> None:
    """A broken JSONL line is an error with its line; the lines around it are graded."""
    text = json.dumps(looping("a")) + "\n{not json\n" + json.dumps(looping("c")) + "\n"
    path = write(tmp_path, "runs.jsonl", text)
    res = run("grade", path, "--max", "3", "-o", "jsonl", "-q")
    rows = jsonl(res)
    assert [r["status"] for r in rows] == ["ok", "error", "ok"]
    assert f"{path}:2:" in rows[1]["evidence"]
    assert res.exit_code == 2


def test_malformed_event_names_its_path(tmp_path: Path) -> None:
    """A tool_call without a string toolName is an error naming the event's key path."""
    traj = looping()
    traj["events"][1]["data"]["toolName"] = 7
    rows = jsonl(run("grade", write(tmp_path, "t.json", traj), "--max", "3", "-o", "jsonl"))
    assert rows[0]["status"] == "error"
    assert "events[1].data.toolName must be a string" in rows[0]["evidence"]


def test_nan_is_read_leniently(tmp_path: Path) -> None:
    """NaN makes strict JSON fail; the standard library reads it and the result says so."""
    text = json.dumps(looping()).replace('"a.txt"', "NaN", 1)
    rows = jsonl(run("grade", write(tmp_path, "t.json", text), "--max", "3", "-o", "jsonl"))
    assert rows[0]["status"] == "ok" and rows[0]["metadata"]["lenient"] is True


def test_bom_is_accepted(tmp_path: Path) -> None:
    """A UTF-8 byte order mark does not break reading."""
    path = tmp_path / "t.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(looping()).encode())
    rows = jsonl(run("grade", str(path), "--max", "3", "-o", "jsonl"))
    assert rows[0]["status"] == "ok" and rows[0]["metadata"]["lenient"] is False


def test_unknown_shape_lists_known_formats(tmp_path: Path) -> None:
    """A file no reader recognises is an error listing the known formats."""
    res = run("grade", write(tmp_path, "x.json", '{"hello": 1}'), "--max", "3", "-o", "jsonl")
    [row] = jsonl(res)
    assert row["status"] == "error" and "known formats: " in row["evidence"]
    assert "vally" in row["evidence"]


def test_several_graders_are_reported_separately(tmp_path: Path) -> None:
    """Each grader of a config file gives its own result per trajectory."""
    res = run("grade", write(tmp_path, "t.json", looping()), "--config",
              str(EXAMPLES / "graders.yaml"), "-o", "jsonl", "-q")
    assert [r["name"] for r in jsonl(res)] == ["same-output", "bash-cycles"]


def test_unnamed_graders_get_unique_names(tmp_path: Path) -> None:
    """Two unnamed graders with the same config still get distinct names."""
    cfg = write(tmp_path, "g.yaml", "graders:\n" + "  - {type: max-repeat, config: {max: 2}}\n" * 2)
    res = run("grade", write(tmp_path, "t.json", looping()), "--config", cfg, "-o", "jsonl")
    assert [r["name"] for r in jsonl(res)] == ["max-repeat(max=2)", "max-repeat(max=2) #2"]


def test_help_documents_exit_codes() -> None:
    """`grade --help` states the exit codes."""
    out = run("grade", "--help").stdout
    assert "Exit codes: 0" in out and "2 at least one error" in out


def test_max_runs_flag_caps_listed_runs(tmp_path: Path) -> None:
    """``grade --max-runs N`` (a separate process) lists the N largest runs and counts all;
    0 lists every run; a negative N is a usage error (exit 2)."""
    import subprocess
    import sys

    events: list[dict[str, Any]] = []
    for i in range(5):  # five separate loops: t0 x2, t1 x3, t2 x4, t3 x5, t4 x6
        for k in range(2 + i):
            cid = f"c{i}-{k}"
            events += turn(call(f"t{i}", cid), result(cid, "ok"))
        events += turn(call("other", f"o{i}"), result(f"o{i}", str(i)))
    path = write(tmp_path, "t.json", {"id": "many", "events": events})
    cli_ = [sys.executable, "-c", "from maxrepeat.cli import main; main()", "grade", path,
            "--max", "1", "--match", "name", "-o", "jsonl", "-q"]

    def meta(*extra: str) -> dict[str, Any]:
        proc = subprocess.run([*cli_, *extra], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1, proc.stderr
        out: dict[str, Any] = json.loads(proc.stdout)["metadata"]
        return out

    two = meta("--max-runs", "2")
    assert [r["occurrences"] for r in two["runs"]] == [5, 6]
    assert two["runsTotal"] == 5 and two["loopSteps"] == 2 + 3 + 4 + 5 + 6
    every = meta("--max-runs", "0")
    assert [r["occurrences"] for r in every["runs"]] == [2, 3, 4, 5, 6]
    assert every["runsTotal"] == 5 and every["loopSteps"] == two["loopSteps"]
    assert len(meta()["runs"]) == 5  # the default cap (100) is above 5
    bad = subprocess.run([*cli_, "--max-runs", "-1"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "--max-runs" in bad.stderr
