"""The spec's golden cases (this project's own tests/data/spec_cases.yaml) through grade(),
the live monitor, the reference implementation and the command line; and, when the shared
spec sits beside the repository, its cases.json through grade() as a cross-check. Every
test runs on both grading paths: the native fast path and the pure-Python reference."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import maxrepeat
from maxrepeat.core import accel
from tests.conftest import SPEC_CASES, load_cases
from tests.reference import reference
from tests.spec_cases import pick

CASES = load_cases()
GRADING = CASES["grading"]
LINT = CASES["lint"]
IDS = [c["name"] for c in GRADING]


@pytest.fixture(autouse=True, params=["native", "pure"])
def grading_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test on the native fast path (when built) and on the pure-Python reference;
    the command line follows through MAXREPEAT_PURE."""
    if request.param == "native" and not accel.available():
        pytest.skip("the native extension is not built (no C compiler)")
    monkeypatch.setenv("MAXREPEAT_PURE", "1" if request.param == "pure" else "")
    was = accel.use_native(request.param == "native")
    yield request.param
    accel.use_native(was)


def _maxrepeat(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command line, as a separate process."""
    return subprocess.run([sys.executable, "-c", "from maxrepeat.cli import main; main()",
                           *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_cases_cover_every_spec_section() -> None:
    """The data names the spec sections it checks, and every rule section is there."""
    reasons = " ".join(c["why"] for c in [*GRADING, *LINT])
    for section in ("§1", "§2", "§3.1", "§3.2", "§3.3", "§4", "§5", "seed"):
        assert section in reasons, section
    assert {c["expect"]["passed"] for c in GRADING} == {True, False}
    assert {c["valid"] for c in LINT} == {True, False}


@pytest.mark.parametrize("case", GRADING, ids=IDS)
def test_grading_case_api(case: dict[str, Any]) -> None:
    """grade() reports what the case expects."""
    config = maxrepeat.MaxRepeatConfig(**case["config"])
    got = maxrepeat.grade(case["trajectory"], config).to_dict()
    assert pick(got, case["expect"]) == case["expect"], case["why"]


@pytest.mark.parametrize("case", GRADING, ids=IDS)
def test_grading_case_monitor(case: dict[str, Any]) -> None:
    """The live monitor, fed the events one at a time, ends with grade()'s result."""
    config = maxrepeat.MaxRepeatConfig(**case["config"])
    monitor = maxrepeat.Monitor(config)
    final = monitor.feed_all(case["trajectory"]["events"])
    expected = maxrepeat.grade(case["trajectory"], config).to_dict()
    got = final.to_dict()
    got["trajectory"] = expected["trajectory"]
    assert got == expected, case["why"]


@pytest.mark.parametrize("case", [c for c in GRADING if c["expect"]["status"] == "ok"],
                         ids=[c["name"] for c in GRADING if c["expect"]["status"] == "ok"])
def test_grading_case_reference(case: dict[str, Any]) -> None:
    """The brute-force reference (tests/reference.py) agrees with the case's location."""
    ref = reference(case["trajectory"], case["config"])
    expect = case["expect"]
    assert (ref.occurrences, ref.period, ref.start_step, ref.end_step) == (
        expect["occurrences"], expect["period"], expect["startStep"], expect["endStep"])


def test_grading_cases_cli(tmp_path: Path) -> None:
    """`maxrepeat grade --config FILE -o jsonl`, one process for every case: one grader
    per distinct config (each trajectory is read by all of them; a case looks at its own)."""
    configs = sorted({json.dumps(c["config"], sort_keys=True) for c in GRADING})
    graders = [{"type": "max-repeat", "name": f"config{i}", "config": json.loads(config)}
               for i, config in enumerate(configs)]
    (tmp_path / "graders.yaml").write_text(yaml.safe_dump({"graders": graders}),
                                           encoding="utf-8")
    folder = tmp_path / "cases"
    folder.mkdir()
    for case in GRADING:
        (folder / f"{case['name']}.json").write_text(json.dumps(case["trajectory"]),
                                                      encoding="utf-8")
    run = _maxrepeat("grade", "cases", "--config", "graders.yaml", "-o", "jsonl", "-q",
                     cwd=tmp_path)
    rows = {(row["trajectory"], row["name"]): row
            for row in map(json.loads, run.stdout.splitlines())}
    assert len(rows) == len(GRADING) * len(configs), run.stderr
    for case in GRADING:
        grader = f"config{configs.index(json.dumps(case['config'], sort_keys=True))}"
        assert pick(rows[case["name"], grader], case["expect"]) == case["expect"], case["why"]
    assert run.returncode == 2, run.stderr  # the empty-regex cases are error results


@pytest.mark.parametrize("case", LINT, ids=[c["name"] for c in LINT])
def test_lint_case_api(case: dict[str, Any]) -> None:
    """MaxRepeatConfig.from_mapping accepts exactly the valid configs."""
    if case["valid"]:
        maxrepeat.MaxRepeatConfig.from_mapping(case["config"])
    else:
        with pytest.raises(maxrepeat.ConfigError):
            maxrepeat.MaxRepeatConfig.from_mapping(case["config"])


def test_lint_cases_cli(tmp_path: Path) -> None:
    """`maxrepeat lint` on one file per case names exactly the invalid files and exits 1."""
    files = {}
    for case in LINT:
        path = tmp_path / f"{case['name']}.yaml"
        path.write_text(json.dumps({"graders": [{"type": "max-repeat",
                                                 "config": case["config"]}]}),
                        encoding="utf-8")
        files[case["name"]] = path.name
    run = _maxrepeat("lint", *files.values(), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    named = {line.split(":", 1)[0] for line in run.stdout.splitlines() if ":" in line}
    assert named == {files[c["name"]] for c in LINT if not c["valid"]}, run.stdout


@pytest.mark.corpus
def test_shared_spec_cases_agree() -> None:
    """Every grading and lint case of the shared spec's cases.json (beside the repository,
    with the corpus) gives what it expects, so the two sets of cases cannot drift apart."""
    shared = json.loads(SPEC_CASES.read_text(encoding="utf-8"))
    wrong = []
    for case in shared["grading"]:
        got = maxrepeat.grade(case["trajectory"],
                              maxrepeat.MaxRepeatConfig(**case["config"])).to_dict()
        if pick(got, case["expect"]) != case["expect"]:
            wrong.append(case["name"])
    for case in shared["lint"]:
        try:
            maxrepeat.MaxRepeatConfig.from_mapping(case["config"])
            valid = True
        except maxrepeat.ConfigError:
            valid = False
        if valid != case["valid"]:
            wrong.append(case["name"])
    assert wrong == []
    assert len(shared["grading"]) > 0 and len(shared["lint"]) > 0
