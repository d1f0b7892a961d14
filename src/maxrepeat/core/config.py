"""Grader configuration (spec §2): one validated, immutable `MaxRepeatConfig` per grader.

The rules live here once, as `check_config`, and serve three callers: the constructor of
`MaxRepeatConfig`, the YAML loader / ``lint`` (which add file positions), and the CLI's
inline flags. No YAML here: the core never parses files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from .canonical import ES_WHITESPACE
from .errors import ConfigError
from .nearconfig import NEAR_DESCRIPTIONS, NEAR_EXPECT, NEAR_KEYS, check_near, near_from

# toolmatch (the JavaScript-regex translator) and neardup are imported where a config
# uses them: a grader without tools or near-duplicate keys never needs them, and every
# ``maxrepeat grade`` builds one (start-up is measured: bench/RESULTS.md).
if TYPE_CHECKING:
    from .neardup import NearDup
    from .toolmatch import ESPattern

__all__ = [
    "MaxRepeatConfig",
    "MATCH_MODES",
    "CONFIG_KEYS",
    "CONFIG_SPEC",
    "KeySpec",
    "ROOT_KEYS",
    "ENTRY_KEYS",
    "GRADER_TYPE",
    "check_config",
    "did_you_mean",
    "show_value",
    "unique_names",
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
            return NEAR_EXPECT[self.key]
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
    # Near-duplicate matching (opt-in; rules in nearconfig.py, design in
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


def _describe(max_: int, period: int, match: str, tools: tuple[str, ...] | None) -> str:
    parts = [f"max={max_}"]
    if period != 1:
        parts.append(f"period={period}")
    if match != "observation":
        parts.append(f"match={match}")
    if tools is not None:
        parts.append("tools=" + ",".join(tools))
    return f"max-repeat({', '.join(parts)})"


@dataclass(frozen=True, slots=True, init=False)  # its own __init__ (not generated: start-up)
class MaxRepeatConfig:
    """One ``max-repeat`` grader, validated on construction by the rules of spec §2.

    >>> cfg = MaxRepeatConfig(3, max_cycle_period=2, tools=["^bash$"])
    >>> cfg.display_name
    'max-repeat(max=3, period=2, tools=^bash$)'
    >>> MaxRepeatConfig(0)
    Traceback (most recent call last):
      ...
    maxrepeat.core.errors.ConfigError: max must be an integer >= 1 (got 0)

    Near-duplicate matching is opt-in (keyword arguments; ``docs/near-duplicates.md``):

    >>> near = MaxRepeatConfig(3, match="name-args", normalize=["volatile"],
    ...                        ignore_arguments={"^Bash$": ["description"]})
    >>> near.near.normalizers[:3], near.to_dict()["ignore_arguments"]
    (('ansi', 'trailing-whitespace', 'timestamps'), {'^Bash$': ['description']})
    """

    max: int
    max_cycle_period: int = 1
    match: MatchMode = "observation"
    tools: tuple[str, ...] | None = None
    name: str | None = None
    #: the near-duplicate keys as given, (key, canonical JSON) pairs: hashable, comparable
    near_keys: tuple[tuple[str, str], ...] = ()
    _patterns: tuple[ESPattern, ...] = field(default=(), repr=False, compare=False)
    _near: NearDup | None = field(default=None, repr=False, compare=False)

    def __init__(
        self,
        max: int,
        max_cycle_period: int = 1,
        match: str = "observation",
        tools: Sequence[str] | None = None,
        name: str | None = None,
        *,
        ignore_arguments: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        normalize: Sequence[str] | None = None,
        replace: Sequence[Mapping[str, str]] | None = None,
        similarity: float | None = None,
        similarity_min_length: int | None = None,
        with_observation: bool | None = None,
    ) -> None:
        raw: dict[str, Any] = {"max": max, "max_cycle_period": max_cycle_period, "match": match}
        if tools is not None:
            raw["tools"] = list(tools) if isinstance(tools, (list, tuple)) else tools
        near_raw = {"ignore_arguments": ignore_arguments, "normalize": normalize,
                    "replace": replace, "similarity": similarity,
                    "similarity_min_length": similarity_min_length,
                    "with_observation": with_observation}
        near_given = {k: _plain(v) for k, v in near_raw.items() if v is not None}
        raw.update(near_given)
        problems = check_config(raw)
        if problems:
            raise problems[0][0]
        if name is not None:
            bad_name = check_name(name)
            if bad_name is not None:
                raise bad_name
        object.__setattr__(self, "max", int(max))
        object.__setattr__(self, "max_cycle_period", int(max_cycle_period))
        object.__setattr__(self, "match", match)
        tools_t = tuple(tools) if tools is not None else None
        object.__setattr__(self, "tools", tools_t)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "near_keys", tuple(
            (k, json.dumps(v, sort_keys=True, ensure_ascii=False)) for k, v in near_given.items()
        ))
        object.__setattr__(self, "_near", near_from(near_given))
        if tools_t:
            from .toolmatch import compile_pattern

            object.__setattr__(self, "_patterns", tuple(compile_pattern(p) for p in tools_t))
        else:
            object.__setattr__(self, "_patterns", ())

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any], name: str | None = None) -> MaxRepeatConfig:
        """A config from the ``config:`` mapping of a grader entry.

        >>> MaxRepeatConfig.from_mapping({"max": 2, "match": "name"}).match
        'name'
        """
        problems = check_config(config)
        if problems:
            raise problems[0][0]
        return cls(
            config["max"],
            config.get("max_cycle_period", 1),
            config.get("match", "observation"),
            config.get("tools"),
            name,
            **{k: config[k] for k in NEAR_KEYS if k in config},
        )

    @property
    def near(self) -> NearDup | None:
        """The near-duplicate settings, or None when matching is exact (the default)."""
        return self._near

    @property
    def observes(self) -> bool:
        """Whether a step's key holds its observations (``observation`` mode, or
        ``name-args`` with ``with_observation``): a verdict then waits for results.

        >>> MaxRepeatConfig(3, match="name-args", with_observation=True).observes
        True
        """
        return self.match == "observation" or (self._near is not None
                                               and self._near.observation)

    @property
    def display_name(self) -> str:
        """The configured name, or one derived from the config."""
        if self.name is not None:
            return self.name
        base = _describe(self.max, self.max_cycle_period, self.match, self.tools)
        if not self.near_keys:
            return base
        more = ", ".join(f"{k}=" + v.replace('"', "").replace(", ", ",")
                         for k, v in self.near_keys)
        return base[:-1] + ", " + more + ")"

    @property
    def patterns(self) -> tuple[ESPattern, ...]:
        """The compiled ``tools`` patterns (empty when every tool is watched)."""
        return self._patterns

    def empty_patterns(self) -> list[str]:
        """The ``tools`` patterns that parse to an empty regex (a grading-time error)."""
        return [p for p in self.tools or () if is_empty_regex(p)]

    def watches(self, tool_name: str) -> bool:
        """Whether a tool is watched: any pattern found anywhere in the name (unanchored).

        >>> MaxRepeatConfig(1, tools=["bash"]).watches("run_bash")
        True
        """
        if not self._patterns:
            return True
        return any(p.search(tool_name) for p in self._patterns)

    def to_dict(self) -> dict[str, Any]:
        """The config as written in a config file (snake_case keys)."""
        out: dict[str, Any] = {"max": self.max, "max_cycle_period": self.max_cycle_period,
                               "match": self.match}
        if self.tools is not None:
            out["tools"] = list(self.tools)
        for key, text in self.near_keys:
            out[key] = json.loads(text)
        return out


def _plain(value: Any) -> Any:
    """A config value as plain JSON data (tuples as lists), for checking and storing."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def unique_names(configs: Sequence[MaxRepeatConfig]) -> list[str]:
    """Display names made unique within one run (``name``, ``name #2``, …).

    >>> unique_names([MaxRepeatConfig(2), MaxRepeatConfig(2)])
    ['max-repeat(max=2)', 'max-repeat(max=2) #2']
    """
    seen: dict[str, int] = {}
    out: list[str] = []
    taken = set()
    for cfg in configs:
        base = cfg.display_name
        count = seen.get(base, 0) + 1
        seen[base] = count
        name = base if count == 1 else f"{base} #{count}"
        while name in taken:
            count += 1
            name = f"{base} #{count}"
        taken.add(name)
        out.append(name)
    return out
