"""``maxrepeat hook status [AGENT]`` and what ``hook install`` says after writing: a thin
layer over `maxrepeat.guards.status` (which guards are installed, whether each agent
loads its guard, what the guard last said). The guard's flags are read here, by the very
click command the agent runs, so a flag means in status what it means in the hook."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.errors import ConfigError

if TYPE_CHECKING:  # imported when used: `hook AGENT --help` does not pay for them
    from ..guards.status import Graders, Installed

__all__ = ["register", "install_report", "parse_guard"]


def _problem(guard: Installed, got: str) -> str:
    try:
        text = guard.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    at = text.find(json.dumps(guard.command)[1:-1])
    line = text.count("\n", 0, at) + 1 if at >= 0 else 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1 if at >= 0 else 1
    from ..guards.agents import get

    key = getattr(get(guard.agent).writer, "command_key", None)
    where = f"hooks.{guard.events[0]}[].{key}" if key else "maxrepeat-guard-command"
    return str(ConfigError(where,
                           f"a command whose flags `maxrepeat hook {guard.agent}` reads", got,
                           hint="install the guard again", file=str(guard.file), line=line,
                           col=col))


def parse_guard(guard: Installed) -> Graders | str:
    """The graders, policy and cache folder a guard's command runs with, read by the
    agent's own hook command; or the problem, in the one message grammar."""
    import contextlib
    import inspect
    import io

    from ..guards.status import Graders
    from .hook import hook_cmd
    from .hookrun import load_configs, policy_from_flags

    command = hook_cmd.commands[guard.agent]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            ctx = command.make_context(guard.agent, list(guard.args))
            params = ctx.params
            wanted = inspect.signature(load_configs).parameters
            configs = load_configs(**{k: v for k, v in params.items() if k in wanted})
    except click.ClickException as exc:
        return _problem(guard, exc.format_message())
    except (SystemExit, click.exceptions.Exit):
        said = err.getvalue().strip().removeprefix("maxrepeat hook: ")
        return _problem(guard, said or "no grader")
    policy = policy_from_flags(params["warn_at"], params["block_at"], params["stop_at"])
    cache = params.get("cache_dir")
    return Graders(tuple(configs), policy, Path(cache) if cache else None)


def install_report(agent: str, scope: str, path: Path) -> None:
    """After ``hook install``: whether the agent will load what was written, and if not,
    what makes it load (nothing is changed: trust stays the user's to give)."""
    from ..guards.agent_trust import will_load

    load = will_load(agent, scope, path, project=Path.cwd(), home=Path.home())
    if load.loads:
        click.echo(f"{agent} loads it" + "".join(f"\n  note: {n}" for n in load.notes))
        return
    click.echo(f"{agent} will NOT load it yet:")
    for problem in load.problems:
        click.echo("\n".join(f"  {line}" for line in str(problem).splitlines()))
    for note in load.notes:
        click.echo(f"  note: {note}")
    user = path if scope == "user" else None
    if user is None:
        from ..guards.install import writer_of

        user = writer_of(agent).path("user", Path.cwd(), Path.home())
        if will_load(agent, "user", user, project=Path.cwd(), home=Path.home()).loads:
            click.echo(f"  or install it for your user instead: maxrepeat hook install "
                       f"{agent} --user ...")
    click.echo("  check with: maxrepeat hook status " + agent)


def _status_cmd(agents: list[str]) -> click.Command:
    @click.command("status", epilog="Exit codes: 0 listed (whether or not a guard is "
                   "installed or loads); 1 a settings file could not be read.")
    @click.argument("agent", required=False, type=click.Choice(agents))
    @click.option("--json", "as_json", is_flag=True, help="One JSON object on standard output.")
    @click.option("--last", default=5, show_default=True, type=click.IntRange(min=0),
                  metavar="N", help="Verdicts and sessions shown per guard.")
    @click.option("--session", metavar="ID", help="Only this session's verdicts (the id "
                  "the agent gives its run: session_id in claude -p --output-format json).")
    def status_cmd(agent: str | None, as_json: bool, last: int, session: str | None) -> None:
        """List each installed loop guard (the current folder's project settings and your
        user settings): scope, file, command and its grader settings, whether the agent
        will load it (and what makes it load), what the agent does on a stop, and the
        newest verdicts and sessions from the guard's state."""
        from ..guards.status import as_dict, as_text, installed, status

        project, home = Path.cwd(), Path.home()
        found, problems = installed([agent] if agent else agents, project, home)
        items = status(found, parse_guard, project=project, home=home, env=os.environ,
                       limit=last, session=session)
        if as_json:
            click.echo(json.dumps({"guards": [as_dict(i) for i in items],
                                   "problems": problems}, indent=2, ensure_ascii=False))
        else:
            for item in items:
                click.echo("\n".join(as_text(item)))
            if not items:
                click.echo("no maxrepeat guard installed for "
                           f"{agent or 'any agent'} (project: {project}; user: {home})")
            for problem in problems:
                click.echo(f"maxrepeat: {problem}", err=True)
        raise SystemExit(1 if problems else 0)

    return status_cmd


def register(group: click.Group, agents: list[str]) -> None:
    """Add ``status`` to the ``hook`` group."""
    group.add_command(_status_cmd(agents))
