"""The ``maxrepeat`` command: a thin click layer, one module per command.

``grade`` (cli/grade.py), ``lint``, ``schema``, ``formats`` (cli/lint.py) and ``hook``
(cli/hook.py) are imported only when named, so that ``maxrepeat --version`` and each
command pay only for what they use; the click group itself is ``cli/group.py``. A plain
agent hook call (``maxrepeat hook AGENT`` with the documented flags, which an agent runs
as a new process at every tool call) is run without importing click at all
(cli/hookrun.py): its start-up is most of what the call costs (bench/RESULTS.md).

``maxrepeat.cli.cli`` (the click group) is loaded on first access (module
``__getattr__``).
"""

from __future__ import annotations

import os
import sys

from . import _gc

TYPE_CHECKING = False  # not typing's: importing `typing` costs a hook call (cli/hookclient.py)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .group import cli

__all__ = ["main", "cli"]


def __getattr__(name: str) -> Any:
    if name == "cli":
        from .group import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``maxrepeat`` command.

    Exit 1 means "a loop was found", so nothing else may end with it: a crash, a worker
    that died, a report that could not be written (a full disk) or standard output closed
    before the report was complete all exit 2 with one line on standard error.

    An agent's hook (``maxrepeat hook AGENT …``) is the exception: there 2 is what the
    agent reads as "block this tool call", so a hook that cannot run for any reason (an
    unknown flag, a bad value, a crash) exits 1, each agent's non-blocking error.

    The garbage collector is paused while the command starts, and the last collection at
    interpreter exit is skipped (cli/_gc.py).
    """
    if argv is None and sys.argv[1:2] == ["hook"]:
        from .hookclient import resident_call

        resident_call()  # answers and exits when the resident server can (hookclient.py)
    _gc.pause()  # until the command starts its work (cli/_gc.py)
    _gc.spare_exit()
    args = sys.argv[1:] if argv is None else list(argv)
    code = 2
    try:
        run = None
        if args[:1] == ["hook"]:
            from .hookrun import is_agent, plain_call

            if args[1:2] and is_agent(args[1]):
                code = 1  # an agent's hook that cannot run must not block the agent
            run = plain_call(args[1:])  # None: not a plain agent call (click takes it)
        if run is not None:
            result = run()
        else:
            from .group import cli

            result = cli.main(args=list(argv) if argv is not None else None,
                              prog_name="maxrepeat", standalone_mode=False)
        _flush_stdout(code)
        if isinstance(result, int) and result:
            sys.exit(result)
    except SystemExit:
        _flush_stdout(code)
        raise
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as err:
        _failed(err, code)
    finally:
        _gc.resume()


def _failed(err: Exception, code: int = 2) -> None:
    """Exit as ``main`` says for an exception that ended the command (``code``: the
    command's error exit, 2, or 1 for an agent's hook)."""
    if "click" in sys.modules:  # only a command run through click raises its exceptions
        import click

        if isinstance(err, click.exceptions.Abort):
            _fail("interrupted", 130)
        if isinstance(err, click.ClickException):
            err.show()
            sys.exit(code if err.exit_code in (1, 2) else err.exit_code)
    if isinstance(err, BrokenPipeError):
        _fail("standard output was closed before the report was complete (the run was cut "
              "short: no verdict)", code)
    if isinstance(err, OSError):
        _fail(f"cannot write: {err.strerror or err}", code)
    # the last net: a bug must never look like a verdict
    name = type(err).__name__
    if name == "BrokenProcessPool":
        _fail(f"a worker process died before its results came back ({err}); "
              "no verdict for this run", code)
    _fail(f"internal error: {name}: {err} (a maxrepeat bug: please report it)", code)


def _flush_stdout(code: int = 2) -> None:
    """Flush standard output now, so that a full disk is an error here, not at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _fail("standard output was closed before the report was complete (the run was cut "
              "short: no verdict)", code)
    except OSError as err:
        _fail(f"cannot write the report to standard output: {err.strerror or err}", code)
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
    if code in (1, 2) and _pool_used():
        from ..engines.batch import release_ipc

        release_ipc()
        os._exit(code)
    sys.exit(code)


def _pool_used() -> bool:
    """Whether worker processes were started (their exit-time join may hang after one
    died: leave at once)."""
    return "concurrent.futures.process" in sys.modules

