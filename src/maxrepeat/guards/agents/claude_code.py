"""Claude Code (``@anthropic-ai/claude-code``): its hooks, its settings, its gates.

Claude Code runs ``maxrepeat hook claude-code`` around each tool call (``PreToolUse``,
``PostToolUse``, ``PostToolUseFailure``) with the session transcript's path in the hook
input; the guard itself is `maxrepeat.guards.claude_code` (it grades the transcript so
far). This module declares the agent: the settings ``hook install`` writes
(``.claude/settings.json``, or ``$CLAUDE_CONFIG_DIR/settings.json`` / ``~/.claude/``
for ``--user``) and whether Claude Code will run them (`will_load`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...core.config import MaxRepeatConfig
from ..agent_trust import Load, dig, problem, read_settings
from ..agent_writers import GroupWriter
from ..hookcall import HookOutput
from ..policy import Decision, Policy
from . import Agent

__all__ = ["AGENT", "ClaudeCodeWriter", "guard", "will_load"]

#: The hook events the guard answers (the settings written by ``hook install``).
EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def guard(payload: Mapping[str, Any], configs: Sequence[MaxRepeatConfig], *,
          policy: Policy | None = None, cache_dir: Path | None = None
          ) -> tuple[HookOutput, Decision]:
    """Judge one Claude Code hook call: what to print (always exit 0), and the decision."""
    from ..claude_code import guard as judge_transcript

    verdict = judge_transcript(payload, configs, policy=policy, cache_dir=cache_dir)
    return HookOutput(verdict.output), verdict.decision


def event_of(payload: Mapping[str, Any]) -> str:
    """The hook input's event (``hook_event_name``)."""
    event = payload.get("hook_event_name")
    return event if isinstance(event, str) else ""


class ClaudeCodeWriter(GroupWriter):
    """``.claude/settings.json`` (project) or ``~/.claude/settings.json`` (user): one
    matcher group ``"*"`` running the guard for each of ``PreToolUse``, ``PostToolUse``
    and ``PostToolUseFailure``."""

    agent = "claude-code"
    events: tuple[str, ...] = EVENTS

    def path(self, scope: str, project: Path, home: Path) -> Path:
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        if scope == "user":
            return (Path(config) if config else home / ".claude") / "settings.json"
        return project / ".claude" / "settings.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"matcher": "*", "hooks": [{"type": "command", "command": command}]}



def will_load(scope: str, file: Path, project: Path, home: Path,
                 env: Mapping[str, str]) -> Load:
    config = env.get("CLAUDE_CONFIG_DIR")
    system = Path("/etc/claude-code")
    managed = [system / "managed-settings.json",
               *sorted((system / "managed-settings.d").glob("*.json"))]
    files = [*managed, (Path(config) if config else home / ".claude") / "settings.json",
             project / ".claude" / "settings.json", project / ".claude" / "settings.local.json"]
    problems = []
    for path in files:
        text, value = read_settings(path)
        if dig(value, "disableAllHooks") is True:
            problems.append(problem(path, text, '"disableAllHooks"', "disableAllHooks",
                                     "false or absent for Claude Code to run hooks", "true",
                                     "remove it, or set it to false"))
        if path in managed and dig(value, "allowManagedHooksOnly") is True:
            problems.append(problem(path, text, '"allowManagedHooksOnly"',
                                     "allowManagedHooksOnly", "false or absent for Claude "
                                     "Code to run hooks outside the managed settings", "true",
                                     "managed settings: ask the administrator"))
    notes = ("an interactive session asks you to trust the folder first; claude -p does "
             "not ask",) if scope == "project" else ()
    return Load(not problems, tuple(problems), notes)


AGENT = Agent(
    name="claude-code", title="Claude Code", reader="claude-code", events=EVENTS,
    guard=guard, event_of=event_of, writer=ClaudeCodeWriter(), will_load=will_load,
    stop_exit='the turn ends; claude -p exits 0 and prints an empty result (with '
              '--output-format json: "terminal_reason": "hook_stopped")',
    warm=("maxrepeat.guards.claude_code", "maxrepeat.readers.claude_code"))
