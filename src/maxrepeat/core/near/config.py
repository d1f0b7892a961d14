"""The near-duplicate keys of a grader config: their rules (message grammar) and the
`NearDup` settings built from them. `check_config` calls `check_near`; the JSON Schema
takes `near_schemas()`."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..errors import ConfigError

if TYPE_CHECKING:
    from .matching import NearDup

__all__ = ["NEAR_KEYS", "NEAR_EXPECT", "NEAR_DESCRIPTIONS", "check_near", "near_from",
           "near_expectation", "near_schemas", "normalizer_names", "PROBES"]


def normalizer_names() -> tuple[str, ...]:
    """The names ``normalize`` takes: the keys of `normalizers.NORMALIZERS` (the one table
    of the built-in normalizers, in its order), then ``volatile``. Read from the table when
    asked, not when this module is imported: checking a config then compiles no pattern
    unless it names a normalizer (every ``maxrepeat grade`` checks one; start-up is
    measured), and a normalizer added to the table is a name a config may give."""
    from . import normalizers

    return (*normalizers.NORMALIZERS, "volatile")


_NAMES: Final = "a non-empty list of argument names"

NEAR_EXPECT: Final = {
    "ignore_arguments": f"{_NAMES}, or a mapping from tool-name regex to such a list",
    # the names are filled in by `near_expectation` (read from the table on use)
    "normalize": "a non-empty list of {names}",
    "replace": "a non-empty list of {pattern, with} mappings",
    "similarity": "a number from 0.5 to 1",
    "similarity_min_length": "an integer >= 1",
    "with_observation": "true or false",
}
NEAR_KEYS: Final = tuple(NEAR_EXPECT)
NEAR_DESCRIPTIONS: Final = {
    "ignore_arguments": "name-args only: argument keys left out of the comparison, for "
                        "every tool (a list) or per tool (regex -> list), e.g. "
                        "{'^Bash$': [description]}.",
    "normalize": "Built-in rewrites of volatile text in observations and string arguments "
                 "before comparing; 'volatile' is all of them but 'numbers'.",
    "replace": "Your own regex replacements, applied after 'normalize' (Python re syntax; "
               "'with' may use \\1 groups).",
    "similarity": "Treat long strings whose word-pair Jaccard similarity reaches this "
                  "threshold as equal (see docs/design/near-duplicates.md).",
    "similarity_min_length": "Strings shorter than this are never compared by similarity "
                             "(default 200).",
    "with_observation": "name-args only: a repeat must also get the same observation "
                        "(after normalize/replace/similarity): a poll whose output "
                        "changes is not a repeat.",
}
_LIST = {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "ignore_arguments": {"oneOf": [
        _LIST,
        {"type": "object", "minProperties": 1, "additionalProperties": _LIST},
    ]},
    # "normalize": its enum is the normalizers' names (`near_schemas`)
    "replace": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["pattern", "with"], "additionalProperties": False,
        "properties": {"pattern": {"type": "string", "minLength": 1, "format": "regex"},
                       "with": {"type": "string"}}}},
    "similarity": {"type": "number", "minimum": 0.5, "maximum": 1},
    "similarity_min_length": {"type": "integer", "minimum": 1, "default": 200},
    "with_observation": {"type": "boolean", "default": False},
}


def near_schemas() -> dict[str, dict[str, Any]]:
    """Each near-duplicate key's JSON Schema (``normalize`` names `normalizer_names`)."""
    normalize = {"type": "array", "minItems": 1, "items": {"enum": list(normalizer_names())}}
    return {k: normalize if k == "normalize" else _SCHEMAS[k] for k in NEAR_KEYS}


def near_expectation(key: str) -> str:
    """What a near-duplicate key's value must be (`NEAR_EXPECT`, names filled in)."""
    if key == "normalize":
        return NEAR_EXPECT[key].format(names=", ".join(normalizer_names()))
    return NEAR_EXPECT[key]

#: Argument names that carry the action itself in common agents' tools (Claude Code's
#: Bash ``command``, Read ``file_path``, OpenHands' ``path``, ...): ignored for every tool,
#: they make every call of such a tool the same.
ACTION_ARGUMENTS: Final = frozenset({
    "command", "cmd", "file_path", "path", "filename", "pattern", "query", "url", "code",
    "content", "input", "args", "arguments", "old_string", "new_string", "script",
})

