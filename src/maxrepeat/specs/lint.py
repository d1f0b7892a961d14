"""`lint`: every problem in a file people write, by the rules that load it.

A config file (``graders:``) and an eval spec (``stimuli:``; only its ``max-repeat``
entries are checked) are told apart by the ``stimuli`` key. ``maxrepeat.lint()`` and the
``maxrepeat lint`` command are this one function, so they always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.config import MaxRepeatConfig
from ..core.errors import ConfigError
from ..core.events import Trajectory
from ..core.near.steps import collapses
from .configfile import parse_config_text, read_text
from .evalspec import is_eval_spec, parse_eval_spec_text

__all__ = ["lint"]


def lint(path: str | Path, against: Sequence[Trajectory] = ()) -> list[ConfigError]:
    """Every problem in a config file or an eval spec, each with file, line, column and
    key path. An unreadable file is one problem.

    ``against``: real trajectories to try the graders on: a grader whose near-duplicate
    settings (``normalize``, ``ignore_arguments``, ``replace``, ``similarity``) make every
    step of one of them equal, where exact matching tells them apart, is a problem.

    >>> lint("examples/graders.yaml"), lint("examples/eval.yaml")
    ([], [])
    >>> [str(p) for p in lint("no-such.yaml")]
    ['no-such.yaml: file must be a readable file (got No such file or directory)']
    """
    try:
        text, file = read_text(path)
    except ConfigError as err:
        return [err]
    if is_eval_spec(text):
        return parse_eval_spec_text(text, file)[1]
    configs, problems = parse_config_text(text, file)
    if not problems:
        problems.extend(_collapsing(configs, against, file))
    return problems


def _collapsing(configs: Sequence[MaxRepeatConfig], against: Sequence[Trajectory],
                file: str) -> list[ConfigError]:
    out: list[ConfigError] = []
    for i, cfg in enumerate(configs):
        for traj in against:
            found = collapses(traj, cfg)
            if found is not None:
                steps, distinct = found
                out.append(ConfigError(
                    f"graders[{i}].config", "near-duplicate settings that keep different "
                    "steps apart",
                    f"all {steps} steps of {traj.label} equal, {distinct} different exactly",
                    hint="ignore fewer arguments or anchor the replace patterns", file=file))
                break
    return out
