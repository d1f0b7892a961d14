"""The click command group behind ``maxrepeat`` (``maxrepeat.cli.cli``).

Each command's module is imported only when it is named, so that ``maxrepeat --version``
and each command pay only for what they use. A plain agent hook call (``maxrepeat hook
AGENT`` with the documented flags) does not come here at all: `maxrepeat.cli.main` runs it
without click (cli/hookrun.py), and only its unusual forms (``--help``, a bad flag) do.
"""

from __future__ import annotations

from . import _gc

_paused = _gc.pause()  # while click is imported (resumed at the end of this module)

import click  # noqa: E402

from .. import __version__  # noqa: E402

__all__ = ["cli"]


class _CutShort(BrokenPipeError):
    """Standard output (or standard error) was closed before the report was complete:
    the run has no verdict, exit 2 (`maxrepeat.cli.main`).

    Raised without an errno on purpose: click's ``main`` turns an ``OSError`` whose errno
    is ``EPIPE`` into ``sys.exit(1)``, which reads as "a loop was found"."""


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

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if (name and not name.startswith("-") and not ctx.resilient_parsing
                and self.get_command(ctx, name) is None):
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        found = super().resolve_command(ctx, args)
        if found[0] != "grade":  # grade resumes the collector itself, before it reads
            _gc.resume()
        return found

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except _CutShort:
            raise
        except BrokenPipeError as err:
            raise _CutShort() from err

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
            import importlib

            module, attr = self.LAZY[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda ctx, _param, value: _show_version(ctx, value),
              help="Show the version and which grading path is active (native fast path or "
                   "pure Python), and exit.")
def cli() -> None:
    """Grade LLM agent trajectories for loops: fail a run in which a tool action, or a short
    cycle of actions, repeats more than MAX times (the max-repeat grader)."""
    from .purenote import note_pure_python

    note_pure_python()

def _show_version(ctx: click.Context, value: bool) -> None:
    """``maxrepeat --version``: the version, and which path grades (the native extension
    is optional; MAXREPEAT_PURE=1 selects the pure-Python reference)."""
    if not value or ctx.resilient_parsing:
        return
    from ..core.accel import description

    click.echo(f"maxrepeat {__version__} ({description()})")
    ctx.exit()


if _paused:
    _gc.resume()  # paused above while click was imported (unless main() paused it first)
