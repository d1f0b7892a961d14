"""Whether ``maxrepeat grade`` colours its console report: ``--color``, then the two
published environment conventions, then the terminal.

- ``--color always`` / ``--color never`` decide, whatever the environment (a flag given
  for one run overrides a setting of the whole session, as both conventions ask).
- ``NO_COLOR`` set to a non-empty value turns colour off (https://no-color.org: an empty
  value means nothing).
- ``FORCE_COLOR`` set to a non-empty value turns colour on even when the report does not
  go to a terminal (https://force-color.org). When both are set, ``NO_COLOR`` wins, as in
  Python's own interpreter.
- Otherwise colour when the report goes to a terminal that is not ``TERM=dumb``.

A report file (``--output-file``) is an artifact, not a log: it is coloured only with
``--color always`` (cli/grade.py), as ruff's ``--output-file`` is never coloured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["COLOR_CHOICES", "color_option", "wants_color"]

COLOR_CHOICES = ("auto", "always", "never")


def color_option() -> Callable[[Any], Any]:
    """The ``--color`` flag (its value reaches the command as ``color_choice``)."""
    import click

    return click.option(
        "--color", "color_choice", type=click.Choice(COLOR_CHOICES), default="auto",
        show_default=True,
        help="Colour the console report: auto colours a terminal, or any standard output "
             "when FORCE_COLOR is set, never when NO_COLOR is set (non-empty values); an "
             "--output-file report only with always.")


def wants_color(choice: str, to_terminal: bool, environ: Mapping[str, str]) -> bool:
    """Whether to colour (``choice``: the ``--color`` value; ``to_terminal``: whether the
    report goes to a terminal).

    >>> wants_color("auto", True, {"NO_COLOR": ""}), wants_color("auto", True, {"NO_COLOR": "1"})
    (True, False)
    >>> wants_color("auto", False, {"FORCE_COLOR": "0"}), wants_color("never", True, {})
    (True, False)
    >>> wants_color("always", False, {"NO_COLOR": "1"})
    True
    """
    if choice != "auto":
        return choice == "always"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return to_terminal and environ.get("TERM") != "dumb"
