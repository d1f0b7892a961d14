"""The one grading driver: every output format and input mode goes through the worker
pool, and the HTML timelines come from the steps grading built (no second read)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import maxrepeat
from maxrepeat.core import grade as core_grade
from maxrepeat.engines.batch import BatchGrader
from maxrepeat.engines.driver import Graders, SpecGraders, grade_item
from maxrepeat.reporters import html
from maxrepeat.specs.evalspec import load_eval_spec
from tests.conftest import EXAMPLES, call, result, turn

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
CFG = [maxrepeat.MaxRepeatConfig(2), maxrepeat.MaxRepeatConfig(1, match="name-args")]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """Eight small trajectories (two stimuli) in two folders, and one unreadable file."""
    for i in range(8):
        sub = tmp_path / ("a" if i < 4 else "b")
        sub.mkdir(exist_ok=True)
        events = []
        for k in range(i % 4 + 1):
            events += turn(call("bash", f"c{k}", {"cmd": "make"}), result(f"c{k}", "same"))
        stimulus = "clean-refactor" if i % 2 else "push-pull-cycle"
        doc = {"id": f"run-{i}", "stimulus": {"name": stimulus}, "events": events}
        (sub / f"{i}.json").write_text(json.dumps(doc))
    (tmp_path / "b" / "broken.json").write_text('{"events": [')
    return tmp_path


def test_html_timelines_are_made_in_the_workers_from_the_grading_steps(tree: Path) -> None:
    """With two workers, each result's timeline is the one drawn from a fresh read."""
    with BatchGrader([str(tree)], CFG, jobs=2, chunk=1, detail=html.timeline) as batch:
        graded = list(batch.graded())
        assert batch.used_pool
    assert len(graded) == 9 and graded[-1].error is not None
    by_id = {p.stem: json.loads(p.read_text()) for p in tree.rglob("[0-9].json")}
    for item in graded[:-1]:
        assert item.details is not None
        for res, detail, cfg in zip(item.results, item.details, CFG, strict=True):
            assert detail == html.timeline_of(by_id[res.trajectory.split("-")[1]], cfg)
    assert graded[-1].details == (None, None)


def test_grading_never_fingerprints_twice_for_a_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """One step table per trajectory and grader, with or without the HTML detail."""
    calls = []
    real = core_grade.build_step_table

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(core_grade, "build_step_table", counting)
    trajectory = maxrepeat.Trajectory([maxrepeat.tool_call("bash", "c1")], id="r")
    graded = grade_item(trajectory, Graders(CFG), "-", html.timeline)
    assert len(calls) == 2 and graded.details is not None and None not in graded.details


def test_spec_graders_pick_the_stimulus_and_name_the_misfits() -> None:
    """An eval spec's graders: those of the trajectory's stimulus; one error otherwise."""
    spec = load_eval_spec(EXAMPLES / "eval.yaml")
    graders = SpecGraders(spec)
    known = maxrepeat.Trajectory([], id="k", stimulus="push-pull-cycle")
    unknown = maxrepeat.Trajectory([], id="u", stimulus="nope")
    assert [r.name for r in grade_item(known, graders, "-").results] == ["bash-cycles"]
    [miss] = grade_item(unknown, graders, "-").results
    assert (miss.name, miss.status) == ("eval-spec", "error")
    assert "stimulus \"nope\" is not in" in miss.evidence


@pytest.mark.parametrize("output", ["html", "json"])
def test_cli_eval_spec_and_html_outputs_are_the_same_under_any_jobs(
    tree: Path, output: str
) -> None:
    """-j applies to every output and to eval specs: the bytes do not depend on it."""
    runs = [
        subprocess.run([*CLI, "grade", str(tree), "--eval-spec", str(EXAMPLES / "eval.yaml"),
                        "-o", output, "-q", "-j", jobs], capture_output=True, text=True,
                       check=False)
        for jobs in ("1", "2")
    ]
    assert runs[0].returncode == runs[1].returncode == 2  # the broken file
    assert runs[0].stdout == runs[1].stdout
    assert "run-7" in runs[0].stdout and "bash-cycles" in runs[0].stdout
