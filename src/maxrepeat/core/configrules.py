"""The rules of a grader's ``config`` mapping (spec §2), declared once: `CONFIG_SPEC` (one
`KeySpec` per key, which the JSON Schema generator also translates), `check_config`
(every problem of one mapping, in one pass), grader names (`check_name`) and the message
helpers the loaders share (`show_value`, `did_you_mean`).

They serve three callers: `MaxRepeatConfig`'s constructor, the YAML loader / ``lint``
(which add file positions) and the CLI's inline flags. No YAML here: the core never
parses files.

>>> [str(err) for err, _ in check_config({"max": 0})]
['max must be an integer >= 1 (got 0)']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import msgspec

from .canonical import ES_WHITESPACE
from .errors import ConfigError
from .near.config import NEAR_DESCRIPTIONS, NEAR_KEYS, check_near, near_expectation

__all__ = [
    "MATCH_MODES",
    "MatchMode",
    "CONFIG_KEYS",
    "CONFIG_SPEC",
    "KeySpec",
    "ROOT_KEYS",
    "ENTRY_KEYS",
    "GRADER_TYPE",
    "MAX_PERIOD_LIMIT",
    "check_config",
    "did_you_mean",
    "show_value",
    "is_empty_regex",
    "check_name",
    "NAME_LIMIT",
]

GRADER_TYPE: Final = "max-repeat"
MATCH_MODES: Final = ("observation", "name", "name-args")
MAX_PERIOD_LIMIT: Final = 10
#: the keys of a config file, and of one entry of its ``graders`` list
ROOT_KEYS: Final = ("graders",)
ENTRY_KEYS: Final = ("type", "name", "config")
_REGEX_LIST: Final = "a non-empty list of regular expressions"

MatchMode = Literal["observation", "name", "name-args"]

#: grader names, as the seed framework requires them since its 0.16.0 release: kebab-case
#: slugs (lower-case letters and digits, single hyphens between words) of 60 characters
#: at most, unique among the graders they stand with
NAME_LIMIT: Final = 60
_SLUG: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_NAME_RULE: Final = f"a kebab-case slug of at most {NAME_LIMIT} characters"


def check_name(value: Any) -> ConfigError | None:
    """The problem with a grader ``name``, or None when it is a valid slug.

    >>> print(check_name("bash-loops"))
    None
    >>> str(check_name("Bash Loops!!"))
    'name must be a kebab-case slug of at most 60 characters (got "Bash Loops!!"); try bash-loops'
    """
    if isinstance(value, str) and len(value) <= NAME_LIMIT and _SLUG.match(value):
        return None
    hint = None
    if isinstance(value, str):
        slug = "-".join(re.findall(r"[a-z0-9]+", value.lower()))[:NAME_LIMIT].strip("-")
        hint = f"try {slug}" if slug else "use lower-case letters, digits and hyphens"
    return ConfigError("name", _NAME_RULE, show_value(value), hint=hint)


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class KeySpec(msgspec.Struct, frozen=True):
    """The rule of one key of a grader's ``config`` mapping, declared once.

    `check_config` enforces it and the JSON Schema generator (``maxrepeat schema``)
    translates it, so the two cannot drift apart.

    >>> CONFIG_SPEC[1].expectation
    'an integer from 1 to 10'
    """

    key: str
    kind: Literal["integer", "choice", "regex-list", "near"]
    description: str
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    default: Any = None

    @property
    def expectation(self) -> str:
        """What a value must be, in the words of the message grammar."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "regex-list":
            return _REGEX_LIST
        if self.kind == "near":
            return near_expectation(self.key)
        if self.maximum is not None:
            return f"an integer from {self.minimum} to {self.maximum}"
        return f"an integer >= {self.minimum}"

    def accepts_integer(self, value: Any) -> bool:
        """Whether ``value`` is an integer within the bounds (for ``integer`` keys)."""
        if not _is_int(value):
            return False
        if self.minimum is not None and value < self.minimum:
            return False
        return self.maximum is None or value <= self.maximum


CONFIG_SPEC: Final = (
    KeySpec("max", "integer", "Fail when an action or a cycle repeats more than this many "
            "complete times in a row.", required=True, minimum=1),
    KeySpec("max_cycle_period", "integer", "Longest cycle period to detect: 1 finds A A A, "
            "2 also A B A B.", minimum=1, maximum=MAX_PERIOD_LIMIT, default=1),
    KeySpec("match", "choice", "What counts as the same action: tool and result "
            "(observation), tool only (name), tool and arguments (name-args).",
            choices=MATCH_MODES, default="observation"),
    KeySpec("tools", "regex-list", "Watch only tools whose name matches one of these "
            "unanchored regular expressions (default: every tool)."),
    # Near-duplicate matching (opt-in; rules in near/config.py, design in
    # docs/design/near-duplicates.md).
    *(KeySpec(k, "near", NEAR_DESCRIPTIONS[k]) for k in NEAR_KEYS),
)
CONFIG_KEYS: Final = tuple(spec.key for spec in CONFIG_SPEC)