#: Texts that a replacement must keep apart: one that makes them all equal would make
#: every step equal (lint flags it).
PROBES: Final = ("ls -la src", "FAILED tests/test_io.py::test_read", "{}", "x")


def _show(value: Any) -> str:
    from ..configrules import show_value  # configrules imports this module

    return show_value(value)


def _names(path: str, value: Any) -> list[ConfigError]:
    if (isinstance(value, str) or not isinstance(value, Sequence) or not value
            or not all(isinstance(v, str) and v.strip() for v in value)):
        hint = f'write {path}: ["{value}"]' if isinstance(value, str) else None
        return [ConfigError(path, _NAMES, _show(value), hint=hint)]
    return []


def _regex(path: str, value: Any, ecma: bool) -> ConfigError | None:
    if not isinstance(value, str) or not value.strip():
        return ConfigError(path, "a non-blank regular expression", _show(value))
    from ..toolmatch import compile_pattern

    try:
        compile_pattern(value) if ecma else re.compile(value)
    except (re.error, ValueError) as exc:
        return ConfigError(path, "a valid regular expression", _show(value), hint=str(exc))
    except RecursionError:
        return ConfigError(path, "a regular expression of sane depth", _show(value))
    return None


def check_near(config: Mapping[str, Any]) -> list[tuple[ConfigError, str | None]]:
    """The rules of the near-duplicate keys present in ``config``.

    >>> [str(e) for e, _ in check_near({"match": "name", "normalize": ["ansi"]})]
    ['normalize must be used with match observation or name-args (got match name)']
    """
    out: list[tuple[ConfigError, str | None]] = []
    match = config.get("match", "observation")
    for key in (k for k in NEAR_KEYS if k in config):
        errs = _KEY_RULES[key](config[key], config, match)
        if key not in ("ignore_arguments", "with_observation") and not errs and match == "name":
            errs.append(ConfigError(key, "used with match observation or name-args",
                                    "match name"))
        out.extend((e, key) for e in errs)
    return out


def _check_ignore(value: Any, config: Mapping[str, Any], match: Any) -> list[ConfigError]:
    key = "ignore_arguments"
    errs = _ignore_by_tool(value) if isinstance(value, Mapping) else _ignore_all(value)
    if not errs and match != "name-args":
        errs.append(ConfigError(key, "used with match name-args", f"match {match}",
                                hint="arguments are compared only in name-args"))
    return errs


def _ignore_by_tool(value: Mapping[Any, Any]) -> list[ConfigError]:
    key = "ignore_arguments"
    errs: list[ConfigError] = []
    if not value:
        errs.append(ConfigError(key, NEAR_EXPECT[key], "{}"))
    for tool, names in value.items():
        bad = _regex(f"{key}.{tool}", tool, ecma=True)
        if bad is not None:
            errs.append(bad)
        errs.extend(_names(f"{key}.{tool}", names))
    return errs


def _ignore_all(value: Any) -> list[ConfigError]:
    key = "ignore_arguments"
    if _names(key, value):
        return [ConfigError(key, NEAR_EXPECT[key], _show(value))]
    return [ConfigError(f"{key}[{i}]", "a name that does not carry the action",
                        _show(n) + ", which makes every call of a tool taking it the same",
                        hint=f'ignore it per tool, e.g. {{"^MyTool$": ["{n}"]}}')
            for i, n in enumerate(value) if n in ACTION_ARGUMENTS]


def _check_normalize(value: Any, config: Mapping[str, Any], match: Any) -> list[ConfigError]:
    key = "normalize"
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        hint = f'write normalize: ["{value}"]' if isinstance(value, str) else None
        return [ConfigError(key, near_expectation(key), _show(value), hint=hint)]
    errs: list[ConfigError] = []
    names = normalizer_names()
    for i, name in enumerate(value):
        if name not in names:
            from ..configrules import did_you_mean

            errs.append(ConfigError(
                f"{key}[{i}]", "one of " + ", ".join(names), _show(name),
                hint=did_you_mean(name, names) if isinstance(name, str) else None))
    return errs


