"""``hook install`` for agents that run a guard from files of their own: a plug-in or
extension the agent loads (a TypeScript or JavaScript shim that hands each event to
``maxrepeat hook AGENT``), or hook executables named after the events.

A `FilesWriter` says which files make the guard for a scope and what they hold; every
file carries a marker line with the guard command (`marker_line`), which is how
install, uninstall and ``hook status`` tell the guard's files from the user's:

* **install** writes each file atomically (mode as the writer says), creating its
  folders; a file there already that is not the guard's (no marker) is never replaced:
  install stops with an error naming it, before writing anything. A writer may also
  name a JSON `SettingsWriter` (``settings``) for a switch the agent needs besides the
  files (a plug-in list, a hooks toggle): that file goes through the settings machinery
  of `maxrepeat.guards.install` (merge, backup, exact removal).
* **uninstall** removes the guard's files (those with the marker) and the folders install
  made for them that are left empty, below the project (or home) folder.
* **status** reads the command back from the main file's marker (`command_in`).

Only regular files are read (opened without blocking); every failure names the file.

>>> line = marker_line("maxrepeat hook pi --preset live", "//")
>>> line
'// maxrepeat-guard-command: "maxrepeat hook pi --preset live"'
>>> command_in(("x\\n" + line + "\\n").encode())
'maxrepeat hook pi --preset live'
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from ..readers._regular import NotRegularFile, open_regular
from .statefile import write_atomic

if TYPE_CHECKING:
    from .install import SettingsWriter

__all__ = ["ShimFile", "FilesWriter", "MARKER", "marker_line", "command_in", "ours",
           "write_files", "remove_files", "remove_empty_dirs"]

#: the words every file of a guard holds, followed by its command as a JSON string
MARKER: Final = "maxrepeat-guard-command:"
_FOUND = re.compile(rb"maxrepeat-guard-command: (\"(?:[^\"\\\n]|\\.)*\")")


@dataclass(frozen=True)
class ShimFile:
    """One file of a guard: where, what, and its permission bits."""

    path: Path
    data: bytes
    mode: int = 0o644


@runtime_checkable
class FilesWriter(Protocol):
    """How one agent holds the guard in files of its own."""

    agent: str
    #: a JSON settings switch the agent needs besides the files (None: none)
    settings: SettingsWriter | None

    def path(self, scope: str, project: Path, home: Path) -> Path:
        """The guard's main file for ``scope`` (install reports it, status reads it)."""

    def files(self, scope: str, project: Path, home: Path, command: str) -> list[ShimFile]:
        """The files that make the guard running ``command`` (each with `marker_line`)."""


def marker_line(command: str, comment: str) -> str:
    """The marker line of a guard file, behind the file's ``comment`` token."""
    return f"{comment} {MARKER} {json.dumps(command, ensure_ascii=False)}"


def command_in(data: bytes) -> str | None:
    """The guard command a file's marker names (None: no marker, not a guard file)."""
    found = _FOUND.search(data)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, str) else None


def _read(path: Path) -> bytes | None:
    """A file's bytes (None: no file); `ValueError` naming it when it is not a regular
    file or cannot be read."""
    try:
        with open_regular(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise ValueError(f"{path}: must be a regular file (got {exc.kind}); "
                         "left unchanged") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it: {exc.strerror or exc}; "
                         "left unchanged") from None


def ours(path: Path) -> bytes | None:
    """The bytes of the guard file at ``path``; None when there is no file there.
    `ValueError` when the file there is not the guard's."""
    data = _read(path)
    if data is not None and command_in(data) is None:
        raise ValueError(f"{path}: exists and was not written by maxrepeat (no "
                         f"`{MARKER}` line); left unchanged")
    return data


def write_files(files: list[ShimFile]) -> bool:
    """Write the guard's ``files`` (every one checked first); whether any changed."""
    before = [ours(f.path) for f in files]
    changed = False
    for file, data in zip(files, before, strict=True):
        mode = os.stat(file.path).st_mode & 0o7777 if data is not None else None
        if data == file.data and mode == file.mode:
            continue
        try:
            file.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(file.path, file.data)
            os.chmod(file.path, file.mode)
        except OSError as exc:
            raise ValueError(f"{file.path}: cannot write it: {exc.strerror or exc}") from None
        changed = True
    return changed


def remove_files(paths: list[Path], root: Path) -> bool:
    """Remove the guard's files among ``paths`` (a file without the marker stays) and the
    folders left empty up to ``root``; whether any was removed."""
    removed = False
    for path in paths:
        try:
            data = _read(path)
        except ValueError:
            continue  # not a regular file: not one install wrote
        if data is None or command_in(data) is None:
            continue
        try:
            path.unlink()
        except OSError as exc:
            raise ValueError(f"{path}: cannot remove it: {exc.strerror or exc}") from None
        removed = True
        remove_empty_dirs(path.parent, root)
    return removed


def remove_empty_dirs(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to (not including) ``root`` while they are
    empty: the folders install made for a file it created (a folder outside ``root``,
    such as a ``CLAUDE_CONFIG_DIR`` elsewhere, is left as it is)."""
    try:
        folder.relative_to(root)
    except ValueError:
        return
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
