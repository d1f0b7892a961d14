"""lint reports every problem in one pass, and --max reads numbers as a config file does
(issue 18, finding 15)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.specs.configfile import parse_config_text
from maxrepeat.specs.evalspec import parse_eval_spec_text

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def test_a_duplicate_stimulus_name_does_not_hide_its_graders_problems() -> None:
    text = ("stimuli:\n  - name: a\n    graders:\n      - type: max-repeat\n"
            "        config: {max: 2}\n  - name: a\n    graders:\n"
            "      - type: max-repeat\n        config: {max: -1}\n")
    _, problems = parse_eval_spec_text(text, "e.yaml")
    paths = sorted(p.path for p in problems)
    assert paths == ["stimuli[1].graders[0].config.max", "stimuli[1].name"]


def test_an_error_in_a_grader_does_not_hide_a_duplicate_grader_name() -> None:
    text = ("graders:\n  - type: max-repeat\n    name: g\n    config: {max: -1}\n"
            "  - type: max-repeat\n    name: g\n    config: {max: 2}\n")
    _, problems = parse_config_text(text, "g.yaml")
    assert sorted(p.path for p in problems) == ["graders[0].config.max", "graders[1].name"]


def test_duplicate_grader_names_inside_a_stimulus_with_errors_are_reported() -> None:
    text = ("stimuli:\n  - name: a\n    graders:\n      - type: max-repeat\n        name: g\n"
            "        config: {max: 0}\n      - type: max-repeat\n        name: g\n"
            "        config: {max: 2}\n")
    _, problems = parse_eval_spec_text(text, "e.yaml")
    assert sorted(p.path for p in problems) == ["stimuli[0].graders[0].config.max",
                                                "stimuli[0].graders[1].name"]


@pytest.mark.parametrize("value, got", [("1" * 5000, "(got a 5000-digit number)"),
                                        ("３", '(got "３")'), ("１０", '(got "１０")')])
def test_max_flag_rejects_huge_and_full_width_numbers_clearly(
        tmp_path: Path, value: str, got: str) -> None:
    run = tmp_path / "run.json"
    run.write_text('{"events": []}', encoding="utf-8")
    proc = subprocess.run([*CLI, "grade", str(run), "--max", value], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert f"--max must be an integer >= 1 {got}" in proc.stderr
    assert "inf" not in proc.stderr
