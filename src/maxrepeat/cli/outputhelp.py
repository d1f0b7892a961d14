"""The ``grade`` command's help for its output flags, made when help is shown from what
the reporters declare (`Reporter.name`, ``help`` and ``suffixes``), built-in or from
another package: adding an output edits no help text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

__all__ = ["DEFAULT_OUTPUT", "DerivedHelp", "output_help", "output_file_help"]

#: the report's format when neither --output-format nor an --output-file ending picks one:
#: the same report in a terminal, a CI log or `> out.txt`
DEFAULT_OUTPUT = "console"


class DerivedHelp(click.Option):
    """An option whose help is made when help is shown (``derive()``), from what the
    plug-ins declare: no reporter is listed or imported to start a command."""

    def __init__(self, *args: Any, derive: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.derive = derive

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.derive()
        return super().get_help_record(ctx)


def output_help() -> str:
    """``--output-format``: every output with what it writes."""
    from ..reporters import output_names, reporter_class

    outputs = [f"{n} ({reporter_class(n).help})" for n in output_names()]
    return (f"The report's format (default: {DEFAULT_OUTPUT}, on a terminal or not): "
            f"{', '.join(outputs[:-1])} or {outputs[-1]}.")


def output_file_help() -> str:
    """``--output-file``: the file endings that pick each output."""
    from ..reporters import output_names, reporter_class

    endings = [s if s[1:] == n else f"{s} {n}"
               for n in output_names() for s in reporter_class(n).suffixes]
    return ("Write the report to FILE instead of standard output, whole or not at all (a "
            "temporary file renamed into place); its ending picks the format "
            f"({', '.join(endings)}; other endings: jsonl) unless --output-format is given.")
