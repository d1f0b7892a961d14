"""``maxrepeat hook install|uninstall AGENT``: write the guard into an agent's settings.

One `SettingsWriter` per agent knows where its settings live (project or user scope),
how to add the hook command to them and how to recognise the entries it added. The
machinery around it is shared:

* **merge, never clobber**: the settings file is read as JSON, the guard's entries are
  added next to whatever is there (an earlier guard entry is replaced, so installing
  twice changes nothing), and a file that is not a JSON object is left alone (error);
* **backup**: before a file is changed, its previous bytes go to ``<file>.maxrepeat.bak``;
* **uninstall removes exactly what install added**: the entries whose command runs
  ``maxrepeat hook AGENT``, and the containers that only they filled; nothing else;
* atomic writes (temporary file and rename).

To add an agent, write a `SettingsWriter` (guards/agent_writers.py has one per agent) and
register it in `WRITERS`; ``maxrepeat hook install NAME`` then works for it.

>>> w = ClaudeCodeWriter()
>>> s = w.add({"model": "x"}, "maxrepeat hook claude-code --max 3")
>>> sorted(s["hooks"]), s["model"]
(['PostToolUse', 'PostToolUseFailure', 'PreToolUse'], 'x')
>>> w.remove(s)
{'model': 'x'}
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from .agent_writers import AGENT_WRITERS, ClaudeCodeWriter

__all__ = ["SettingsWriter", "ClaudeCodeWriter", "WRITERS", "InstallResult", "install",
           "uninstall", "is_guard_command", "SCOPES"]

SCOPES: Final = ("project", "user")


def is_guard_command(command: Any, agent: str) -> bool:
    """Whether a hook command runs ``maxrepeat hook AGENT`` (any executable path, or
    ``python -m maxrepeat``).

    >>> is_guard_command("/venv/bin/maxrepeat hook claude-code --max 3", "claude-code")
    True
    >>> is_guard_command("my-linter --fix", "claude-code")
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


class SettingsWriter(Protocol):
    """How one agent's settings hold the guard."""

    agent: str

    def path(self, scope: str, project: Path, home: Path) -> Path:
        """The settings file for ``scope`` (``project`` or ``user``)."""

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        """``settings`` with the guard's entries for ``command`` (others kept)."""

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` without the guard's entries (and containers only they filled)."""




#: agent name -> its writer (guards/agent_writers.py holds one per agent)
WRITERS: dict[str, SettingsWriter] = dict(AGENT_WRITERS)


@dataclass(frozen=True)
class InstallResult:
    """What install/uninstall did: the settings ``path``, the ``backup`` written (None
    when the file did not exist or nothing changed) and whether it ``changed``."""

    path: Path
    backup: Path | None
    changed: bool


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: settings must be JSON "
                         f"(got {exc.msg}); left unchanged") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}:1:1: settings must be a JSON object "
                         f"(got {type(value).__name__}); left unchanged")
    return value


def _write(path: Path, settings: dict[str, Any], old: bytes | None) -> Path | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if old is not None:
        backup = path.with_name(path.name + ".maxrepeat.bak")
        backup.write_bytes(old)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return backup


def _change(agent: str, scope: str, project: Path | None, home: Path | None,
            edit: Any) -> InstallResult:
    writer = WRITERS.get(agent)
    if writer is None:
        raise ValueError(f"agent must be one of {', '.join(sorted(WRITERS))} (got {agent!r})")
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)} (got {scope!r})")
    path = writer.path(scope, project or Path.cwd(), home or Path.home())
    current = _read(path)
    new = edit(writer, current if current is not None else {})
    if current is not None and new == current:
        return InstallResult(path, None, False)
    if current is None and not new:
        return InstallResult(path, None, False)
    old = path.read_bytes() if current is not None else None
    return InstallResult(path, _write(path, new, old), True)


def install(agent: str, command: str, scope: str = "project", *, project: Path | None = None,
            home: Path | None = None) -> InstallResult:
    """Add the guard running ``command`` to ``agent``'s settings for ``scope``."""
    return _change(agent, scope, project, home, lambda w, s: w.add(s, command))


def uninstall(agent: str, scope: str = "project", *, project: Path | None = None,
              home: Path | None = None) -> InstallResult:
    """Remove the guard's entries from ``agent``'s settings for ``scope``."""
    return _change(agent, scope, project, home, lambda w, s: w.remove(s))
