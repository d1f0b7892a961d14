"""One agent hook call (``maxrepeat hook AGENT``), with or without click.

An agent runs its hook as a new process at every tool call, so what the process imports
before it works is paid at every call: with click, the click group and its help for every
command, it was most of the call (bench/RESULTS.md, "Claude Code hook"). `plain_call`
reads the flags of a plain call itself and `run` does the call importing only what the
hook needs; anything it does not recognise exactly (``--help``, an unknown or repeated
flag, a value that is not plainly valid) returns None, and ``maxrepeat.cli.main`` hands
the command line to click, whose answer (help, usage error, exit 2) is therefore the one
it always was. The click commands (cli/hook.py, cli/agent_hooks.py) call the same `run`.

This module imports nothing heavy at its top: ``maxrepeat.cli.main`` imports it for every
``maxrepeat hook …`` command line.

>>> plain_call(["claude-code", "--max", "3", "--tools=Bash"]) is not None
True
>>> plain_call(["claude-code", "--max", "3", "--help"]) is None
True
>>> plain_call(["install", "claude-code"]) is None
True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from ..core.config import MaxRepeatConfig
    from ..guards.policy import Policy

__all__ = ["is_agent", "plain_call", "run", "fail", "echo", "load_configs", "read_payload",
           "policy_from_flags"]



def is_agent(name: str) -> bool:
    """Whether ``maxrepeat hook NAME`` is an agent's hook call (an agent of
    `maxrepeat.guards.agents`, each a command of cli/agent_hooks.py)."""
    from ..guards.agents import module_of

    return module_of(name) is not None

#: flag -> parameter of `run`, for the flags that take one value
_VALUED = {"-c": "config_file", "--config": "config_file", "--max": "max_",
           "--max-cycle-period": "period", "--match": "match", "--name": "name",
           "--warn-at": "warn_at", "--block-at": "block_at", "--stop-at": "stop_at",
           "--cache-dir": "cache_dir", "--preset": "preset"}
_RUNGS = ("warn_at", "block_at", "stop_at")


def echo(text: str, err: bool = False) -> None:
    """``click.echo(text, err=err)`` without importing click: one line, flushed. (Click
    would also strip ANSI escapes from a stream that is not a terminal; the hook's output
    has none: JSON escapes control characters and `fail` makes them inert.) A text the
    stream cannot encode goes through click, which knows what to do with it."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    if "click" not in sys.modules:
        try:
            stream.write(text + "\n")
        except UnicodeEncodeError:
            pass  # nothing was written: click's own handling below
        else:
            stream.flush()
            return
    import click

    click.echo(text, err=err)


def fail(message: str) -> NoReturn:
    """Say why the hook could not run, on standard error, and exit 1 (agents report a
    non-blocking hook error to the user, not the model)."""
    from ..core.preview import inert

    echo(f"maxrepeat hook: {inert(message)}", err=True)
    sys.exit(1)


def policy_from_flags(warn_at: int, block_at: int, stop_at: int) -> Policy:
    """The `Policy` the flags give (0 switches a rung off)."""
    from ..guards.policy import Policy

    return Policy(warn_at=warn_at or 1, block_at=block_at or 1, stop_at=stop_at or 1,
                  warn=warn_at > 0, block=block_at > 0, stop=stop_at > 0)


def load_configs(config_file: str | None, max_: str | None, period: str | None,
                 match: str | None, tools: tuple[str, ...], name: str | None,
                 preset: str | None = None) -> list[MaxRepeatConfig]:
    """The graders from ``--config`` or the inline flags (exit 1 on a problem)."""
    from ..core.errors import ConfigError
    from .options import inline_config, inline_given

    inline = inline_given(max_, period, match, tools, name, preset)
    if config_file is not None and inline:
        fail("give either --config FILE or the inline grader flags (--max, --preset …), "
             "not both")
    try:
        if config_file is not None:
            from ..specs.configfile import load_config  # YAML: only for a config file

            return load_config(config_file)
        if max_ is not None or preset is not None:
            return [inline_config(max_, period, match, tools, name, preset)]
    except ConfigError as err:
        fail("; ".join(str(p) for p in err.problems) if err.problems else str(err))
    fail("no grader: give --config FILE, --preset live, or --max N (with optional "
         "--max-cycle-period, --match, --tools)")


def read_payload() -> dict[str, Any]:
    """The hook input: one JSON object on standard input (exit 1 otherwise)."""
    import json

    raw = sys.stdin.buffer.read()
    try:
        from ..core.canonical import json_int

        payload = json.loads(raw.decode("utf-8"), parse_int=json_int)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        fail(f"the hook input on standard input is not JSON: {exc}")
    if not isinstance(payload, dict):
        fail("the hook input on standard input must be a JSON object")
    return payload