def show_value(value: Any, limit: int = 60) -> str:
    """A found value as the message grammar prints it (JSON-like, shortened)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = repr(value)
        if text.startswith("'"):
            text = '"' + text[1:-1].replace('"', '\\"') + '"'
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(show_value(v, limit) for v in value) + "]"
    elif isinstance(value, Mapping):
        text = "{" + ", ".join(f"{k}: {show_value(v, limit)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def did_you_mean(word: str, choices: Sequence[str]) -> str | None:
    """A "did you mean X?" hint when ``word`` is close to one of ``choices``."""
    import difflib  # only for a hint on a bad value: keeps start-up cheap

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]}?" if close else None


def _is_int(value: Any) -> bool:
    # YAML/JSON number semantics: 3 and 3.0 are the same integer; booleans are not numbers.
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def is_empty_regex(pattern: str) -> bool:
    """Whether a pattern's source is empty once its inline flags are taken, like ``(?i)``
    or ``(?:)`` (``RegExp.prototype.source`` is ``(?:)``).

    Such a pattern matches every tool name, which is never what a ``tools`` entry meant.

    >>> is_empty_regex("(?i)"), is_empty_regex("^bash$")
    (True, False)
    """
    from .toolmatch import is_empty_pattern

    return is_empty_pattern(pattern)


def check_config(config: Any) -> list[tuple[ConfigError, str | None]]:
    """Every rule of spec §2 broken by ``config``, as (error, offending key) pairs.

    Paths in the errors are relative to the config mapping (``max``, ``tools[1]``). The
    key says which entry the error is about (for locating it in a file); ``None`` means
    the mapping itself.

    >>> [str(e) for e, _ in check_config({"max": 0})]
    ['max must be an integer >= 1 (got 0)']
    """
    problems: list[tuple[ConfigError, str | None]] = []
    if not isinstance(config, Mapping):
        return [(ConfigError("config", "a mapping", show_value(config)), None)]
    for key in config:
        if key not in CONFIG_KEYS:
            problems.append(
                (
                    ConfigError(
                        str(key),
                        "one of the keys " + ", ".join(CONFIG_KEYS),
                        "unknown key " + show_value(key),
                        hint=did_you_mean(str(key), CONFIG_KEYS),
                    ),
                    str(key),
                )
            )
    for spec in CONFIG_SPEC:
        if spec.key not in config:
            if spec.required:
                problems.append(
                    (ConfigError(spec.key, f"present: {spec.expectation}", "nothing"), None)
                )
            continue
        value = config[spec.key]
        if spec.kind == "near":
            continue  # checked together below: they depend on match and on each other
        if spec.kind == "regex-list":
            problems.extend((err, spec.key) for err in _check_tools(value))
        elif spec.kind == "choice":
            if not isinstance(value, str) or value not in spec.choices:
                hint = did_you_mean(value, spec.choices) if isinstance(value, str) else None
                problems.append(
                    (
                        ConfigError(spec.key, spec.expectation, show_value(value), hint=hint),
                        spec.key,
                    )
                )
        elif not spec.accepts_integer(value):
            problems.append(
                (ConfigError(spec.key, spec.expectation, show_value(value)), spec.key)
            )
    if not problems:
        problems.extend(check_near(config))
    return problems


def _check_tools(tools: Any) -> list[ConfigError]:
    if tools is None:
        return [ConfigError("tools", _REGEX_LIST, "null",
                            hint="omit tools to watch every tool")]
    if isinstance(tools, str) or not isinstance(tools, Sequence):
        hint = f'write tools: ["{tools}"]' if isinstance(tools, str) else None
        return [
            ConfigError(
                "tools", _REGEX_LIST, show_value(tools), hint=hint
            )
        ]
    if len(tools) == 0:
        return [ConfigError("tools", _REGEX_LIST, "[]",
                            hint="omit tools to watch every tool")]
    from .toolmatch import PatternSyntaxError, compile_pattern

    errors: list[ConfigError] = []
    for i, item in enumerate(tools):
        path = f"tools[{i}]"
        if not isinstance(item, str):
            errors.append(ConfigError(path, "a string (a regular expression)", show_value(item)))
        elif not item.strip(ES_WHITESPACE):
            errors.append(ConfigError(path, "a non-blank regular expression", show_value(item)))
        else:
            try:
                compile_pattern(item)
            except PatternSyntaxError as exc:
                errors.append(
                    ConfigError(
                        path, "a valid JavaScript regular expression", show_value(item),
                        hint=str(exc),
                    )
                )
    return errors
