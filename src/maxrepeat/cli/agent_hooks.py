"""``maxrepeat hook AGENT``: one command per agent of `maxrepeat.guards.agents`.

Each command reads one JSON object on standard input, prints the agent's JSON answer (or
nothing) and exits as the agent's protocol says (0 for every agent guarded so far); a
hook that cannot run (bad flags, input or log) says why on standard error and exits 1,
which each agent shows to the user and ignores (the tool call goes on). The commands are
made from the descriptors: an agent added there has its command here with no edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .options import grader_options

__all__ = ["register"]

_EPILOG = ("Exit codes: 0 judged (the JSON on standard output, if any, is the answer); "
           "1 the hook could not run (bad flags, input or session log; the agent shows "
           "standard error to the user and goes on).")


def _command(agent: str, title: str, events: tuple[str, ...]) -> Callable[..., None]:
    def run(config_file: str | None, max_: str | None, period: str | None,
            match: str | None, tools: tuple[str, ...], name: str | None,
            preset: str | None, warn_at: int, block_at: int, stop_at: int,
            cache_dir: str | None) -> None:
        from .hookrun import run as run_hook

        run_hook(agent, config_file, max_, period, match, tools, name, warn_at, block_at,
                 stop_at, cache_dir, preset)

    run.__doc__ = (f"{title} hook ({', '.join(events)}): reads the hook JSON on standard "
                   "input and, when the session repeats an action (or a cycle) more than "
                   "MAX times, warns the model, then refuses the repeat, then stops the "
                   "agent (as far as the agent lets a hook: see its docs page).\n\n"
                   f"\b\nInstall it with:  maxrepeat hook install {agent}")
    return run


def register(group: click.Group) -> None:
    """Add one command per agent to the ``hook`` group."""
    from ..guards import agents
    from .hook import policy_options

    for name in agents.names():
        agent = agents.get(name)
        func: Any = _command(name, agent.title, agent.events)
        func = click.option(
            "--cache-dir", metavar="DIR", type=click.Path(file_okay=False),
            help="Where per-session state is kept (default "
            "$XDG_CACHE_HOME/maxrepeat/hook).")(func)
        func = policy_options(func)
        func = grader_options("flag")(func)
        group.add_command(click.command(name, epilog=_EPILOG)(func))
