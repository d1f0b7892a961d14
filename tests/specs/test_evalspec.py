"""Eval specs: `maxrepeat grade --eval-spec` and `maxrepeat lint` on stimuli: files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat.cli import cli
from maxrepeat.specs.configfile import parse_config_text
from maxrepeat.specs.evalspec import SPEC_RESULT_NAME, is_eval_spec, parse_eval_spec_text
from tests.conftest import EXAMPLES, call, load_cases, turn

SPEC = EXAMPLES / "eval.yaml"


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _jsonl(run: Result) -> list[dict[str, Any]]:
    return [json.loads(x) for x in run.stdout.splitlines()]


def _trajectory(path: Path, stimulus: str | None, repeats: int = 4) -> Path:
    doc: dict[str, Any] = {"id": path.stem, "events": [
        e for i in range(repeats) for e in turn(call("bash", f"c{i}", {"command": "make"}))]}
    if stimulus is not None:
        doc["stimulus"] = {"name": stimulus, "prompt": "build it"}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _spec_file(tmp_path: Path, stimuli: list[dict[str, Any]]) -> Path:
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump({"stimuli": stimuli}, sort_keys=False), encoding="utf-8")
    return path


def test_each_trajectory_gets_the_graders_of_its_stimulus() -> None:
    """The example trajectories are graded by their own stimulus's max-repeat graders."""
    run = _run("grade", str(EXAMPLES), "--eval-spec", str(SPEC), "-o", "jsonl", "-q")
    got = [(r["trajectory"], r["name"], r["passed"]) for r in _jsonl(run)]
    assert got == [
        ("clean-refactor", "same-output", True),
        ("push-pull-cycle", "bash-cycles", False),
        ("stuck-on-flaky-test", "same-output", False),
    ]
    assert run.exit_code == 1


def test_stimulus_option_overrides_the_trajectorys_own() -> None:
    """--stimulus applies one stimulus's graders to every trajectory."""
    run = _run("grade", str(EXAMPLES), "--eval-spec", str(SPEC), "--stimulus", "push-pull-cycle",
               "-o", "jsonl", "-q")
    assert [r["name"] for r in _jsonl(run)] == ["bash-cycles"] * 3


def test_skipped_grader_types_are_reported_once(tmp_path: Path) -> None:
    """The other grader types are named once on stderr, not per trajectory."""
    run = _run("grade", str(EXAMPLES), "--eval-spec", str(SPEC), "-o", "jsonl")
    notes = [ln for ln in run.stderr.splitlines() if "skipped" in ln]
    assert len(notes) == 1
    assert "file-exists (1), output-contains (1)" in notes[0]


def test_unknown_stimulus_is_an_error_result(tmp_path: Path) -> None:
    """A trajectory whose stimulus is not in the spec gets an error result saying so."""
    traj = _trajectory(tmp_path / "other.json", "not-in-spec")
    run = _run("grade", str(traj), "--eval-spec", str(SPEC), "-o", "jsonl", "-q")
    [result] = _jsonl(run)
    assert result["status"] == "error" and result["name"] == SPEC_RESULT_NAME
    assert '"not-in-spec" is not in' in result["evidence"]
    assert run.exit_code == 2


def test_trajectory_without_stimulus_is_an_error_result(tmp_path: Path) -> None:
    """A trajectory naming no stimulus gets an error result pointing at --stimulus."""
    traj = _trajectory(tmp_path / "bare.json", None)
    run = _run("grade", str(traj), "--eval-spec", str(SPEC), "-o", "jsonl", "-q")
    [result] = _jsonl(run)
    assert result["status"] == "error" and "--stimulus" in result["evidence"]


def test_summary_counts_trajectories_not_graders(tmp_path: Path) -> None:
    """Stimuli with different numbers of graders still count each trajectory once."""
    spec = _spec_file(tmp_path, [
        {"name": "a", "graders": [{"type": "max-repeat", "config": {"max": 1}},
                                  {"type": "max-repeat", "config": {"max": 9}}]},
        {"name": "b", "graders": [{"type": "max-repeat", "config": {"max": 2}}]},
    ])
    _trajectory(tmp_path / "t1.json", "a")
    _trajectory(tmp_path / "t2.json", "b")
    run = _run("grade", str(tmp_path / "t1.json"), str(tmp_path / "t2.json"),
               "--eval-spec", str(spec), "-o", "json", "-q")
    summary = json.loads(run.stdout)["summary"]
    assert (summary["trajectories"], summary["results"]) == (2, 3)


@pytest.mark.parametrize("args", [
    ["--eval-spec", str(SPEC), "--config", str(EXAMPLES / "graders.yaml")],
    ["--eval-spec", str(SPEC), "--max", "3"],
    ["--stimulus", "clean-refactor", "--max", "3"],
    ["--eval-spec", str(SPEC), "--stimulus", "nope"],
])
def test_conflicting_or_unknown_options_are_usage_errors(args: list[str]) -> None:
    """Mixing --eval-spec with other graders, a lone --stimulus or an unknown one exits 2."""
    run = _run("grade", str(EXAMPLES), *args, "-o", "jsonl")
    assert run.exit_code == 2 and run.stdout == ""


