"""Config files: YAML with positions, strict keys, and every problem located (spec §2).

PyYAML composes the node tree (with the C parser when available); `specs.located` turns
it into Python values as the framework's YAML reader would, keeping each node's line and
column and rejecting duplicate keys; this module checks the graders and can say when
YAML 1.1 turns an unquoted word into something else (``no`` into false). All rules of the
grader config come from `check_config`, shared with the API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..core.config import MaxRepeatConfig
from ..core.configrules import (
    ENTRY_KEYS,
    GRADER_TYPE,
    ROOT_KEYS,
    check_config,
    check_name,
    did_you_mean,
    show_value,
)
from ..core.errors import ConfigError
from .located import MAX_VALUES, Located, compose_located
from .yaml12 import yaml11_value

__all__ = ["load_config", "read_text", "parse_config_text", "Located", "compose_located",
           "raise_first", "MAX_VALUES"]

_ROOT_KEYS: Final = ROOT_KEYS
_ENTRY_KEYS: Final = ENTRY_KEYS


def _coercion_hint(item: Located) -> str | None:
    """For a value that broke a rule: how an unquoted scalar was read, and how a YAML 1.1
    reader would read it when that differs (so nobody is surprised either way)."""
    if item.text is None:
        return None
    old = yaml11_value(item.text)
    if show_value(old) != show_value(item.value):
        if isinstance(item.value, str):
            return (f"YAML 1.2 (as the framework reads it) reads the unquoted {item.text} as "
                    f"text; YAML 1.1 tools read {show_value(old)}")
        return (f"YAML 1.2 (as the framework reads it) reads the unquoted {item.text} as "
                f"{show_value(item.value)}; YAML 1.1 tools read {show_value(old)}")
    if show_value(item.value) != item.text and not isinstance(item.value, str):
        return (
            f"the unquoted {item.text} is read as {show_value(item.value)}; "
            f'write "{item.text}" in quotes if you meant the text'
        )
    return None


def _at(item: Located, *, key: bool = False) -> tuple[int, int]:
    if key and item.key_line:
        return item.key_line, item.key_col
    return item.line, item.col


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return show_value(value)


def _check_entry(
    entry: Located, index: int, file: str, problems: list[ConfigError], base: str = ""
) -> MaxRepeatConfig | None:
    # base places the graders list inside a larger document (an eval spec's stimulus)
    prefix = f"{base}graders[{index}]"
    if not isinstance(entry.value, dict):
        problems.append(ConfigError(prefix, "a mapping with type and config",
                                    _kind(entry.value), file=file, line=entry.line,
                                    col=entry.col))
        return None
    fields: dict[Any, Located] = entry.value
    ok = True
    for key, item in fields.items():
        if key not in _ENTRY_KEYS:
            ok = False
            line, col = _at(item, key=True)
            problems.append(ConfigError(
                prefix, "a grader with the keys type, name, config",
                f"unknown key {show_value(key)}", hint=did_you_mean(str(key), _ENTRY_KEYS),
                file=file, line=line, col=col,
            ))
    gtype = fields.get("type")
    if gtype is None:
        problems.append(ConfigError(f"{prefix}.type", f"present: {GRADER_TYPE}", "nothing",
                                    file=file, line=entry.line, col=entry.col))
        return None
    if gtype.value != GRADER_TYPE:
        hint = (did_you_mean(str(gtype.value), [GRADER_TYPE]) if isinstance(gtype.value, str)
                else None)
        problems.append(ConfigError(f"{prefix}.type", GRADER_TYPE, show_value(gtype.value),
                                    hint=hint or "maxrepeat grades only max-repeat graders",
                                    file=file, line=gtype.line, col=gtype.col))
        return None
    name_item = fields.get("name")
    name: str | None = None
    if name_item is not None:
        bad_name = check_name(name_item.value)
        if bad_name is not None:
            ok = False
            problems.append(ConfigError(f"{prefix}.name", bad_name.expectation,
                                        bad_name.got,
                                        hint=_coercion_hint(name_item) or bad_name.hint,
                                        file=file, line=name_item.line, col=name_item.col))
        else:
            name = name_item.value
    cfg_item = fields.get("config")
    if cfg_item is None:
        problems.append(ConfigError(f"{prefix}.config", "present: a mapping with at least max",
                                    "nothing", file=file, line=entry.line, col=entry.col))
        return None
    if not isinstance(cfg_item.value, dict):
        problems.append(ConfigError(f"{prefix}.config", "a mapping with at least max",
                                    _kind(cfg_item.value), file=file, line=cfg_item.line,
                                    col=cfg_item.col))
        return None
    located = {str(k): v for k, v in cfg_item.value.items()}
    found = check_config(cfg_item.plain())
    for err, key in found:
        ok = False
        hint = err.hint
        if key is None:
            line, col = cfg_item.line, cfg_item.col
        else:
            item = located[key]
            line, col = _at(item, key=key not in ("max", "max_cycle_period", "match", "tools"))
            if err.path.startswith("tools[") and isinstance(item.value, list):
                idx = int(err.path[6:err.path.index("]")])
                item = item.value[idx]
                line, col = item.line, item.col
            hint = hint or _coercion_hint(item)
        problems.append(ConfigError(f"{prefix}.config.{err.path}", err.expectation, err.got,
                                    hint=hint, file=file, line=line, col=col))
    if not ok:
        return None
    return MaxRepeatConfig.from_mapping(cfg_item.plain(), name=name)


def entry_name(entry: Located) -> tuple[str, Located] | None:
    """The ``name`` of a grader entry and its node, when it is a string (else None)."""
    if isinstance(entry.value, dict):
        item = entry.value.get("name")
        if item is not None and isinstance(item.value, str):
            return item.value, item
    return None


def parse_config_text(text: str, file: str = "<config>"
                      ) -> tuple[list[MaxRepeatConfig], list[ConfigError]]:
    """The graders of a config document, and every problem found in it.

    >>> cfgs, problems = parse_config_text(
    ...     "graders:\\n  - type: max-repeat\\n    config: {max: 0}\\n", "g.yaml")
    >>> [str(p) for p in problems]
    ['g.yaml:3:19: graders[0].config.max must be an integer >= 1 (got 0)']
    """
    root, problems = compose_located(text, file)
    if problems and root is None:
        return [], problems
    if root is None or not isinstance(root.value, dict):
        got = "an empty document" if root is None else _kind(root.value)
        problems.append(ConfigError("document", "a mapping with a graders list", got,
                                    file=file, line=root.line if root else 1,
                                    col=root.col if root else 1))
        return [], problems
    top: dict[Any, Located] = root.value
    for key, item in top.items():
        if key not in _ROOT_KEYS:
            line, col = _at(item, key=True)
            problems.append(ConfigError("document", "a mapping with the key graders",
                                        f"unknown key {show_value(key)}",
                                        hint=did_you_mean(str(key), _ROOT_KEYS),
                                        file=file, line=line, col=col))
    graders = top.get("graders")
    if graders is None:
        problems.append(ConfigError("graders", "present: a list of graders", "nothing",
                                    file=file, line=root.line, col=root.col))
        return [], problems
    if not isinstance(graders.value, list) or not graders.value:
        problems.append(ConfigError("graders", "a non-empty list of graders",
                                    _kind(graders.value), file=file, line=graders.line,
                                    col=graders.col))
        return [], problems
    configs: list[MaxRepeatConfig] = []
    names: dict[str, int] = {}
    for i, entry in enumerate(graders.value):
        cfg = _check_entry(entry, i, file, problems)
        # Names are compared even when the entry has other problems: lint reports every
        # problem in one pass (issue 18, finding 15).
        named = entry_name(entry)
        if named is not None:
            name, item = named
            if name in names:
                problems.append(ConfigError(f"graders[{i}].name", "unique in the file",
                                            show_value(name),
                                            hint=f"graders[{names[name]}] has it too",
                                            file=file, line=item.line, col=item.col))
                continue
            names[name] = i
        if cfg is not None:
            configs.append(cfg)
    problems.sort(key=lambda e: (e.line or 0, e.col or 0))
    return configs, problems


def read_text(path: str | Path) -> tuple[str, str]:
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError("file", "a readable file", exc.strerror or str(exc), file=file) from exc
    try:
        return data.decode("utf-8-sig"), file
    except UnicodeDecodeError as exc:
        raise ConfigError("file", "UTF-8 text", f"an invalid byte at offset {exc.start}",
                          file=file) from exc


def load_config(path: str | Path) -> list[MaxRepeatConfig]:
    """The ``max-repeat`` graders of a config file; raises the first `ConfigError`.

    The raised error carries every problem found in ``problems``.

    >>> [(c.name, c.max, c.max_cycle_period) for c in load_config("examples/graders.yaml")]
    [('same-output', 3, 1), ('bash-cycles', 2, 3)]
    """
    text, file = read_text(path)
    configs, problems = parse_config_text(text, file)
    raise_first(problems)
    return configs


def raise_first(problems: list[ConfigError]) -> None:
    """Raise the first of ``problems``, carrying all of them (``problems``), if any.

    >>> raise_first([])
    >>> try:
    ...     raise_first([ConfigError("a", "b", "c"), ConfigError("d", "e", "f")])
    ... except ConfigError as err:
    ...     err.path, len(err.problems)
    ('a', 2)
    """
    if problems:
        err = problems[0]
        err.problems = tuple(problems)
        raise err
