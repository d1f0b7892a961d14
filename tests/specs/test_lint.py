"""`maxrepeat lint` and the config loader: every rule, every message, with positions."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import maxrepeat
from maxrepeat.cli import cli

HEAD = "graders:\n  - type: max-repeat\n    config:\n"

# (config body lines under `config:`, the expected message after "g.yaml:")
RULES = [
    ("      max: 0\n", "4:12: graders[0].config.max must be an integer >= 1 (got 0)"),
    ("      max: -2\n", "4:12: graders[0].config.max must be an integer >= 1 (got -2)"),
    ("      max: 2.5\n", "4:12: graders[0].config.max must be an integer >= 1 (got 2.5)"),
    ("      max: true\n", "4:12: graders[0].config.max must be an integer >= 1 (got true)"),
    ('      max: "3"\n', '4:12: graders[0].config.max must be an integer >= 1 (got "3")'),
    ("      match: name\n",
     "4:7: graders[0].config.max must be present: an integer >= 1 (got nothing)"),
    ("      max: 1\n      max_cycle_period: 0\n",
     "5:25: graders[0].config.max_cycle_period must be an integer from 1 to 10 (got 0)"),
    ("      max: 1\n      max_cycle_period: 11\n",
     "5:25: graders[0].config.max_cycle_period must be an integer from 1 to 10 (got 11)"),
    ("      max: 1\n      max_cycle_period: 1.5\n",
     "5:25: graders[0].config.max_cycle_period must be an integer from 1 to 10 (got 1.5)"),
    ("      max: 1\n      match: names\n",
     '5:14: graders[0].config.match must be one of observation, name, name-args (got "names");'
     " did you mean name?"),
    ("      max: 1\n      match: no\n",
     '5:14: graders[0].config.match must be one of observation, name, name-args (got "no");'
     " YAML 1.2 (as the framework reads it) reads the unquoted no as text; YAML 1.1 tools"
     " read false"),
    ("      max: 1:30\n",
     '4:12: graders[0].config.max must be an integer >= 1 (got "1:30"); YAML 1.2 (as the'
     " framework reads it) reads the unquoted 1:30 as text; YAML 1.1 tools read 90"),
    ("      max: 1\n      tools: []\n",
     "5:14: graders[0].config.tools must be a non-empty list of regular expressions (got []);"
     " omit tools to watch every tool"),
    ('      max: 1\n      tools: [""]\n',
     '5:15: graders[0].config.tools[0] must be a non-blank regular expression (got "")'),
    ('      max: 1\n      tools: ["   "]\n',
     '5:15: graders[0].config.tools[0] must be a non-blank regular expression (got "   ")'),
    ("      max: 1\n      tools: ^bash$\n",
     '5:14: graders[0].config.tools must be a non-empty list of regular expressions '
     '(got "^bash$"); write tools: ["^bash$"]'),
    ("      max: 1\n      tools: [3]\n",
     "5:15: graders[0].config.tools[0] must be a string (a regular expression) (got 3)"),
    ('      max: 1\n      tools: ["(unclosed"]\n',
     '5:15: graders[0].config.tools[0] must be a valid JavaScript regular expression '
     '(got "(unclosed");'
     " unterminated group at offset 0"),
    ("      max: 1\n      max_cycle: 2\n",
     "5:7: graders[0].config.max_cycle must be one of the keys max, max_cycle_period, match, "
     "tools, ignore_arguments, normalize, replace, similarity, similarity_min_length, "
     "with_observation "
     "(got unknown key \"max_cycle\"); did you mean max_cycle_period?"),
    ("      max: 1\n      max: 2\n",
     '5:7: graders[0].config.max must be given once (got a second "max" key); '
     "first given at line 4"),
]


def lint_text(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "g.yaml"
    path.write_text(text, encoding="utf-8")
    return [str(p).removeprefix(f"{path}:") for p in maxrepeat.lint(path)]


@pytest.mark.parametrize("body,message", RULES, ids=[m.split(" must")[0] + "|" + b.strip()
                                                      for b, m in RULES])
def test_rule_message(body: str, message: str, tmp_path: Path) -> None:
    """Each broken rule gives exactly one message in the grammar, at the right place."""
    assert lint_text(tmp_path, HEAD + body) == [message]


def test_clean_file_has_no_problems(tmp_path: Path) -> None:
    """A valid config with every key lints clean."""
    body = ('      max: 3\n      max_cycle_period: 10\n      match: name-args\n'
            '      tools: ["^bash$"]\n')
    assert lint_text(tmp_path, HEAD + body) == []


def test_every_problem_is_reported(tmp_path: Path) -> None:
    """Several problems in one file are all reported, in file order."""
    body = "      max: 0\n      match: x\n      extra: 1\n"
    got = lint_text(tmp_path, HEAD + body)
    assert [m.split(":")[0] for m in got] == ["4", "5", "6"]


def test_unknown_grader_type_hints(tmp_path: Path) -> None:
    """A misspelt grader type is an error with a did-you-mean hint."""
    got = lint_text(tmp_path, "graders:\n  - type: max_repeat\n    config: {max: 1}\n")
    assert got == ['2:11: graders[0].type must be max-repeat (got "max_repeat"); '
                   "did you mean max-repeat?"]


def test_unknown_entry_key(tmp_path: Path) -> None:
    """An unknown key beside type/name/config is an error."""
    got = lint_text(tmp_path, "graders:\n  - type: max-repeat\n    nme: x\n    config: {max: 1}\n")
    assert got == ['3:5: graders[0] must be a grader with the keys type, name, config '
                   '(got unknown key "nme"); did you mean name?']


def test_unknown_top_level_key(tmp_path: Path) -> None:
    """Only `graders` is allowed at the top of a config file."""
    got = lint_text(tmp_path, "grader:\n  - type: max-repeat\n")
    assert got[0] == ('1:1: document must be a mapping with the key graders (got unknown key '
                      '"grader"); did you mean graders?')


def test_duplicate_names(tmp_path: Path) -> None:
    """Display names must be unique in a file."""
    text = "graders:\n" + "  - {type: max-repeat, name: a, config: {max: 1}}\n" * 2
    assert lint_text(tmp_path, text) == ['3:30: graders[1].name must be unique in the file '
                                         '(got "a"); graders[0] has it too']


def test_missing_config(tmp_path: Path) -> None:
    """A grader without config is an error."""
    got = lint_text(tmp_path, "graders:\n  - type: max-repeat\n")
    assert got == ["2:5: graders[0].config must be present: a mapping with at least max "
                   "(got nothing)"]


def test_empty_file(tmp_path: Path) -> None:
    """An empty file is an error, not a silent pass."""
    assert lint_text(tmp_path, "") == [
        "1:1: document must be a mapping with a graders list (got an empty document)"]


def test_yaml_syntax_error_has_a_position(tmp_path: Path) -> None:
    """Broken YAML is reported with its line and column."""
    got = lint_text(tmp_path, "graders:\n  - type: [max-repeat\n")
    assert len(got) == 1 and got[0].startswith("3:1: document must be valid YAML")


def test_empty_regex_passes_lint_but_errors_at_grading(tmp_path: Path) -> None:
    """`(?i)` is accepted by lint (spec §2) and refused when grading."""
    assert lint_text(tmp_path, HEAD + '      max: 1\n      tools: ["(?i)"]\n') == []
    cfg = maxrepeat.MaxRepeatConfig(1, tools=["(?i)"])
    assert maxrepeat.grade({"events": []}, cfg).status == "error"


def test_load_config_raises_with_all_problems(tmp_path: Path) -> None:
    """load_config raises the first ConfigError, carrying every problem."""
    path = tmp_path / "g.yaml"
    path.write_text(HEAD + "      max: 0\n      match: x\n", encoding="utf-8")
    with pytest.raises(maxrepeat.ConfigError) as info:
        maxrepeat.load_config(path)
    assert info.value.path == "graders[0].config.max" and info.value.line == 4
    assert len(info.value.problems) == 2


def test_load_config_returns_graders(tmp_path: Path) -> None:
    """load_config returns one MaxRepeatConfig per grader, in file order."""
    path = tmp_path / "g.yaml"
    path.write_text("graders:\n  - {type: max-repeat, name: a, config: {max: 2, match: name}}\n"
                    "  - {type: max-repeat, config: {max: 3.0}}\n", encoding="utf-8")
    a, b = maxrepeat.load_config(path)
    assert (a.name, a.max, a.match) == ("a", 2, "name")
    assert (b.max, b.display_name) == (3, "max-repeat(max=3)")


def test_cli_lint_exit_codes(tmp_path: Path) -> None:
    """lint exits 0 when clean, 1 on problems, 2 on a usage error."""
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(HEAD + "      max: 1\n")
    bad.write_text(HEAD + "      max: 0\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["lint", str(good)]).exit_code == 0
    res = runner.invoke(cli, ["lint", str(good), str(bad)])
    assert res.exit_code == 1
    assert res.stdout == f"{bad}:4:12: graders[0].config.max must be an integer >= 1 (got 0)\n"
    assert runner.invoke(cli, ["lint"]).exit_code == 2
    assert runner.invoke(cli, ["lint", str(tmp_path / "missing.yaml")]).exit_code == 2
