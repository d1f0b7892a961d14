"""Settings writers for ``maxrepeat hook install|uninstall AGENT``, one per agent.

Each follows `maxrepeat.guards.install.SettingsWriter` (merge, backup and exact removal
are the shared machinery's); this module only knows where each agent reads its hooks
and the shape of one entry:

=========== ======================================= ==================================
agent       user scope                              project scope
=========== ======================================= ==================================
claude-code ``$CLAUDE_CONFIG_DIR/settings.json``    ``.claude/settings.json``
            (``~/.claude/settings.json``)
codex       ``$CODEX_HOME/hooks.json``              ``.codex/hooks.json``
            (``~/.codex/hooks.json``)
gemini-cli  ``~/.gemini/settings.json``             ``.gemini/settings.json``
copilot-cli ``$COPILOT_HOME/settings.json``         ``.github/hooks/maxrepeat.json``
            (``~/.copilot/settings.json``)
=========== ======================================= ==================================

>>> w = GeminiCliWriter()
>>> s = w.add({"theme": "x"}, "maxrepeat hook gemini-cli --max 3")
>>> sorted(s["hooks"]), s["theme"]
(['AfterTool', 'BeforeTool'], 'x')
>>> w.remove(s)
{'theme': 'x'}
"""

from __future__ import annotations

import copy
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .install import SettingsWriter

__all__ = ["ClaudeCodeWriter", "CodexWriter", "GeminiCliWriter", "CopilotCliWriter",
           "AGENT_WRITERS"]


def _is_guard(command: Any, agent: str) -> bool:
    from .install import is_guard_command

    return is_guard_command(command, agent)


def _copy(settings: dict[str, Any]) -> dict[str, Any]:
    """A deep copy (numbers keep the text they were read with: guards/settingsjson.py)."""
    out: dict[str, Any] = copy.deepcopy(settings)
    return out


def _hooks(out: dict[str, Any]) -> dict[str, Any]:
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("hooks must be an object")
    return hooks