def run(agent: str, config_file: str | None, max_: str | None, period: str | None,
        match: str | None, tools: tuple[str, ...], name: str | None, warn_at: int,
        block_at: int, stop_at: int, cache_dir: str | None,
        preset: str | None = None) -> None:
    """``maxrepeat hook AGENT`` with these flags: read the hook input, answer on standard
    output (JSON, or nothing), exit as the agent's protocol says (0, or the code the
    guard gives); exit 1 when the hook cannot run."""
    import json
    from pathlib import Path

    from ..core.errors import TrajectoryFormatError
    from ..guards.agents import get
    from . import _gc

    configs = load_configs(config_file, max_, period, match, tools, name, preset)
    policy = policy_from_flags(warn_at, block_at, stop_at)
    guard = get(agent).guard
    _gc.resume()  # start-up is over (paused by main(), when it ran this)
    payload = read_payload()
    cache = Path(cache_dir) if cache_dir else None
    try:
        out, decision = guard(payload, configs, policy=policy, cache_dir=cache)
    except TrajectoryFormatError as err:
        fail(str(err))
    if out.stdout is not None:
        echo(json.dumps(out.stdout, ensure_ascii=False))
        # what the guard said, for `maxrepeat hook status` (a quiet call writes nothing)
        from ..guards.verdicts import record

        record(cache, agent, payload, decision, out.stdout, configs, policy)
    if out.exit_code:
        sys.exit(out.exit_code)


def plain_call(args: Sequence[str]) -> Callable[[], None] | None:
    """The call ``maxrepeat hook ARGS`` makes, when ARGS are an agent and flags that click
    would read the same way without a word (None otherwise: click reads them).

    Taken: ``--flag VALUE`` and ``--flag=VALUE`` of the hook's own flags, each once
    (``--tools`` any number of times), ``-c FILE``; values that do not start with ``-``;
    ``--warn-at`` / ``--block-at`` / ``--stop-at`` in ASCII digits; a ``--cache-dir`` that
    does not exist or is a readable directory (click's checks of it).
    """
    if not args or args[0].startswith("-") or not is_agent(args[0]):
        return None
    values: dict[str, Any] = {}
    tools: list[str] = []
    rest = list(args[1:])
    while rest:
        taken = _flag_value(rest, values)
        if taken is None or not _take(*taken, values, tools):
            return None
    _fill_defaults(values)
    agent = args[0]
    return lambda: run(agent, tools=tuple(tools), **values)


def _flag_value(rest: list[str], values: dict[str, Any]) -> tuple[str, str] | None:
    """(the destination, the value) of the flag at the head of ``rest``, both taken off
    it; None when click must read the arguments (a flag given twice, a missing value)."""
    flag = rest.pop(0)
    if flag.startswith("--") and "=" in flag:
        flag, value = flag.split("=", 1)
    elif rest:
        value = rest.pop(0)
    else:
        return None
    if flag == "--tools":
        dest = "tools"
    elif flag in _VALUED and _VALUED[flag] not in values:
        dest = _VALUED[flag]
    else:
        return None
    if not value or value.startswith("-"):
        return None
    return dest, value


def _take(dest: str, value: str, values: dict[str, Any], tools: list[str]) -> bool:
    """Put one flag's value in ``values`` (or ``tools``); False when click must check it."""
    if dest == "tools":
        tools.append(value)
        return True
    if dest in _RUNGS:
        from .options import count  # the one reading of a count flag

        number = count(value)
        if number is None:
            return False
        values[dest] = number
        return True
    if dest == "cache_dir" and not _fine_cache_dir(value):
        return False
    values[dest] = value
    return True


def _fill_defaults(values: dict[str, Any]) -> None:
    """The flags not given, as click would default them."""
    for dest in ("config_file", "max_", "period", "match", "name", "cache_dir", "preset"):
        values.setdefault(dest, None)
    if any(dest not in values for dest in _RUNGS):
        from ..guards.policy import Policy

        defaults = Policy()
        for dest in _RUNGS:
            values.setdefault(dest, getattr(defaults, dest))


def _fine_cache_dir(path: str) -> bool:
    """Whether click's ``Path(file_okay=False)`` takes ``path`` as it is: missing, or a
    readable directory (anything else: click says why)."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return True
    except ValueError:  # a NUL in the path: click's own answer
        return False
    return stat.S_ISDIR(st.st_mode) and os.access(path, os.R_OK)
