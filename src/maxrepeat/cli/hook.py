"""``maxrepeat hook AGENT``: the live guards as agent hook commands (one per agent), and
``maxrepeat hook install|uninstall AGENT`` that write them into the agent's settings.

The guard logic lives in ``maxrepeat.guards``; this module only speaks the command line:
flags, standard input, standard output and exit codes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from ..guards.policy import Policy
from .hookrun import fail, load_configs, policy_from_flags, read_payload
from .options import count_type, grader_options

__all__ = ["hook_cmd", "policy_options", "policy_from_flags", "read_payload", "load_configs"]

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> NoReturn:
    # Exit 1: agents report a non-blocking hook error to the user, not the model.
    fail(message)


def policy_options(func: F) -> F:
    """``--warn-at`` / ``--block-at`` / ``--stop-at`` (occurrences above max; 0: never)."""
    defaults = Policy()
    for flag, dest, default, what in (
        ("--stop-at", "stop_at", defaults.stop_at, "stop the agent"),
        ("--block-at", "block_at", defaults.block_at, "block (refuse) the repeated call"),
        ("--warn-at", "warn_at", defaults.warn_at, "warn the model"),
    ):
        func = click.option(flag, dest, type=count_type(0), default=default,
                            show_default=True, metavar="K",
                            help=f"{what.capitalize()} once a loop is K occurrences above "
                            "max (0: never).")(func)
    return func


@click.group("hook")
def hook_cmd() -> None:
    """Guard a live agent run: grade its transcript around each tool call (agent hooks)."""


def _self_command() -> list[str]:
    """How a hook runs this maxrepeat: ``maxrepeat`` when that is the one on PATH, else
    the absolute path of this executable (or this Python with ``-m maxrepeat``)."""
    import os
    import shutil

    argv0 = sys.argv[0]
    if os.path.basename(argv0) == "maxrepeat" and os.path.isfile(argv0):
        found = shutil.which("maxrepeat")
        if found and os.path.realpath(found) == os.path.realpath(argv0):
            return ["maxrepeat"]
        return [os.path.abspath(argv0)]
    return [sys.executable, "-m", "maxrepeat"]


def guard_command(agent: str, executable: list[str], flags: list[str]) -> str:
    """The hook command line written into an agent's settings.

    >>> guard_command("claude-code", ["maxrepeat"], ["--max", "3"])
    'maxrepeat hook claude-code --max 3'
    """
    import shlex

    return shlex.join([*executable, "hook", agent, *flags])


def _flags(config_file: str | None, max_: str | None, period: str | None, match: str | None,
           tools: tuple[str, ...], name: str | None, warn_at: int, block_at: int,
           stop_at: int, cache_dir: str | None, preset: str | None = None) -> list[str]:
    import os

    out: list[str] = []
    if config_file is not None:
        out += ["--config", os.path.abspath(config_file)]
    if preset is not None and preset != "seed":
        out += ["--preset", preset]
    for flag, value in (("--max", max_), ("--max-cycle-period", period), ("--match", match),
                        ("--name", name)):
        if value is not None:
            out += [flag, value]
    for t in tools:
        out += ["--tools", t]
    defaults = Policy()
    for flag, rung, default in (("--warn-at", warn_at, defaults.warn_at),
                                ("--block-at", block_at, defaults.block_at),
                                ("--stop-at", stop_at, defaults.stop_at)):
        if rung != default:
            out += [flag, str(rung)]
    if cache_dir is not None:
        out += ["--cache-dir", os.path.abspath(cache_dir)]
    return out


def _described(config: Any) -> str:
    """A grader's settings as one line: ``max 3, max_cycle_period 3, match name-args, …``."""
    import json

    return ", ".join(f"{key} {json.dumps(value) if not isinstance(value, str) else value}"
                     for key, value in config.to_dict().items() if key != "name")


def _agents() -> list[str]:
    from ..guards.agents import names

    return names()


_SCOPE = [
    click.option("--project", "scope", flag_value="project", default=True,
                 help="The project's settings (in the current directory; the default)."),
    click.option("--user", "scope", flag_value="user", help="Your user settings."),
]


def _scoped(func: F) -> F:
    for option in reversed(_SCOPE):
        func = option(func)
    return func


@hook_cmd.command("install", epilog="Exit codes: 0 done; 1 the settings file could not be "
                  "read or written (it is left as it was).")
@click.argument("agent", type=click.Choice(_agents()))
@_scoped
@grader_options("act", preset_help="Start from a named setting: live (the default without "
                "--config: name-args, cycles up to 3, volatile text normalized, max 3) or "
                "seed (the seed's defaults: observation, no cycles; --max needed); the "
                "flags above replace its keys.")
@policy_options
@click.option("--cache-dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Passed to the hook: where per-session state is kept.")
@click.option("--executable", metavar="CMD", help="How the agent runs maxrepeat "
              "(default: `maxrepeat` when it is on PATH, else this executable's path).")
def install_cmd(agent: str, scope: str, config_file: str | None, max_: str | None,
                period: str | None, match: str | None, tools: tuple[str, ...],
                name: str | None, preset: str | None, warn_at: int, block_at: int,
                stop_at: int, cache_dir: str | None, executable: str | None) -> None:
    """Write the loop guard into AGENT's settings (merged, with a backup): the agent then
    runs `maxrepeat hook AGENT` with these grader flags around every tool call. Without
    --config the grader is the live preset (name-args, cycles up to 3, volatile text
    normalized, max 3), with any flag given replacing its key; --preset seed starts
    from the seed's defaults instead."""
    import shlex

    from ..guards.install import install

    if config_file is None and preset is None:
        preset = "live"
    # checked now, not later
    configs = load_configs(config_file, max_, period, match, tools, name, preset)
    exe = shlex.split(executable) if executable else _self_command()
    command = guard_command(agent, exe, _flags(config_file, max_, period, match, tools, name,
                                               warn_at, block_at, stop_at, cache_dir, preset))
    try:
        done = install(agent, command, scope)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    click.echo(f"{'installed in' if done.changed else 'already in'} {done.path}"
               + (f" (backup: {done.backup})" if done.backup else "") + f"\n  {command}")
    for config in configs:
        click.echo(f"  grader: {_described(config)}")
    from .hookstatus import install_report

    install_report(agent, scope, done.path)  # whether the agent loads it (cli/hookstatus.py)


@hook_cmd.command("uninstall", epilog="Exit codes: 0 done (also when nothing was there); 1 "
                  "the settings file could not be read or written.")
@click.argument("agent", type=click.Choice(_agents()))
@_scoped
def uninstall_cmd(agent: str, scope: str) -> None:
    """Remove the loop guard's entries from AGENT's settings (and nothing else)."""
    from ..guards.install import uninstall

    try:
        done = uninstall(agent, scope)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    click.echo(f"{'removed from' if done.changed else 'nothing to remove in'} {done.path}"
               + (f" (backup: {done.backup})" if done.backup else ""))


def _register_agent_hooks() -> None:
    # one command per agent: cli/agent_hooks.py
    from .agent_hooks import register

    register(hook_cmd)
    from .hookstatus import register as register_status  # hook status: cli/hookstatus.py

    register_status(hook_cmd, _agents())


_register_agent_hooks()
