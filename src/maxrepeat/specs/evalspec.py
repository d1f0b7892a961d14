"""Eval specs of the seed framework: the ``max-repeat`` graders of each stimulus.

An eval spec (``eval.yaml``) lists ``stimuli``, each with a ``name`` and its ``graders``
of many types. maxrepeat runs only the ``max-repeat`` ones: a trajectory is graded by
the graders of the stimulus it belongs to (its ``stimulus.name``, or one given on the
command line). Every other key of the spec belongs to the framework and is left alone;
the ``max-repeat`` entries are checked by the same rules, positions and message grammar
as a config file. This module is an adapter: it reads files and parses YAML.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..core.config import MaxRepeatConfig, unique_names
from ..core.configrules import GRADER_TYPE, show_value
from ..core.errors import ConfigError
from ..core.events import Trajectory
from .configfile import (
    Located,
    _check_entry,
    _kind,
    compose_located,
    entry_name,
    raise_first,
    read_text,
)

__all__ = [
    "EvalSpec",
    "Stimulus",
    "is_eval_spec",
    "parse_eval_spec_text",
    "load_eval_spec",
    "SPEC_RESULT_NAME",
]

_STIMULI: Final = "stimuli"
#: the grader name of the error result of a trajectory no stimulus matches
SPEC_RESULT_NAME: Final = "eval-spec"


@dataclass(frozen=True, slots=True)
class Stimulus:
    """One stimulus of an eval spec: its ``max-repeat`` graders, and the others' types."""

    name: str
    graders: tuple[MaxRepeatConfig, ...]
    skipped: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        """The display names of its graders, unique within the stimulus."""
        return unique_names(self.graders)


@dataclass(frozen=True, slots=True)
class EvalSpec:
    """The ``max-repeat`` view of an eval spec: stimuli by name, in file order.

    >>> spec, problems = parse_eval_spec_text(
    ...     "stimuli:\\n"
    ...     "  - name: fix-bug\\n"
    ...     "    graders:\\n"
    ...     "      - type: max-repeat\\n"
    ...     "        config: {max: 3}\\n"
    ...     "      - type: output-contains\\n"
    ...     "        config: {substring: done}\\n", "eval.yaml")
    >>> problems, [c.max for c in spec.stimuli["fix-bug"].graders], spec.skipped_types
    ([], [3], {'output-contains': 1})
    """

    file: str
    stimuli: Mapping[str, Stimulus] = field(default_factory=dict)

    @property
    def skipped_types(self) -> dict[str, int]:
        """How many graders of each other type the spec holds (not run by maxrepeat)."""
        counts: Counter[str] = Counter()
        for stimulus in self.stimuli.values():
            counts.update(stimulus.skipped)
        return dict(sorted(counts.items()))

    @property
    def graders(self) -> tuple[MaxRepeatConfig, ...]:
        """Every ``max-repeat`` grader of the spec, stimulus by stimulus."""
        return tuple(cfg for s in self.stimuli.values() for cfg in s.graders)

    def skip_note(self) -> str | None:
        """One line on what the spec holds that maxrepeat does not run, or None.

        >>> EvalSpec("e.yaml", {"a": Stimulus("a", (), ("file-exists",))}).skip_note()
        'e.yaml: runs only the max-repeat graders; skipped 1 grader of other types: file-exists (1); stimuli without a max-repeat grader (not graded): a'
        """  # noqa: E501 (a doctest's output line, as printed)
        parts = []
        skipped = self.skipped_types
        if skipped:
            count = sum(skipped.values())
            kinds = ", ".join(f"{k} ({v})" for k, v in skipped.items())
            parts.append(f"skipped {count} grader{'s' if count != 1 else ''} of other types: "
                         f"{kinds}")
        bare = [s.name for s in self.stimuli.values() if not s.graders]
        if bare:
            parts.append("stimuli without a max-repeat grader (not graded): " + ", ".join(bare))
        if not parts:
            return None
        return f"{self.file}: runs only the {GRADER_TYPE} graders; " + "; ".join(parts)

    def stimulus_for(self, trajectory: Trajectory, override: str | None = None) -> Stimulus | str:
        """The stimulus whose graders apply to ``trajectory``, or why there is none."""
        name = override if override is not None else trajectory.stimulus
        if name is None:
            return (f"the trajectory names no stimulus (stimulus.name) to pick graders from "
                    f"{self.file}; give --stimulus NAME")
        found = self.stimuli.get(name)
        if found is None:
            known = ", ".join(self.stimuli) or "none"
            return f"stimulus {show_value(name)} is not in {self.file} (its stimuli: {known})"
        return found


def _root_mapping(root: Located | None) -> dict[Any, Located] | None:
    return root.value if root is not None and isinstance(root.value, dict) else None


def is_eval_spec(text: str) -> bool:
    """Whether a YAML document is an eval spec (a mapping with ``stimuli``), not a
    ``graders:`` config file.

    >>> is_eval_spec("stimuli: []"), is_eval_spec("graders: []")
    (True, False)
    """
    root, _ = compose_located(text, "<spec>")
    top = _root_mapping(root)
    return top is not None and _STIMULI in top


