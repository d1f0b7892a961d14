"""``maxrepeat hook install|uninstall AGENT``: write the guard into an agent's settings.

One `SettingsWriter` per agent knows where its settings live (project or user scope),
how to add the hook command to them and how to recognise the entries it added. The
machinery around it is shared:

* **merge, never clobber**: the settings file is read as JSON, the guard's entries are
  added next to whatever is there (an earlier guard entry is replaced, so installing
  twice changes nothing), and a file that is not a JSON object is left alone (error);
* **backup**: before install first changes a file, its previous bytes go to
  ``<file>.maxrepeat.bak`` (a later install, which only replaces the guard's entries,
  keeps that backup: it still holds the file as it was before any guard);
* **uninstall restores the state before install**: it removes the entries whose command
  runs ``maxrepeat hook AGENT`` and the containers that only they filled, nothing else.
  When what is left is what the backup holds, the backup's bytes are put back (the
  file's own formatting included); a file install created, with nothing left in it, is
  deleted, and so are its folders below the project (or home) folder that are left
  empty. Content added since install is kept. Either way the backup, which install
  wrote, goes too;
* **a user's file is sacred**: it is read only when it is a regular file (opened without
  blocking: a FIFO is refused, never waited on), as strict JSON (guards/settingsjson.py:
  no ``NaN``/``Infinity``, every number written back as its original text, the file's
  own line endings kept); it is written atomically (temporary file and rename) through
  a symlink to the file it points to, its mode and owner kept; every failure names the
  user's file, never the temporary one.

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

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from ..readers._regular import NotRegularFile, open_regular
from . import settingsjson
from .agent_writers import AGENT_WRITERS, ClaudeCodeWriter
from .statefile import write_atomic

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
    """What install/uninstall did: the settings ``path``, the ``backup`` install wrote
    (None when the file did not exist, already held the guard or nothing changed; always
    None for uninstall) and whether it ``changed``."""

    path: Path
    backup: Path | None
    changed: bool


@dataclass(frozen=True)
class _File:
    """A settings file as read: its bytes, its settings and its line ending."""

    raw: bytes
    settings: dict[str, Any]
    newline: str


def _read(path: Path) -> _File | None:
    """The settings file at ``path`` (None when there is none): a regular file (opened
    without blocking), UTF-8, strict JSON, an object; `ValueError` naming it otherwise."""
    try:
        with open_regular(path) as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise ValueError(f"{path}: settings must be a regular file (got {exc.kind}); "
                         "left unchanged") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the settings: {exc.strerror or exc}; "
                         "left unchanged") from None
    newline = "\r\n" if b"\r\n" in raw else "\n"
    value = _parsed(path, raw)
    if not isinstance(value, dict):
        raise ValueError(f"{path}:1:1: settings must be a JSON object "
                         f"(got {type(value).__name__}); left unchanged")
    return _File(raw, value, newline)


def _parsed(path: object, raw: bytes) -> Any:
    """The settings ``raw`` holds (an empty file is ``{}``); `ValueError` naming ``path``
    when they are not strict JSON."""
    text = settingsjson.decode(path, raw)
    return settingsjson.loads(path, text) if text.strip() else {}


def _backup_of(path: Path) -> Path:
    return path.with_name(path.name + ".maxrepeat.bak")


def _json_bytes(settings: dict[str, Any], newline: str = "\n") -> bytes:
    return settingsjson.dumps(settings, newline).encode("utf-8")


def _same(a: Any, b: Any) -> bool:
    return settingsjson.same(a, b)


def _write(path: Path, data: bytes) -> None:
    """`write_atomic` of the user's file, a failure said about it (never about the
    temporary file beside it)."""
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write the settings: {exc.strerror or exc}; "
                         "left unchanged") from None


def _writer_and_path(agent: str, scope: str, project: Path | None,
                     home: Path | None) -> tuple[SettingsWriter, Path, Path]:
    writer = WRITERS.get(agent)
    if writer is None:
        raise ValueError(f"agent must be one of {', '.join(sorted(WRITERS))} (got {agent!r})")
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)} (got {scope!r})")
    root = (project or Path.cwd()) if scope == "project" else (home or Path.home())
    return writer, writer.path(scope, project or Path.cwd(), home or Path.home()), root


def install(agent: str, command: str, scope: str = "project", *, project: Path | None = None,
            home: Path | None = None) -> InstallResult:
    """Add the guard running ``command`` to ``agent``'s settings for ``scope``."""
    writer, path, _ = _writer_and_path(agent, scope, project, home)
    file = _read(path)
    current = file.settings if file is not None else None
    new = writer.add(current if current is not None else {}, command)
    if current is not None and _same(new, current):
        return InstallResult(path, None, False)
    backup = None
    if file is not None and _same(writer.remove(file.settings), file.settings):
        # The file holds no guard yet: this is the state uninstall restores. (A file
        # that holds one keeps the backup of the state before it.)
        backup = _backup_of(path)
        _write(backup, file.raw)
    _write(path, _json_bytes(new, file.newline if file is not None else "\n"))
    return InstallResult(path, backup, True)


def uninstall(agent: str, scope: str = "project", *, project: Path | None = None,
              home: Path | None = None) -> InstallResult:
    """Remove the guard's entries from ``agent``'s settings for ``scope``: the file as it
    was before install when nothing else changed since (byte for byte, from the backup;
    gone when install created it), else the file with only the guard's entries taken
    out. The backup install wrote is removed. ``backup`` in the result is always None."""
    writer, path, root = _writer_and_path(agent, scope, project, home)
    file = _read(path)
    if file is None:
        return InstallResult(path, None, False)
    current = file.settings
    new = writer.remove(current)
    if _same(new, current):
        return InstallResult(path, None, False)
    backup = _backup_of(path)
    saved = _saved(backup)
    if saved is not None and _unchanged_since_install(writer, agent, _backup_settings(saved),
                                                      new):
        _write(path, saved)  # exactly the file before install
    elif saved is None and not new:
        path.unlink()  # install created it, and nothing else is in it
        _remove_empty_dirs(path.parent, root)
    else:
        _write(path, _json_bytes(new, file.newline))
    if saved is not None:
        backup.unlink()
    return InstallResult(path, None, True)


def _unchanged_since_install(writer: SettingsWriter, agent: str, before: Any,
                             left: dict[str, Any]) -> bool:
    """Whether ``left`` (the settings without the guard) is what install then uninstall
    make of ``before`` (the backup): nothing but the guard changed since. Removing the
    guard's entries drops what install added around them too (an emptied ``hooks``, a
    ``version`` header), and it does not depend on the command installed."""
    if not isinstance(before, dict):
        return False
    try:
        round_trip = writer.remove(writer.add(before, f"maxrepeat hook {agent}"))
    except ValueError:
        return False
    return _same(round_trip, left)


def _saved(backup: Path) -> bytes | None:
    try:
        with open_regular(backup) as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{backup}: cannot read the backup: {exc.strerror or exc}; "
                         "left unchanged") from None


def _backup_settings(data: bytes) -> Any:
    """The settings a backup holds; None when they are not JSON (then it is not restored
    over the user's file)."""
    try:
        return _parsed("backup", data)
    except ValueError:
        return None


def _remove_empty_dirs(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to (not including) ``root`` while they are
    empty: the directories install made for a settings file it created."""
    try:
        folder.relative_to(root)
    except ValueError:
        return  # outside the scope's root (a CLAUDE_CONFIG_DIR elsewhere): left as it is
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (or not ours to remove)
        folder = folder.parent
