"""Grader configuration (spec §2): one validated, immutable `MaxRepeatConfig` per grader.

Its rules are `configrules.check_config`, shared with the YAML loader / ``lint`` and the
CLI's inline flags.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .configrules import MatchMode, check_config, check_name, is_empty_regex
from .near.config import NEAR_KEYS, near_from

# toolmatch (the JavaScript-regex translator) and near.matching are imported where a config
# uses them: a grader without tools or near-duplicate keys never needs them, and every
# ``maxrepeat grade`` builds one (start-up is measured: bench/RESULTS.md).
if TYPE_CHECKING:
    from .near.matching import NearDup
    from .toolmatch import ESPattern

__all__ = ["MaxRepeatConfig", "unique_names"]


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

    @classmethod
    def preset(cls, preset: str, name: str | None = None, **keys: Any) -> MaxRepeatConfig:
        """A config from a named preset (``live``: the live guards' default; ``seed``: the
        seed's defaults, ``max`` then given), ``keys`` replacing its own (the config keys:
        ``max``, ``max_cycle_period``, ``match``, ``tools``, ``normalize``, …;
        ``docs/configuration.md``, "Presets").

        >>> MaxRepeatConfig.preset("live").display_name
        'max-repeat(max=3, period=3, match=name-args, ignore_arguments=[description,summary], normalize=[volatile])'
        >>> MaxRepeatConfig.preset("live", max=5, max_cycle_period=2).max_cycle_period
        2
        """  # noqa: E501 (a doctest's output line, as printed)
        from .errors import ConfigError
        from .presets import PRESET_NAMES, preset_mapping

        if preset not in PRESET_NAMES:
            raise ConfigError("preset", f"one of {', '.join(PRESET_NAMES)}", repr(preset))
        return cls.from_mapping(preset_mapping(preset, keys), name=name)

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
