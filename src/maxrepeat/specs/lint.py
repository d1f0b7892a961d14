"""`lint`: every problem in a file people write, by the rules that load it.

A config file (``graders:``) and an eval spec (``stimuli:``; only its ``max-repeat``
entries are checked) are told apart by the ``stimuli`` key. ``maxrepeat.lint()`` and the
``maxrepeat lint`` command are this one function, so they always agree.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import ConfigError
from .configfile import parse_config_text, read_text
from .evalspec import is_eval_spec, parse_eval_spec_text

__all__ = ["lint"]


def lint(path: str | Path) -> list[ConfigError]:
    """Every problem in a config file or an eval spec, each with file, line, column and
    key path. An unreadable file is one problem.

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
    return parse_config_text(text, file)[1]
