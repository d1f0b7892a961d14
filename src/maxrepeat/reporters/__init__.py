"""Reporters: small functions, results in, text out. One module per output format.

Each module exposes ``render(results, summary) -> str`` (the whole report) and, when the
format can stream, ``line(result) -> str`` and ``footer(summary) -> str`` so that a batch
is written one result at a time. Modules are imported on first use: ``rich`` is loaded
only by the console reporter.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Final

from ..core.result import GraderResult
from ..core.summary import Summary

__all__ = ["OUTPUTS", "get_reporter", "render", "is_streaming"]

#: output name -> module
OUTPUTS: Final[dict[str, str]] = {
    "console": "maxrepeat.reporters.console",
    "json": "maxrepeat.reporters.json",
    "jsonl": "maxrepeat.reporters.jsonl",
    "junit": "maxrepeat.reporters.junit",
    "markdown": "maxrepeat.reporters.markdown",
    "html": "maxrepeat.reporters.html",
}


def get_reporter(name: str) -> ModuleType:
    """The reporter module of an output format."""
    try:
        return importlib.import_module(OUTPUTS[name])
    except KeyError:
        raise ValueError(f"output must be one of {', '.join(OUTPUTS)} (got {name!r})") from None


def is_streaming(name: str) -> bool:
    """Whether the format writes one result at a time."""
    return hasattr(get_reporter(name), "line")


def render(name: str, results: Sequence[GraderResult], summary: Summary) -> str:
    """A whole report in one format."""
    text: str = get_reporter(name).render(results, summary)
    return text
