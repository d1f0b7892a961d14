"""``maxrepeat hook codex | gemini-cli | copilot-cli``: the guards of the agents whose hook
input names only the current call (the history is read from the agent's session log).

Each command reads one JSON object on standard input, prints the agent's JSON answer (or
nothing) and exits 0; a hook that cannot run (bad flags, input or log) says why on
standard error and exits 1, which each of these agents shows to the user and ignores
(the tool call goes on). Grader, policy and cache flags are the Claude Code hook's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .options import grader_options

__all__ = ["register", "AGENTS"]

#: command name -> (guard module, agent's name)
AGENTS: dict[str, tuple[str, str]] = {
    "codex": ("maxrepeat.guards.codex", "Codex CLI"),
    "gemini-cli": ("maxrepeat.guards.gemini_cli", "Gemini CLI"),
    "copilot-cli": ("maxrepeat.guards.copilot_cli", "Copilot CLI"),
}

_EPILOG = ("Exit codes: 0 judged (the JSON on standard output, if any, is the answer); "
           "1 the hook could not run (bad flags, input or session log; the agent shows "
           "standard error to the user and goes on).")


def _command(agent: str) -> Callable[..., None]:
    title = AGENTS[agent][1]

    def run(config_file: str | None, max_: str | None, period: str | None,
            match: str | None, tools: tuple[str, ...], name: str | None,
            preset: str | None, warn_at: int, block_at: int, stop_at: int,
            cache_dir: str | None) -> None:
        from .hookrun import run as run_hook

        run_hook(agent, config_file, max_, period, match, tools, name, warn_at, block_at,
                 stop_at, cache_dir, preset)

    run.__doc__ = (f"{title} hook: reads the hook JSON on standard input and, when the "
                   "session repeats an action (or a cycle) more than MAX times, answers as "
                   "the escalation policy says (warn, block, stop).\n\n"
                   f"Install it with:  maxrepeat hook install {agent}")
    return run


def register(group: click.Group) -> None:
    """Add the three agent commands to the ``hook`` group."""
    from .hook import policy_options

    for agent in AGENTS:
        func: Any = _command(agent)
        func = click.option(
            "--cache-dir", metavar="DIR", type=click.Path(file_okay=False),
            help="Where per-session state is kept (default "
            "$XDG_CACHE_HOME/maxrepeat/hook).")(func)
        func = policy_options(func)
        func = grader_options("flag")(func)
        group.add_command(click.command(agent, epilog=_EPILOG)(func))
