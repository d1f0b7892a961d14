"""The ``maxrepeat`` command: a thin click layer, one module per command.

``grade`` (cli/grade.py), ``lint``, ``schema``, ``formats`` (cli/lint.py) and ``hook``
(cli/hook.py) are imported only when named, so that ``maxrepeat --version`` and each
command pay only for what they use. Shared flags live in cli/options.py.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import click

from .. import __version__

__all__ = ["main", "cli"]


class _Commands(click.Group):
    """The command group, with each command's module imported only when it is named."""

    #: command name -> (module, attribute)
    LAZY = {
        "grade": ("maxrepeat.cli.grade", "grade_cmd"),
        "lint": ("maxrepeat.cli.lint", "lint_cmd"),
        "schema": ("maxrepeat.cli.lint", "schema_cmd"),
        "formats": ("maxrepeat.cli.lint", "formats_cmd"),
        "hook": ("maxrepeat.cli.hook", "hook_cmd"),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
            module, attr = self.LAZY[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="maxrepeat")
def cli() -> None:
    """Grade LLM agent trajectories for loops: fail a run in which a tool action, or a short
    cycle of actions, repeats more than MAX times (the max-repeat grader)."""

def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``maxrepeat`` command."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="maxrepeat")
