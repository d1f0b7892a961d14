"""``maxrepeat hook status``: every installed guard, whether its agent loads it, and what
it last said.

For each agent (`maxrepeat.guards.agents`) and scope, the settings file ``hook install``
writes is read (with install's own reader) and the hook entries that run ``maxrepeat
hook AGENT`` (or the marker of a shim's main file) are collected, one `Installed` per distinct
command. The command's flags are read by the caller (the CLI reads them as the hook itself
would:
``parse`` gives the `Graders`, or the problem in the one message grammar). Then:

* whether the agent loads it: `maxrepeat.guards.agent_trust.will_load`;
* what it said last: the verdicts journal (`maxrepeat.guards.verdicts`) of the guard's
  cache folder, for the agent and the grader settings of the command;
* the sessions it guards: the per-session states in that folder (read only, through
  `maxrepeat.guards.statefile`'s seal and record), newest first.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..core.config import MaxRepeatConfig
from .agent_trust import Load, will_load
from .agents import Agent
from .agents import get as get_agent
from .install import SCOPES, read_settings
from .policy import Policy
from .shimfiles import FilesWriter, command_in, ours
from .statefile import _digest, _Saved, block_hash, default_cache_dir, unseal
from .verdicts import Verdict, recent, signature

__all__ = ["Installed", "Graders", "Session", "GuardStatus", "installed", "status",
           "as_dict", "as_text"]

@dataclass(frozen=True)
class Installed:
    """A guard in an agent's settings: the ``command`` registered for ``events`` in
    ``file`` (``scope``), and the words after ``hook AGENT`` (``args``)."""

    agent: str
    scope: str
    file: Path
    command: str
    events: tuple[str, ...]
    args: tuple[str, ...]


@dataclass(frozen=True)
class Graders:
    """What a guard command judges with: its graders, policy and cache folder."""

    configs: tuple[MaxRepeatConfig, ...]
    policy: Policy
    cache_dir: Path | None = None


@dataclass(frozen=True)
class Session:
    """A guarded session's saved state: its id, log and when it was last saved."""

    session: str
    log: str
    time: float


@dataclass(frozen=True)
class GuardStatus:
    """One installed guard: its settings (or the ``problem`` reading them), whether the
    agent loads it, its newest verdicts and sessions."""

    guard: Installed
    load: Load
    graders: Graders | None = None
    problem: str | None = None
    verdicts: tuple[Verdict, ...] = ()
    sessions: tuple[Session, ...] = field(default=())


def _args(command: str, agent: str) -> tuple[str, ...]:
    words = shlex.split(command)
    for i in range(len(words)):
        if words[i + 1:i + 3] == ["hook", agent]:
            return tuple(words[i + 3:])
    return ()


def installed(agents: Iterable[str], project: Path, home: Path
              ) -> tuple[list[Installed], list[str]]:
    """The guards in the settings of ``agents`` (both scopes), and the settings files
    that could not be read (each a message in the one grammar)."""
    found: list[Installed] = []
    problems: list[str] = []
    for name in agents:
        agent = get_agent(name)
        for scope in SCOPES:
            path = agent.writer.path(scope, project, home)
            try:
                commands = _commands(agent, path)
            except (ValueError, OSError) as exc:
                problems.append(str(exc).removesuffix("; left unchanged"))
                continue
            for command, events in commands.items():
                found.append(Installed(name, scope, path, command, tuple(events),
                                       _args(command, name)))
    return found, problems


def _commands(agent: Agent, path: Path) -> dict[str, list[str]]:
    """The guard commands in ``path`` (read as install reads it), with their events: a
    settings file's hook entries, or the marker of a shim's main file."""
    writer = agent.writer
    if isinstance(writer, FilesWriter):
        data = ours(path)
        command = command_in(data) if data is not None else None
        return {command: list(agent.events)} if command is not None else {}
    read = read_settings(path)  # install's own reader: what install would accept
    return writer.commands(read.settings) if read is not None else {}


def _sessions(cache: Path, agent: str, sig: str, limit: int,
              session: str | None = None) -> tuple[Session, ...]:
    """The newest saved sessions of ``agent`` judged with the settings ``sig`` (only
    ``session``, when given)."""
    want = json.loads(sig)[:2]
    hashes = (block_hash()[1], _digest)
    states = []
    for path in cache.glob("*.state"):
        try:
            states.append((path.stat().st_mtime, path))
        except OSError:
            continue
    out: list[Session] = []
    for mtime, path in sorted(states, reverse=True):
        try:
            raw = path.read_bytes()
            payload = next((p for p in (unseal(raw, h) for h in hashes) if p is not None), None)
            saved = msgspec.msgpack.decode(payload, type=_Saved) if payload else None
        except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue
        if saved is None or saved.agent != agent or session not in (None, saved.session):
            continue
        try:
            if json.loads(saved.signature)[:2] != want:
                continue
        except ValueError:
            continue
        out.append(Session(saved.session, saved.log, mtime))
        if len(out) >= limit:
            break
    return tuple(out)


