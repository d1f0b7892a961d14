"""``maxrepeat hook AGENT``: the live guards as agent hook commands (one per agent).

The guard logic lives in ``maxrepeat.guards``; this module only speaks the command line:
flags, standard input, standard output and exit codes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from ..core.errors import ConfigError, TrajectoryFormatError
from ..core.preview import inert
from ..guards.claude_code import WHEN_CHOICES, guard
from .options import grader_options, inline_config

__all__ = ["hook_cmd"]


def _fail(message: str) -> NoReturn:
    # Exit 1: Claude Code reports a non-blocking hook error to the user, not the model.
    click.echo(f"maxrepeat hook: {inert(message)}", err=True)
    sys.exit(1)

@click.group("hook")
def hook_cmd() -> None:
    """Guard a live agent run: grade its transcript after each tool call (agent hooks)."""

@hook_cmd.command("claude-code", epilog="Exit codes: 0 graded (blocking or not: the JSON on "
                  "standard output says); 1 the hook could not run (bad input, config or "
                  "transcript; reported to the user, not to the model).")
@grader_options("block")
@click.option("--cache-dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Where per-session state is kept (default $XDG_CACHE_HOME/maxrepeat/hook).")
@click.option("--when", type=click.Choice(WHEN_CHOICES), default="looping", show_default=True,
              help="looping: block while a run above max is still growing; failed: block on "
              "every call once a grader fails.")
def claude_code_cmd(
    config_file: str | None,
    max_: str | None,
    period: str | None,
    match: str | None,
    tools: tuple[str, ...],
    name: str | None,
    cache_dir: str | None,
    when: str,
) -> None:
    """Claude Code PostToolUse hook: reads the hook JSON on standard input and, when the
    session repeats an action (or a cycle) more than MAX times, prints the JSON that
    blocks and tells the model what it repeats.

    \b
    In .claude/settings.json:
      {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command",
        "command": "maxrepeat hook claude-code --max 3 --max-cycle-period 2 --match name-args"}]}]}}
    """
    from ..specs.configfile import load_config

    inline = any(v is not None for v in (max_, period, match, name)) or bool(tools)
    if config_file is not None and inline:
        _fail("give either --config FILE or the inline grader flags (--max …), not both")
    try:
        if config_file is not None:
            configs = load_config(config_file)
        elif max_ is not None:
            configs = [inline_config(max_, period, match, tools, name)]
        else:
            _fail("no grader: give --config FILE, or --max N (with optional "
                  "--max-cycle-period, --match, --tools)")
    except ConfigError as err:
        _fail("; ".join(str(p) for p in err.problems) if err.problems else str(err))
    raw = sys.stdin.buffer.read()
    try:
        from ..core.canonical import json_int

        payload = json.loads(raw.decode("utf-8"), parse_int=json_int)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        _fail(f"the hook input on standard input is not JSON: {exc}")
    if not isinstance(payload, dict):
        _fail("the hook input on standard input must be a JSON object")
    try:
        verdict = guard(payload, configs, cache_dir=Path(cache_dir) if cache_dir else None,
                        when=when)
    except TrajectoryFormatError as err:
        _fail(str(err))
    out = verdict.output()
    if out is not None:
        click.echo(json.dumps(out, ensure_ascii=False))
