"""The shapes of hook entries in an agent's JSON settings, shared by the agents' settings
writers (each agent's module in `maxrepeat.guards.agents` has its own): adding entries
for some events, removing exactly the guard's, listing the guard commands a file holds.
`GroupWriter` is the common shape ``{"hooks": {EVENT: [{matcher?, hooks: [handler]}]}}``
(Claude Code, Codex, Gemini CLI); `append_entries` / `without` serve flat lists
(Copilot CLI).

>>> class W(GroupWriter):
...     agent, events = "x", ("Before", "After")
...     def path(self, scope, project, home): return project / "s.json"
...     def group(self, command): return {"hooks": [{"type": "command", "command": command}]}
>>> s = W().add({"theme": "x"}, "maxrepeat hook x --max 3")
>>> sorted(s["hooks"]), s["theme"], W().commands(s)
(['After', 'Before'], 'x', {'maxrepeat hook x --max 3': ['Before', 'After']})
>>> W().remove(s)
{'theme': 'x'}
"""

from __future__ import annotations

import copy
import os
import shlex
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

__all__ = ["GroupWriter", "append_entries", "without", "hooks_of", "is_guard"]


def is_guard(command: Any, agent: str) -> TypeGuard[str]:
    """Whether a hook command runs ``maxrepeat hook AGENT`` (any executable path, or
    ``python -m maxrepeat``).

    >>> is_guard("/venv/bin/maxrepeat hook claude-code --max 3", "claude-code")
    True
    >>> is_guard("my-linter --fix", "claude-code")
    False
    """
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words):
        if os.path.basename(word) == "maxrepeat" and words[i + 1:i + 3] == ["hook", agent]:
            return True
    return False


def _copy(settings: dict[str, Any]) -> dict[str, Any]:
    """A deep copy (numbers keep the text they were read with: guards/settingsjson.py)."""
    out: dict[str, Any] = copy.deepcopy(settings)
    return out


def hooks_of(out: dict[str, Any]) -> dict[str, Any]:
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("hooks must be an object")
    return hooks


def _drop_empty(out: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    hooks = out.get("hooks")
    if isinstance(hooks, dict) and not hooks and original.get("hooks") != {}:
        del out["hooks"]
    return out


def append_entries(out: dict[str, Any], events: tuple[str, ...],
            entry: Callable[[], dict[str, Any]]) -> None:
    """Append a new ``entry()`` to the list of each of ``events`` under ``hooks``."""
    hooks = hooks_of(out)
    for event in events:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ValueError(f"hooks.{event} must be a list")
        entries.append(entry())


def without(settings: dict[str, Any], kept: Callable[[list[Any]], list[Any]]
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


class GroupWriter(ABC):
    """Agents whose hooks are ``{"hooks": {EVENT: [{matcher?, hooks: [handler]}]}}``."""

    agent = ""
    events: tuple[str, ...] = ()
    #: the handler key that holds the command
    command_key = "command"

    @abstractmethod
    def path(self, scope: str, project: Path, home: Path) -> Path:
        """The settings file of ``scope`` (``project`` or ``user``)."""

    @abstractmethod
    def group(self, command: str) -> dict[str, Any]:
        """The matcher group that runs ``command`` (one per event)."""

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        out = self.remove(settings)
        append_entries(out, self.events, lambda: self.group(command))
        return out

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        return without(settings, self._kept_groups)

    def _kept_groups(self, groups: list[Any]) -> list[Any]:
        """The groups without the guard's handlers (a group only they filled goes)."""
        out = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                out.append(group)
                continue
            kept = [h for h in inner if not (
                isinstance(h, dict) and is_guard(h.get("command"), self.agent))]
            if kept or len(kept) == len(inner):
                out.append({**group, "hooks": kept})
        return out

    def commands(self, settings: dict[str, Any]) -> dict[str, list[str]]:
        """The guard commands ``settings`` hold, each with the events it is registered for."""
        found: dict[str, list[str]] = {}
        hooks = settings.get("hooks")
        for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
            for group in groups if isinstance(groups, list) else ():
                inner = group.get("hooks") if isinstance(group, dict) else None
                for handler in inner if isinstance(inner, list) else ():
                    command = handler.get("command") if isinstance(handler, dict) else None
                    if is_guard(command, self.agent) and event not in found.setdefault(
                            command, []):
                        found[command].append(event)
        return found