def status(guards: Iterable[Installed], parse: Callable[[Installed], Graders | str], *,
           project: Path, home: Path, env: Mapping[str, str] | None = None,
           limit: int = 5, session: str | None = None) -> list[GuardStatus]:
    """Each guard's status (see the module docstring); verdicts and sessions of
    ``session`` only, when given."""
    out = []
    for guard in guards:
        load = will_load(guard.agent, guard.scope, guard.file, project=project, home=home,
                         env=env)
        graders = parse(guard)
        if isinstance(graders, str):
            out.append(GuardStatus(guard, load, problem=graders))
            continue
        cache = graders.cache_dir or default_cache_dir()
        sig = signature(graders.configs, graders.policy)
        out.append(GuardStatus(guard, load, graders,
                               verdicts=tuple(recent(cache, guard.agent, sig, limit, session)),
                               sessions=_sessions(cache, guard.agent, sig, limit, session)))
    return out


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def as_dict(item: GuardStatus) -> dict[str, Any]:
    """One guard's status as JSON-ready data."""
    g, graders = item.guard, item.graders
    out: dict[str, Any] = {
        "agent": g.agent, "scope": g.scope, "file": str(g.file), "command": g.command,
        # a command the hook cannot read fails at every call: nothing is guarded
        "events": list(g.events), "loads": item.load.loads and item.problem is None,
        "load_problems": [str(p) for p in item.load.problems], "notes": list(item.load.notes),
        "problem": item.problem, "graders": None, "policy": None, "cache_dir": None,
        "stop": get_agent(g.agent).stop_exit,
        "verdicts": [{"time": v.time, "session": v.session, "event": v.event,
                      "action": v.action, "message": v.message} for v in item.verdicts],
        "sessions": [{"session": s.session, "log": s.log, "time": s.time}
                     for s in item.sessions]}
    if graders is not None:
        p = graders.policy
        out["graders"] = [c.to_dict() for c in graders.configs]
        out["policy"] = {"warn_at": p.warn_at if p.warn else 0,
                         "block_at": p.block_at if p.block else 0,
                         "stop_at": p.stop_at if p.stop else 0}
        out["cache_dir"] = str(graders.cache_dir or default_cache_dir())
    return out


def as_text(item: GuardStatus) -> list[str]:
    """One guard's status as lines for a person."""
    d = as_dict(item)
    lines = [f"{d['agent']} ({d['scope']}): {d['file']}", f"  command: {d['command']}",
             f"  events: {', '.join(d['events'])}"]
    if item.problem is not None:
        lines.append(f"  settings: cannot be read: {item.problem}")
    lines += [_grader_line(config) for config in d["graders"] or ()]
    if d["policy"] is not None:
        lines.append(_policy_line(d["policy"], d["cache_dir"]))
    lines.append(f"  loads: {'yes' if d['loads'] else 'no'}")
    lines += [f"    {line}" for p in d["load_problems"] for line in p.splitlines()]
    lines += [f"    note: {n}" for n in d["notes"]]
    lines.append(f"  on a stop: {d['stop']}")
    if not item.verdicts and item.graders is not None:
        lines.append("  verdicts: none recorded")
    lines += [_verdict_line(v) for v in item.verdicts]
    for s in item.sessions:
        lines.append(f"  session {s.session or '?'} last judged {_when(s.time)}: {s.log}")
    return lines


def _grader_line(config: dict[str, Any]) -> str:
    return "  grader: " + ", ".join(f"{k} {v if isinstance(v, str) else json.dumps(v)}"
                                    for k, v in config.items())


def _policy_line(policy: dict[str, Any], cache_dir: Any) -> str:
    return "  policy: " + ", ".join(f"{k.replace('_at', '')} at +{v}" if v else
                                    f"{k.replace('_at', '')} off"
                                    for k, v in policy.items()) + f"; state in {cache_dir}"


def _verdict_line(v: Verdict) -> str:
    first = v.message.splitlines()[0] if v.message else ""
    return (f"  {_when(v.time)} {v.action.upper()} session {v.session or '?'}"
            f"{' (' + v.event + ')' if v.event else ''}: {first}")