def _check_similarity(value: Any, config: Mapping[str, Any], match: Any) -> list[ConfigError]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.5 <= value <= 1:
        return [ConfigError("similarity", NEAR_EXPECT["similarity"], _show(value))]
    return []


def _check_with_observation(value: Any, config: Mapping[str, Any],
                            match: Any) -> list[ConfigError]:
    key = "with_observation"
    if not isinstance(value, bool):
        return [ConfigError(key, NEAR_EXPECT[key], _show(value))]
    if match != "name-args":
        return [ConfigError(key, "used with match name-args", f"match {match}",
                            hint="observation mode compares observations already")]
    return []


def _check_min_length(value: Any, config: Mapping[str, Any], match: Any) -> list[ConfigError]:
    key = "similarity_min_length"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return [ConfigError(key, NEAR_EXPECT[key], _show(value))]
    if "similarity" not in config:
        return [ConfigError(key, "used with similarity", "no similarity")]
    return []


def _check_replace(value: Any) -> list[ConfigError]:
    key = "replace"
    if isinstance(value, (str, Mapping)) or not isinstance(value, Sequence) or not value:
        return [ConfigError(key, NEAR_EXPECT[key], _show(value))]
    errs: list[ConfigError] = []
    for i, item in enumerate(value):
        path = f"{key}[{i}]"
        if not isinstance(item, Mapping) or set(item) != {"pattern", "with"}:
            errs.append(ConfigError(path, "a mapping with exactly the keys pattern and with",
                                    _show(item)))
            continue
        bad = _regex(f"{path}.pattern", item["pattern"], ecma=False)
        if bad is not None:
            errs.append(bad)
            continue
        if not isinstance(item["with"], str):
            errs.append(ConfigError(f"{path}.with", "a string", _show(item["with"])))
            continue
        pattern = re.compile(item["pattern"])
        try:
            outs = {pattern.sub(item["with"], p) for p in PROBES}
        except (re.error, IndexError) as exc:
            errs.append(ConfigError(f"{path}.with", "a valid replacement", _show(item["with"]),
                                    hint=str(exc)))
            continue
        if len(outs) == 1:
            errs.append(ConfigError(
                f"{path}.pattern", "a pattern that keeps different texts apart",
                _show(item["pattern"]) + ", which makes every text the same",
                hint="anchor it to the volatile part, e.g. 'took \\d+ ms'"))
    return errs


#: One checker per near-duplicate key: (value, config, match) -> its errors.
_KEY_RULES: Final[dict[str, Callable[[Any, Mapping[str, Any], Any], list[ConfigError]]]] = {
    "ignore_arguments": _check_ignore,
    "normalize": _check_normalize,
    "replace": lambda value, config, match: _check_replace(value),
    "similarity": _check_similarity,
    "similarity_min_length": _check_min_length,
    "with_observation": _check_with_observation,
}


def near_from(config: Mapping[str, Any]) -> NearDup | None:
    """The settings of a checked config mapping; None when no near-duplicate key is set."""
    if not any(k in config for k in NEAR_KEYS if k != "with_observation") \
            and not config.get("with_observation"):
        return None  # with_observation: false alone is exact matching
    from ..toolmatch import compile_pattern
    from .matching import NearDup, expand_normalizers

    ignore = config.get("ignore_arguments")
    ignore_all: frozenset[str] = frozenset()
    by_tool: list[tuple[Any, frozenset[str]]] = []
    if isinstance(ignore, Mapping):
        by_tool = [(compile_pattern(t), frozenset(n)) for t, n in ignore.items()]
    elif ignore is not None:
        ignore_all = frozenset(ignore)
    sim = config.get("similarity")
    return NearDup(
        ignore_all=ignore_all,
        ignore_by_tool=tuple(by_tool),
        normalizers=expand_normalizers(config.get("normalize", ())),
        replace=tuple((re.compile(r["pattern"]), r["with"]) for r in config.get("replace", ())),
        similarity=float(sim) if sim is not None else None,
        min_length=int(config.get("similarity_min_length", 200)),
        observation=bool(config.get("with_observation", False)),
    )