def test_bad_spec_stops_grading_with_every_problem(tmp_path: Path) -> None:
    """A spec with a broken max-repeat entry is reported with positions, nothing graded."""
    spec = _spec_file(tmp_path, [
        {"name": "a", "graders": [{"type": "max-repeat", "config": {"max": 0}}]},
        {"name": "b", "graders": [{"type": "max-repeat", "config": {"max": 1, "match": "nam"}}]},
    ])
    run = _run("grade", str(EXAMPLES), "--eval-spec", str(spec), "-o", "jsonl")
    assert run.exit_code == 2 and run.stdout == ""
    assert "stimuli[0].graders[0].config.max must be" in run.stderr
    assert "stimuli[1].graders[0].config.match must be" in run.stderr


def test_lint_checks_only_max_repeat_entries(tmp_path: Path) -> None:
    """Lint reports the max-repeat problem at its line and column, ignoring other graders."""
    path = tmp_path / "eval.yaml"
    path.write_text(
        "stimuli:\n"
        "  - name: a\n"
        "    prompt: hi\n"
        "    graders:\n"
        "      - type: output-contains\n"
        "        config: {whatever: [1, 2]}\n"
        "      - type: max-repeat\n"
        "        config:\n"
        "          max: 2\n"
        "          max_cycle_period: 11\n", encoding="utf-8")
    run = _run("lint", str(path))
    assert run.exit_code == 1
    assert run.stdout.splitlines() == [
        f"{path}:10:29: stimuli[0].graders[1].config.max_cycle_period must be an integer "
        "from 1 to 10 (got 11)"]


def test_lint_accepts_the_example_spec() -> None:
    """The bundled example eval spec is clean."""
    assert _run("lint", str(SPEC)).exit_code == 0


@pytest.mark.parametrize("stimuli, expect", [
    ([{"prompt": "x", "graders": [{"type": "max-repeat", "config": {"max": 1}}]}],
     "stimuli[0].name must be a non-blank string"),
    ([{"name": "a", "graders": [{"type": "max-repeat", "config": {"max": 1}}]},
      {"name": "a", "graders": []}], "stimuli[1].name must be unique among the stimuli"),
    ([{"name": "a", "graders": [{"type": "file-exists", "config": {}}]}],
     "stimuli must be a list in which some stimulus has a max-repeat grader"),
    ([{"name": "a", "graders": [{"type": "max-repeat", "name": "x", "config": {"max": 1}},
                                {"type": "max-repeat", "name": "x", "config": {"max": 2}}]}],
     "stimuli[0].graders[1].name must be unique in the stimulus"),
])
def test_lint_reports_what_stops_matching(stimuli: list[dict[str, Any]], expect: str,
                                          tmp_path: Path) -> None:
    """Nameless, duplicate or grader-less stimuli and duplicate grader names are problems."""
    run = _run("lint", str(_spec_file(tmp_path, stimuli)))
    assert run.exit_code == 1 and expect in run.stdout


CASES = load_cases()["lint"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_golden_lint_case_inside_an_eval_spec(case: dict[str, Any]) -> None:
    """A golden config gets the same problems in an eval spec as in a config file."""
    entry = {"type": "max-repeat", "config": case["config"]}
    as_config = parse_config_text(json.dumps({"graders": [entry]}), "g")[1]
    as_spec = parse_eval_spec_text(
        json.dumps({"stimuli": [{"name": "s", "graders": [entry]}]}), "e")[1]
    assert [(p.path, p.expectation, p.got) for p in as_spec] == [
        ("stimuli[0]." + p.path, p.expectation, p.got) for p in as_config]
    assert bool(as_spec) != case["valid"]


def test_config_files_are_not_eval_specs() -> None:
    """A graders: file is linted as a config file, a stimuli: file as an eval spec."""
    assert not is_eval_spec((EXAMPLES / "graders.yaml").read_text(encoding="utf-8"))
    assert is_eval_spec(SPEC.read_text(encoding="utf-8"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["max-repeat", "file-exists", "output-contains"]),
                         max_size=4), min_size=1, max_size=4))
def test_graders_and_skipped_types_partition_the_entries(types: list[list[str]]) -> None:
    """Every grader entry is either a max-repeat grader of its stimulus or a skipped type."""
    stimuli = [{"name": f"s{i}", "graders": [{"type": t, "config": {"max": 1}} for t in ts]}
               for i, ts in enumerate(types)]
    spec, problems = parse_eval_spec_text(json.dumps({"stimuli": stimuli}), "e")
    ours = sum(t == "max-repeat" for ts in types for t in ts)
    assert bool(problems) == (ours == 0)
    for i, ts in enumerate(types):
        assert len(spec.stimuli[f"s{i}"].graders) == ts.count("max-repeat")
    others = [t for ts in types for t in ts if t != "max-repeat"]
    assert spec.skipped_types == {t: others.count(t) for t in sorted(set(others))}
