"""Reporters: results in, text out. One module per output format.

Each format is a `Reporter` (``reporters.base``): ``add(result, detail)`` returns the
text to write for one result as it arrives (a line, for formats that stream), ``finish(summary)``
the text that ends the report, and ``render(results, summary)`` a whole report at once.
Modules are imported on first use: ``rich`` is loaded only by the console reporter.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .base import Reporter

__all__ = ["OUTPUTS", "get_reporter"]

#: output name -> module; each module's ``REPORTER`` is its `Reporter` class
OUTPUTS: Final[dict[str, str]] = {
    "console": "maxrepeat.reporters.console",
    "json": "maxrepeat.reporters.json",
    "jsonl": "maxrepeat.reporters.jsonl",
    "junit": "maxrepeat.reporters.junit",
    "markdown": "maxrepeat.reporters.markdown",
    "html": "maxrepeat.reporters.html",
}


def get_reporter(name: str, color: bool | None = False) -> Reporter:
    """A new reporter of an output format (``color``: for the console format).

    >>> type(get_reporter("jsonl")).__name__
    'JsonlReporter'
    """
    try:
        module = importlib.import_module(OUTPUTS[name])
    except KeyError:
        raise ValueError(f"output must be one of {', '.join(OUTPUTS)} (got {name!r})") from None
    cls: type[Reporter] = module.REPORTER
    return cls(color)
