"""A JSON Schema (draft 2020-12) of the config file, generated from the loader's rules.

Editors that speak JSON Schema (yaml-language-server, VS Code, JetBrains) then flag a bad
config while it is typed. Everything comes from `CONFIG_SPEC`, `ROOT_KEYS`, `ENTRY_KEYS`
and `GRADER_TYPE`, the definitions `check_config` and the file loader enforce.

Rules JSON Schema cannot state, left to ``maxrepeat lint``:

- a ``tools`` pattern must compile as a JavaScript regular expression, as
  ``new RegExp(source, flags)`` reads it (ECMAScript without the ``u`` flag, Annex B
  included, after a leading ``(?i)``-style flags group; `core.toolmatch`); the schema
  only marks it with the annotation ``"format": "regex"`` (ECMA-262 in JSON Schema),
  which validators check only when asked to. A pattern whose source is empty, such as
  ``(?i)``, is a grading-time error;
- grader ``name`` values must be unique within the file;
- YAML 1.1 coercions (an unquoted ``no`` read as false) are explained only by lint.
"""

from __future__ import annotations

from typing import Any, Final

from ..core.configrules import CONFIG_SPEC, ENTRY_KEYS, GRADER_TYPE, ROOT_KEYS, KeySpec
from ..core.near.config import near_schemas

__all__ = ["config_schema", "SCHEMA_DIALECT"]

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

#: a string with at least one non-whitespace character (the "non-blank" rule)
_NON_BLANK: Final = r"\S"


def _key_schema(spec: KeySpec) -> dict[str, Any]:
    out: dict[str, Any] = {"description": spec.description}
    if spec.kind == "integer":
        # JSON Schema's "integer" also accepts 3.0, as the loader does; never booleans.
        out["type"] = "integer"
        if spec.minimum is not None:
            out["minimum"] = spec.minimum
        if spec.maximum is not None:
            out["maximum"] = spec.maximum
    elif spec.kind == "choice":
        out["type"] = "string"
        out["enum"] = list(spec.choices)
    elif spec.kind == "near":
        out.update(near_schemas()[spec.key])  # near-duplicate keys (core/near/config.py)
    else:
        out["type"] = "array"
        out["minItems"] = 1
        out["items"] = {"type": "string", "pattern": _NON_BLANK, "format": "regex"}
    if spec.default is not None:
        out["default"] = spec.default
    return out


def config_schema() -> dict[str, Any]:
    """The JSON Schema of a ``graders:`` config file, as a JSON-ready dict.

    >>> schema = config_schema()
    >>> schema["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    >>> config = schema["$defs"]["config"]
    >>> config["required"], config["properties"]["max_cycle_period"]["maximum"]
    (['max'], 10)
    """
    config: dict[str, Any] = {
        "type": "object",
        "description": f"The settings of one {GRADER_TYPE} grader.",
        "properties": {spec.key: _key_schema(spec) for spec in CONFIG_SPEC},
        "required": [spec.key for spec in CONFIG_SPEC if spec.required],
        "additionalProperties": False,
    }
    entry_props: dict[str, Any] = {
        "type": {"const": GRADER_TYPE, "description": "The grader type."},
        "name": {
            "type": "string",
            "pattern": _NON_BLANK,
            "description": "Display name in results (unique within the file).",
        },
        "config": {"$ref": "#/$defs/config"},
    }
    assert tuple(entry_props) == ENTRY_KEYS  # a new entry key needs a schema here too
    entry: dict[str, Any] = {
        "type": "object",
        "description": f"One {GRADER_TYPE} grader.",
        "properties": entry_props,
        "required": ["type", "config"],
        "additionalProperties": False,
    }
    root_props: dict[str, Any] = {
        "graders": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/grader"},
            "description": "The graders; each is graded independently.",
        }
    }
    assert tuple(root_props) == ROOT_KEYS
    return {
        "$schema": SCHEMA_DIALECT,
        "title": f"maxrepeat config file ({GRADER_TYPE} graders)",
        "type": "object",
        "properties": root_props,
        "required": list(ROOT_KEYS),
        "additionalProperties": False,
        "$defs": {"grader": entry, "config": config},
    }
