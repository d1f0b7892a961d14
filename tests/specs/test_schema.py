"""`maxrepeat schema`: the JSON Schema agrees with the loader on the golden lint cases."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from maxrepeat.cli import cli
from maxrepeat.core.configrules import check_config, is_empty_regex
from maxrepeat.core.toolmatch import PatternSyntaxError, compile_pattern
from maxrepeat.specs.schema import config_schema
from tests.conftest import load_cases

LINT = load_cases()["lint"]
VALIDATOR = jsonschema.Draft202012Validator(config_schema())


def _expressible(config: Any) -> bool:
    """Whether every rule the config breaks can be written in JSON Schema.

    Excluded (documented in maxrepeat.specs.schema): a tools pattern that does not compile and
    one that parses to an empty regex.
    """
    tools = config.get("tools") if isinstance(config, dict) else None
    if isinstance(tools, list):
        for item in tools:
            if isinstance(item, str) and item.strip():
                try:
                    compile_pattern(item)
                except PatternSyntaxError:
                    return False
                if is_empty_regex(item):
                    return False
    return True


def _document(config: Any) -> dict[str, Any]:
    return {"graders": [{"type": "max-repeat", "config": config}]}


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    """The generated schema is itself valid under the draft 2020-12 meta-schema."""
    jsonschema.Draft202012Validator.check_schema(config_schema())


@pytest.mark.parametrize("case", [c for c in LINT if c["valid"]],
                         ids=[c["name"] for c in LINT if c["valid"]])
def test_schema_accepts_valid_lint_case(case: dict[str, Any]) -> None:
    """Every valid golden config validates against the schema."""
    errors = list(VALIDATOR.iter_errors(_document(case["config"])))
    assert errors == [], [e.message for e in errors]


INVALID = [c for c in LINT if not c["valid"] and _expressible(c["config"])]


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_schema_rejects_invalid_lint_case(case: dict[str, Any]) -> None:
    """Every invalid golden config whose rule JSON Schema can state fails validation."""
    assert not VALIDATOR.is_valid(_document(case["config"])), case["config"]


@pytest.mark.parametrize("document", [
    {},
    {"graders": []},
    {"graders": [{"type": "max-repeat", "config": {"max": 1}}], "extra": 1},
    {"graders": [{"type": "loop", "config": {"max": 1}}]},
    {"graders": [{"type": "max-repeat"}]},
    {"graders": [{"type": "max-repeat", "name": "  ", "config": {"max": 1}}]},
    {"graders": [{"type": "max-repeat", "config": {"max": 1}, "weight": 2}]},
])
def test_schema_rejects_bad_file_structure(document: dict[str, Any]) -> None:
    """The file-level rules (graders list, entry keys, type, name) are in the schema too."""
    assert not VALIDATOR.is_valid(document)


def test_schema_and_loader_agree_on_many_configs() -> None:
    """Over a grid of key values, schema and check_config agree wherever the rule is
    expressible."""
    values: list[Any] = [None, 0, 1, 3, 3.0, 2.5, 10, 11, -1, True, "3", "name", "names",
                         [], [""], ["^bash$"], ["a", 2], "x", {"a": 1}]
    for key in ("max", "max_cycle_period", "match", "tools", "other"):
        for value in values:
            config = {"max": 2, key: value}
            loader_ok = not check_config(config)
            assert VALIDATOR.is_valid(_document(config)) == loader_ok, config


def test_cli_prints_the_schema() -> None:
    """`maxrepeat schema` prints the schema as JSON."""
    run = CliRunner().invoke(cli, ["schema"])
    assert run.exit_code == 0
    assert json.loads(run.stdout) == config_schema()


NEAR_GOOD = [
    {"max": 2, "match": "name-args", "ignore_arguments": {"^Bash$": ["description"]}},
    {"max": 2, "match": "name-args", "ignore_arguments": ["description"]},
    {"max": 2, "normalize": ["volatile", "numbers"]},
    {"max": 2, "replace": [{"pattern": "marker\\d+", "with": "marker"}]},
    {"max": 2, "similarity": 0.9, "similarity_min_length": 100},
    {"max": 2, "match": "name-args", "with_observation": True},
]
NEAR_BAD = [
    {"max": 2, "normalize": ["volatil"]},
    {"max": 2, "normalize": []},
    {"max": 2, "replace": [{"pattern": "x"}]},
    {"max": 2, "similarity": 0.2},
    {"max": 2, "similarity_min_length": 0, "similarity": 0.9},
    {"max": 2, "match": "name-args", "ignore_arguments": {"Bash": "description"}},
    {"max": 2, "match": "name-args", "with_observation": "yes"},
]


@pytest.mark.parametrize("config", NEAR_GOOD + NEAR_BAD)
def test_schema_and_loader_agree_on_near_duplicate_keys(config: dict[str, Any]) -> None:
    """The near-duplicate keys: what the schema accepts, the loader accepts (the loader's
    cross-key rules, such as ignore_arguments needing name-args, are beyond a schema)."""
    schema_ok = VALIDATOR.is_valid(_document(config))
    assert schema_ok == (config in NEAR_GOOD)
    assert (not check_config(config)) == (config in NEAR_GOOD)


def test_the_schema_docstring_names_the_regex_dialect_lint_uses() -> None:
    """`maxrepeat schema`'s module says what lint checks: JavaScript patterns (issue 31),
    not Python's."""
    import maxrepeat.specs.schema as schema

    doc = schema.__doc__ or ""
    assert "Python regular expression" not in doc
    assert "JavaScript regular expression" in " ".join(doc.split())