def _drop_empty(out: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    hooks = out.get("hooks")
    if isinstance(hooks, dict) and not hooks and original.get("hooks") != {}:
        del out["hooks"]
    return out


def _append(out: dict[str, Any], events: tuple[str, ...],
            entry: Callable[[], dict[str, Any]]) -> None:
    """Append a new ``entry()`` to the list of each of ``events`` under ``hooks``."""
    hooks = _hooks(out)
    for event in events:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ValueError(f"hooks.{event} must be a list")
        entries.append(entry())


def _without(settings: dict[str, Any], kept: Callable[[list[Any]], list[Any]]
             ) -> dict[str, Any]:
    """A copy of ``settings`` whose ``hooks`` lists hold what ``kept`` keeps of them: an
    event list that it empties is dropped (one that was empty stays), and so is a
    ``hooks`` left empty (unless it was empty before)."""
    out = _copy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        left = kept(entries)
        if left or not entries:
            hooks[event] = left
        else:
            del hooks[event]
    return _drop_empty(out, settings)


class _GroupWriter(ABC):
    """Agents whose hooks are ``{"hooks": {EVENT: [{matcher?, hooks: [handler]}]}}``."""

    agent = ""
    events: tuple[str, ...] = ()

    @abstractmethod
    def path(self, scope: str, project: Path, home: Path) -> Path:
        """The settings file of ``scope`` (``project`` or ``user``)."""

    @abstractmethod
    def group(self, command: str) -> dict[str, Any]:
        """The matcher group that runs ``command`` (one per event)."""

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        out = self.remove(settings)
        _append(out, self.events, lambda: self.group(command))
        return out

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        return _without(settings, self._kept_groups)

    def _kept_groups(self, groups: list[Any]) -> list[Any]:
        """The groups without the guard's handlers (a group only they filled goes)."""
        out = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                out.append(group)
                continue
            kept = [h for h in inner if not (
                isinstance(h, dict) and _is_guard(h.get("command"), self.agent))]
            if kept or len(kept) == len(inner):
                out.append({**group, "hooks": kept})
        return out


class ClaudeCodeWriter(_GroupWriter):
    """``.claude/settings.json`` (project) or ``~/.claude/settings.json`` (user): one
    matcher group ``"*"`` running the guard for each of ``PreToolUse``, ``PostToolUse``
    and ``PostToolUseFailure``."""

    agent = "claude-code"
    events: tuple[str, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure")

    def path(self, scope: str, project: Path, home: Path) -> Path:
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        if scope == "user":
            return (Path(config) if config else home / ".claude") / "settings.json"
        return project / ".claude" / "settings.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"matcher": "*", "hooks": [{"type": "command", "command": command}]}


class CodexWriter(_GroupWriter):
    """Codex CLI: ``hooks.json`` beside the user or project config (Codex also reads
    ``[hooks]`` tables in ``config.toml``; the JSON file keeps the user's TOML untouched).
    Codex runs hooks it has not reviewed only after the user trusts them (``/hooks`` in
    the TUI), or with ``--dangerously-bypass-hook-trust``."""

    agent = "codex"
    events: tuple[str, ...] = ("PreToolUse", "PostToolUse")

    def path(self, scope: str, project: Path, home: Path) -> Path:
        if scope == "user":
            base = os.environ.get("CODEX_HOME")
            return (Path(base) if base else home / ".codex") / "hooks.json"
        return project / ".codex" / "hooks.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}


class GeminiCliWriter(_GroupWriter):
    """Gemini CLI: the ``hooks`` of ``settings.json`` (user or project), matcher ``*``."""

    agent = "gemini-cli"
    events: tuple[str, ...] = ("BeforeTool", "AfterTool")

    def path(self, scope: str, project: Path, home: Path) -> Path:
        if scope == "user":
            return home / ".gemini" / "settings.json"
        return project / ".gemini" / "settings.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"matcher": "*", "hooks": [{"type": "command", "command": command,
                                           "name": "maxrepeat-loop-guard", "timeout": 30000}]}


class CopilotCliWriter:
    """Copilot CLI: the ``hooks`` of ``settings.json`` (user), or a hooks file of its own
    in ``.github/hooks/`` (project); one ``{"type": "command", "bash": ...}`` handler per
    event (``preToolUse``, ``postToolUse``, ``postToolUseFailure``, ``permissionRequest``)."""

    agent = "copilot-cli"
    events: Final = ("preToolUse", "postToolUse", "postToolUseFailure", "permissionRequest")

    def __init__(self) -> None:
        # the shared machinery asks for the path before it edits the file: a hooks file
        # of our own (project scope) carries Copilot's "version": 1, settings.json not
        self._own_file = False

    def path(self, scope: str, project: Path, home: Path) -> Path:
        self._own_file = scope != "user"
        if scope == "user":
            base = os.environ.get("COPILOT_HOME")
            return (Path(base) if base else home / ".copilot") / "settings.json"
        return project / ".github" / "hooks" / "maxrepeat.json"

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        out = self.remove(settings)
        _hooks(out)
        if self._own_file and "version" not in out:
            out = {"version": 1, **out}
        _append(out, self.events,
                lambda: {"type": "command", "bash": command, "timeoutSec": 30})
        return out

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        out = _without(settings, lambda handlers: [h for h in handlers if not (
            isinstance(h, dict) and _is_guard(h.get("bash"), self.agent))])
        if set(out) == {"version"} and "hooks" in settings:
            return {}  # only our own hooks file's header is left
        return out


#: The writers to register in `maxrepeat.guards.install.WRITERS`.
AGENT_WRITERS: Final[dict[str, SettingsWriter]] = {
    "claude-code": ClaudeCodeWriter(), "codex": CodexWriter(), "gemini-cli": GeminiCliWriter(),
    "copilot-cli": CopilotCliWriter()}
