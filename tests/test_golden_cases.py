"""Every golden case of ../shared/spec/cases.json, through the API and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import maxrepeat
from maxrepeat.cli import cli

from .conftest import load_cases

CASES = load_cases()
GRADING = CASES["grading"]
LINT = CASES["lint"]


def _pick(result: dict[str, Any], expect: dict[str, Any]) -> dict[str, Any]:
    top = ("status", "passed")
    return {k: result[k] if k in top else result["metadata"][k] for k in expect}


@pytest.mark.parametrize("case", GRADING, ids=[c["name"] for c in GRADING])
def test_grading_case_api(case: dict[str, Any]) -> None:
    """grade() reports what the golden case expects."""
    config = maxrepeat.MaxRepeatConfig(**case["config"])
    got = maxrepeat.grade(case["trajectory"], config).to_dict()
    assert _pick(got, case["expect"]) == case["expect"], case["why"]


@pytest.mark.parametrize("case", GRADING, ids=[c["name"] for c in GRADING])
def test_grading_case_cli(case: dict[str, Any], tmp_path: Path) -> None:
    """`maxrepeat grade --output jsonl` reports what the golden case expects."""
    traj = tmp_path / "t.json"
    traj.write_text(json.dumps(case["trajectory"]), encoding="utf-8")
    cfg = tmp_path / "g.yaml"
    cfg.write_text(yaml.safe_dump({"graders": [{"type": "max-repeat", "config": case["config"]}]}))
    run = CliRunner().invoke(cli, ["grade", str(traj), "--config", str(cfg), "-o", "jsonl", "-q"])
    lines = [json.loads(x) for x in run.stdout.splitlines()]
    assert len(lines) == 1
    assert _pick(lines[0], case["expect"]) == case["expect"], case["why"]
    expected_exit = 2 if case["expect"]["status"] == "error" else (0 if lines[0]["passed"] else 1)
    assert run.exit_code == expected_exit


@pytest.mark.parametrize("case", LINT, ids=[c["name"] for c in LINT])
def test_lint_case(case: dict[str, Any], tmp_path: Path) -> None:
    """`maxrepeat lint` accepts exactly the valid golden configs."""
    cfg = tmp_path / "g.yaml"
    cfg.write_text(json.dumps({"graders": [{"type": "max-repeat", "config": case["config"]}]}))
    run = CliRunner().invoke(cli, ["lint", str(cfg)])
    assert run.exit_code == (0 if case["valid"] else 1), run.output
    if not case["valid"]:
        assert f"{cfg}:" in run.stdout


@pytest.mark.parametrize("case", LINT, ids=[c["name"] for c in LINT])
def test_lint_case_api(case: dict[str, Any]) -> None:
    """MaxRepeatConfig.from_mapping accepts exactly the valid golden configs."""
    if case["valid"]:
        maxrepeat.MaxRepeatConfig.from_mapping(case["config"])
    else:
        with pytest.raises(maxrepeat.ConfigError):
            maxrepeat.MaxRepeatConfig.from_mapping(case["config"])
