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

Each agent's writer is its descriptor's (`maxrepeat.guards.agents`): a `SettingsWriter`
for JSON settings, handled here, or a `FilesWriter` for the files of a shim
(`maxrepeat.guards.shimfiles`, with an optional JSON switch handled here too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from ..readers._regular import NotRegularFile, open_regular
from . import settingsjson
from .agent_writers import is_guard
from .shimfiles import FilesWriter, remove_empty_dirs, remove_files, write_files
from .statefile import write_atomic

__all__ = ["SettingsWriter", "writer_of", "InstallResult", "install", "uninstall",
           "is_guard_command", "SCOPES", "read_settings"]

#: whether a hook command runs ``maxrepeat hook AGENT`` (`maxrepeat.guards.agent_writers`)
is_guard_command = is_guard

SCOPES: Final = ("project", "user")




class SettingsWriter(Protocol):
    """How one agent's settings hold the guard."""

    agent: str
    #: the key of a hook handler that holds its command
    command_key: str

    def path(self, scope: str, project: Path, home: Path) -> Path:
        """The settings file for ``scope`` (``project`` or ``user``)."""

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        """``settings`` with the guard's entries for ``command`` (others kept)."""

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` without the guard's entries (and containers only they filled)."""

    def commands(self, settings: dict[str, Any]) -> dict[str, list[str]]:
        """The guard commands ``settings`` hold, each with its events (``hook status``)."""


def writer_of(agent: str) -> SettingsWriter | FilesWriter:
    """The writer of ``agent``'s descriptor; `ValueError` naming the agents otherwise."""
    from . import agents

    try:
        return agents.get(agent).writer
    except KeyError:
        raise ValueError(f"agent must be one of {', '.join(agents.names())} "
                         f"(got {agent!r})") from None


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


def read_settings(path: Path) -> _File | None:
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


def _roots(scope: str, project: Path | None, home: Path | None) -> tuple[Path, Path, Path]:
    """The project and home folders, and the root of ``scope`` (what install may create
    folders below)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)} (got {scope!r})")
    project, home = project or Path.cwd(), home or Path.home()
    return project, home, project if scope == "project" else home


def install(agent: str, command: str, scope: str = "project", *, project: Path | None = None,
            home: Path | None = None) -> InstallResult:
    """Add the guard running ``command`` to ``agent``'s settings (or files) for ``scope``."""
    writer = writer_of(agent)
    project, home, _ = _roots(scope, project, home)
    if not isinstance(writer, FilesWriter):
        return _install_settings(writer, writer.path(scope, project, home), command)
    switch = writer.settings
    if switch is not None:
        read_settings(switch.path(scope, project, home))  # a settings file it cannot edit: nothing
    changed = write_files(writer.files(scope, project, home, command))
    if switch is not None:
        changed = _install_settings(switch, switch.path(scope, project, home),
                                    command).changed or changed
    return InstallResult(writer.path(scope, project, home), None, changed)


def uninstall(agent: str, scope: str = "project", *, project: Path | None = None,
              home: Path | None = None) -> InstallResult:
    """Remove the guard from ``agent``'s settings (or files) for ``scope``: the settings
    as they were before install when nothing else changed since (byte for byte, from the
    backup; gone when install created the file), else with only the guard's entries taken
    out; the guard's own files removed. ``backup`` in the result is always None."""
    writer = writer_of(agent)
    project, home, root = _roots(scope, project, home)
    if not isinstance(writer, FilesWriter):
        return _uninstall_settings(writer, writer.path(scope, project, home), root)
    paths = [f.path for f in writer.files(scope, project, home, f"maxrepeat hook {agent}")]
    changed = remove_files(paths, root)
    if writer.settings is not None:
        switch = writer.settings
        where = switch.path(scope, project, home)
        # a switch in the user's settings (OpenClaw's config, for either scope): the
        # folders install made for it are the home's
        top = root if where.is_relative_to(root) or not where.is_relative_to(home) else home
        changed = _uninstall_settings(switch, where, top).changed or changed
    return InstallResult(writer.path(scope, project, home), None, changed)


def _install_settings(writer: SettingsWriter, path: Path, command: str) -> InstallResult:
    """Merge the guard's entries for ``command`` into the settings file ``path``."""
    file = read_settings(path)
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


def _uninstall_settings(writer: SettingsWriter, path: Path, root: Path) -> InstallResult:
    """Take the guard's entries out of the settings file ``path`` (see `uninstall`)."""
    file = read_settings(path)
    if file is None:
        return InstallResult(path, None, False)
    current = file.settings
    new = writer.remove(current)
    if _same(new, current):
        return InstallResult(path, None, False)
    backup = _backup_of(path)
    saved = _saved(backup)
    if saved is not None and _unchanged_since_install(writer, writer.agent,
                                                      _backup_settings(saved), new):
        _write(path, saved)  # exactly the file before install
    elif saved is None and not new:
        path.unlink()  # install created it, and nothing else is in it
        remove_empty_dirs(path.parent, root)
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
