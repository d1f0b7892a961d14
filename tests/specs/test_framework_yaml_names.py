"""Config files mean what they mean in the seed framework: YAML 1.2 core schema (not
PyYAML's 1.1) with exact positions, and grader names as the framework's 0.16.0 rule wants
them (unique kebab-case slugs of at most 60 characters), in lint and in the API."""

from __future__ import annotations

import pytest

from maxrepeat import ConfigError, MaxRepeatConfig
from maxrepeat.specs.configfile import parse_config_text

HEAD = "graders:\n  - type: max-repeat\n    config:\n      "


def _load(body: str) -> tuple[list[MaxRepeatConfig], list[str]]:
    configs, problems = parse_config_text(HEAD + body + "\n", "g.yaml")
    return list(configs), [str(p) for p in problems]


@pytest.mark.parametrize(("text", "value"), [
    ("010", 10), ("0o10", 8), ("0x10", 16), ("+3", 3), ("3.0", 3), ("1e1", 10),
    ("!!int 010", 10), ("9007199254740993", 9007199254740992),
])
def test_numbers_are_read_by_yaml_1_2(text: str, value: int) -> None:
    configs, problems = _load(f"max: {text}")
    assert problems == []
    assert configs[0].max == value


@pytest.mark.parametrize(("text", "yaml11"), [("1:30", "90"), ("1_0", "10"), ("0b11", "3"),
                                              ("yes", "true"), ("on", "true")])
def test_yaml_1_1_numbers_and_booleans_are_text_with_a_hint(text: str, yaml11: str) -> None:
    _, problems = _load(f"max: {text}")
    assert problems == [
        f'g.yaml:4:12: graders[0].config.max must be an integer >= 1 (got "{text}"); YAML 1.2 '
        f"(as the framework reads it) reads the unquoted {text} as text; YAML 1.1 tools read "
        f"{yaml11}"]


def test_core_schema_null_and_booleans() -> None:
    _, problems = _load("max: 2\n      match: ~")
    assert problems[0].startswith("g.yaml:5:14: graders[0].config.match must be one of")
    assert "(got null)" in problems[0]
    _, problems = _load("max: TRUE")
    assert "(got true)" in problems[0]


def test_quoted_scalars_stay_text() -> None:
    _, problems = _load('max: "3"')
    assert problems == ['g.yaml:4:12: graders[0].config.max must be an integer >= 1 (got "3")']


@pytest.mark.parametrize("name", ["bash-loops", "a", "x1-2y", "a" * 60])
def test_kebab_case_slugs_are_names(name: str) -> None:
    assert MaxRepeatConfig(2, name=name).name == name
    configs, problems = parse_config_text(
        f"graders:\n  - type: max-repeat\n    name: {name}\n    config:\n      max: 2\n", "g.yaml")
    assert problems == [] and configs[0].name == name


@pytest.mark.parametrize(("name", "hint"), [
    ("Bash Loops!! with spaces", "try bash-loops-with-spaces"), ("bash_loops", "try bash-loops"),
    ("-bash", "try bash"), ("bash--loops", "try bash-loops"), ("a" * 61, "try " + "a" * 60),
    ("Ünïcode", "try n-code"), ("!!!", "use lower-case letters, digits and hyphens"),
])
def test_other_names_are_refused_in_lint_and_in_the_api(name: str, hint: str) -> None:
    with pytest.raises(ConfigError) as err:
        MaxRepeatConfig(2, name=name)
    assert err.value.hint == hint
    _, problems = parse_config_text(
        f"graders:\n  - type: max-repeat\n    name: '{name}'\n    config:\n      max: 2\n",
        "g.yaml")
    assert len(problems) == 1
    assert problems[0].path == "graders[0].name"
    assert problems[0].expectation == "a kebab-case slug of at most 60 characters"
    assert (problems[0].line, problems[0].col) == (3, 11)


def test_a_number_name_is_refused_with_the_yaml_reading() -> None:
    _, problems = parse_config_text(
        "graders:\n  - type: max-repeat\n    name: 010\n    config:\n      max: 2\n", "g.yaml")
    assert [str(p) for p in problems] == [
        "g.yaml:3:11: graders[0].name must be a kebab-case slug of at most 60 characters "
        "(got 10); YAML 1.2 (as the framework reads it) reads the unquoted 010 as 10; YAML 1.1 "
        "tools read 8"]