def _entry_type(entry: Located) -> Any:
    if isinstance(entry.value, dict) and "type" in entry.value:
        return entry.value["type"].value
    return None


def _stimulus(
    item: Located, index: int, file: str, problems: list[ConfigError], seen: dict[str, int]
) -> Stimulus | None:
    base = f"{_STIMULI}[{index}]."
    if not isinstance(item.value, dict):
        return None  # not a stimulus maxrepeat can use; the framework's own lint says why
    fields: dict[Any, Located] = item.value
    graders = fields.get("graders")
    entries = graders.value if graders is not None and isinstance(graders.value, list) else []
    ours = [(j, e) for j, e in enumerate(entries) if _entry_type(e) == GRADER_TYPE]
    name_item = fields.get("name")
    name = name_item.value if name_item is not None else None
    if not isinstance(name, str) or not name.strip():
        if ours:  # its max-repeat graders could never be matched to a trajectory
            where = name_item or item
            problems.append(ConfigError(
                f"{base}name", "a non-blank string (trajectories pick their graders by it)",
                "nothing" if name_item is None else show_value(name), file=file,
                line=where.line, col=where.col))
        return None
    skipped = _other_types(entries)
    assert name_item is not None
    repeated = name in seen
    if repeated:
        # reported, and its graders are still checked: every problem in one pass
        problems.append(ConfigError(
            f"{base}name", "unique among the stimuli", show_value(name),
            hint=f"{_STIMULI}[{seen[name]}] has it too", file=file,
            line=name_item.line, col=name_item.col))
    else:
        seen[name] = index
    configs = _stimulus_configs(ours, base, file, problems)
    return None if repeated else Stimulus(name, configs, skipped)


def _other_types(entries: list[Located]) -> tuple[str, ...]:
    """The types of a stimulus's graders that are not max-repeat, as written."""
    return tuple(
        t if isinstance(t, str) else show_value(t)
        for t in (_entry_type(e) for e in entries) if t != GRADER_TYPE and t is not None
    )


def _stimulus_configs(ours: list[tuple[int, Located]], base: str, file: str,
                      problems: list[ConfigError]) -> tuple[MaxRepeatConfig, ...]:
    """The configs of a stimulus's max-repeat entries (``ours``: index, entry) that check
    out; a grader name used twice is a problem and its second entry is left out."""
    configs: list[MaxRepeatConfig] = []
    names: dict[str, int] = {}
    for j, entry in ours:
        cfg = _check_entry(entry, j, file, problems, base=base)
        named = entry_name(entry)
        if named is not None:
            gname, at = named
            if gname in names:
                problems.append(ConfigError(
                    f"{base}graders[{j}].name", "unique in the stimulus", show_value(gname),
                    hint=f"{base}graders[{names[gname]}] has it too", file=file,
                    line=at.line, col=at.col))
                continue
            names[gname] = j
        if cfg is not None:
            configs.append(cfg)
    return tuple(configs)


def parse_eval_spec_text(text: str, file: str = "<eval spec>"
                         ) -> tuple[EvalSpec, list[ConfigError]]:
    """The ``max-repeat`` view of an eval spec document, and every problem in its
    ``max-repeat`` entries (and in what is needed to reach them).

    >>> _, problems = parse_eval_spec_text(
    ...     "stimuli:\\n  - name: a\\n    graders:\\n      - type: max-repeat\\n"
    ...     "        config: {max: 0}\\n", "eval.yaml")
    >>> [str(p) for p in problems]
    ['eval.yaml:5:23: stimuli[0].graders[0].config.max must be an integer >= 1 (got 0)']
    """
    root, problems = compose_located(text, file)
    top = _root_mapping(root)
    if top is None:
        if root is not None or not problems:
            got = "an empty document" if root is None else _kind(root.value)
            problems.append(ConfigError("document", "a mapping with a stimuli list", got,
                                        file=file, line=root.line if root else 1,
                                        col=root.col if root else 1))
        return EvalSpec(file), problems
    assert root is not None
    stimuli = top.get(_STIMULI)
    if stimuli is None or not isinstance(stimuli.value, list) or not stimuli.value:
        where = stimuli or root
        problems.append(ConfigError(
            _STIMULI, "a non-empty list of stimuli",
            "nothing" if stimuli is None else _kind(stimuli.value),
            file=file, line=where.line, col=where.col))
        return EvalSpec(file), problems
    found: dict[str, Stimulus] = {}
    seen: dict[str, int] = {}
    for i, item in enumerate(stimuli.value):
        stimulus = _stimulus(item, i, file, problems, seen)
        if stimulus is not None:
            found[stimulus.name] = stimulus
    if not problems and not any(s.graders for s in found.values()):
        problems.append(ConfigError(
            _STIMULI, f"a list in which some stimulus has a {GRADER_TYPE} grader",
            "none", file=file, line=stimuli.line, col=stimuli.col))
    problems.sort(key=lambda e: (e.line or 0, e.col or 0))
    return EvalSpec(file, found), problems


def load_eval_spec(path: str | Path) -> EvalSpec:
    """The eval spec of a file; raises the first `ConfigError` (carrying all of them)."""
    text, file = read_text(path)
    spec, problems = parse_eval_spec_text(text, file)
    raise_first(problems)
    return spec
