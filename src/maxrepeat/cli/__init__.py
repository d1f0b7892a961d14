"""The ``maxrepeat`` command: a thin click layer, one module per command.

``grade`` (cli/grade.py), ``lint``, ``schema``, ``formats`` (cli/lint.py) and ``hook``
(cli/hook.py) are imported only when named, so that ``maxrepeat --version`` and each
command pay only for what they use. Shared flags live in cli/options.py.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from . import _gc

_gc.pause()  # while click is imported (resumed at the end of this module)

import click  # noqa: E402

from .. import __version__  # noqa: E402

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

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        found = super().resolve_command(ctx, args)
        if found[0] != "grade":  # grade resumes the collector itself, before it reads
            _gc.resume()
        return found

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
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

def _show_version(ctx: click.Context, value: bool) -> None:
    """``maxrepeat --version``: the version, and which path grades (the native extension
    is optional; MAXREPEAT_PURE=1 selects the pure-Python reference)."""
    if not value or ctx.resilient_parsing:
        return
    from ..core.accel import description

    click.echo(f"maxrepeat {__version__} ({description()})")
    ctx.exit()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``maxrepeat`` command.

    Exit 1 means "a loop was found", so nothing else may end with it: a crash, a worker
    that died, a report that could not be written (a full disk) or standard output closed
    before the report was complete all exit 2 with one line on standard error.

    The garbage collector is paused while the command starts, and the last collection at
    interpreter exit is skipped (cli/_gc.py).
    """
    _gc.pause()  # until the command starts its work (cli/_gc.py)
    _gc.spare_exit()
    try:
        code = cli.main(args=list(argv) if argv is not None else None, prog_name="maxrepeat",
                        standalone_mode=False)
        _flush_stdout()
        if isinstance(code, int) and code:
            sys.exit(code)
    except SystemExit:
        _flush_stdout()
        raise
    except click.exceptions.Abort:
        _fail("interrupted", 130)
    except click.ClickException as err:
        err.show()
        sys.exit(2 if err.exit_code == 1 else err.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        _fail("standard output was closed before the report was complete (the run was cut "
              "short: no verdict)")
    except OSError as err:
        _fail(f"cannot write: {err.strerror or err}")
    except Exception as err:  # the last net: a bug must never look like a verdict
        name = type(err).__name__
        if name == "BrokenProcessPool":
            _fail(f"a worker process died before its results came back ({err}); "
                  "no verdict for this run")
        _fail(f"internal error: {name}: {err} (a maxrepeat bug: please report it)")
    finally:
        _gc.resume()


def _flush_stdout() -> None:
    """Flush standard output now, so that a full disk is an error here, not at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _fail("standard output was closed before the report was complete (the run was cut "
              "short: no verdict)")
    except OSError as err:
        _fail(f"cannot write the report to standard output: {err.strerror or err}")
    except ValueError:
        pass  # already closed


def _fail(message: str, code: int = 2) -> None:
    from ..core.preview import inert

    try:
        sys.stderr.write(f"maxrepeat: {inert(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    # Nothing buffered may be flushed later (it would fail again, or exit 120).
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    if code == 2 and _pool_used():
        from ..engines.batch import release_ipc

        release_ipc()
        os._exit(code)
    sys.exit(code)


def _pool_used() -> bool:
    """Whether worker processes were started (their exit-time join may hang after one
    died: leave at once)."""
    return "concurrent.futures.process" in sys.modules


_gc.resume()  # paused above while click was imported
