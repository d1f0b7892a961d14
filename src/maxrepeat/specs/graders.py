"""The graders a live guard or a platform scorer is given: one config, several, or the
path of a config file (read when the graders are loaded, so a module that only names
`Graders` does not import the config-file reader)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..core.config import MaxRepeatConfig

__all__ = ["Graders", "load_graders"]

#: MaxRepeatConfig values, or the path of a YAML config file.
Graders = MaxRepeatConfig | Sequence[MaxRepeatConfig] | str | os.PathLike[str]


def load_graders(graders: Graders) -> list[MaxRepeatConfig]:
    """Grader configs from one config, several, or a config file path.

    >>> [c.max for c in load_graders(MaxRepeatConfig(max=3))]
    [3]
    """
    if isinstance(graders, MaxRepeatConfig):
        return [graders]
    if isinstance(graders, (str, os.PathLike)):
        from .configfile import load_config

        return load_config(os.fspath(graders))
    configs = list(graders)
    if not configs or not all(isinstance(c, MaxRepeatConfig) for c in configs):
        raise TypeError("graders must be MaxRepeatConfig values or a config file path")
    return configs
