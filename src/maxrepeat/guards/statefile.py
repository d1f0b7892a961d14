"""A guard session's saved state on disk: its layout, its seal and its side files.

What one hook call leaves for the next (`Snapshot`) is saved, with what it must be
checked against, as one MessagePack record (`_Saved`) behind a marker and a checksum
(`seal`): a file whose checksum does not match is never decoded. The file is written
whole and atomically (a temporary file renamed over it), so it must stay small: what
grows with the session does not go in it.

**Side files.** The 16-byte digests of the record and call ids a guard has seen (`Marks`,
``readers/_marks.py``: ~48 bytes a call in a Claude Code session) grow with every call.
Inside the state they made every call write the whole session's digests again (480 kB
a call at 10,000 calls). So each large set is kept in a side file of its own next to the
state (``<key>.<part>.<n>.marks``) that a call only appends to; the state holds, for each
side file, its epoch (a random name given when the file is started afresh), the length
that belongs to the state and the digest of those bytes (`_Side`). Before any of them is
used, the file is read and its first ``size`` bytes hashed: a file cut short, changed,
or from another session or epoch makes the whole state ignored (the log is then read
from its start), exactly as a state file whose checksum fails; bytes after ``size`` (a
call that appended and did not get to save its state) are not part of it and are cut
before the next append. `Spill` (in ``readers/_marks.py``) decides what goes where;
this module reads, checks and writes the files.

>>> seal(b"x")[:16], unseal(seal(b"x"))
(b'maxrepeat-state\\x00', b'x')
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from stat import S_IMODE, S_ISLNK
from typing import Any, Final

import msgspec

from ..core.config import MaxRepeatConfig
from ..readers._marks import Spill
from ..readers._regular import read_regular
from .policy import EscalationState, Policy

try:
    # The C module behind hashlib's blake2b: importing hashlib also loads OpenSSL's
    # _hashlib, and an agent pays this module's start-up at every tool call.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["CACHE_FORMAT", "Snapshot", "default_cache_dir", "signature_of", "block_hash",
           "RETIRED_BLOCK_HASHES", "seal", "unseal", "write_atomic", "load_sides",
           "save_sides"]

#: Changes whenever the saved layout changes, or what is saved in it (9: results saved
#: before the readers dropped the agents' chrome are not compared with results after;
#: 10: id marks are 16 bytes, not 8); part of every saved state.
CACHE_FORMAT: Final = 10


class Snapshot(msgspec.Struct):
    """What one hook call leaves for the next: ``offset`` bytes (``lines`` lines) of the
    log were read; ``reader`` is the agent reader's state, ``monitors`` each
    `Monitor.to_bytes()`, ``escalation`` the policy's memory, ``extra`` anything else the
    agent's guard keeps (opaque here)."""

    offset: int
    lines: int
    reader: bytes
    monitors: list[bytes]
    escalation: EscalationState = msgspec.field(default_factory=EscalationState)
    extra: bytes = b""


class _Side(msgspec.Struct, array_like=True):
    """A side file as the state knows it: its name, epoch, length and digest."""

    name: str
    epoch: str
    size: int
    digest: bytes


class _Saved(msgspec.Struct):
    version: str
    agent: str
    session: str
    log: str
    signature: str
    check: bytes
    blocks: bytes  # the digests of the complete blocks before the offset, 16 bytes each
    tail: bytes  # the digest of the partial block that ends at the offset
    audit: int  # the next block to check again (the cursor that goes round the log)
    snapshot: Snapshot
    sides: list[_Side] = msgspec.field(default_factory=list)
    #: the log's identity, size and times when the call that saved this state opened it
    #: (device, inode, size, mtime and ctime in ns), and whether they were too recent to
    #: vouch for it (a change within the file system's time granularity keeps the times)
    stat: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    racy: bool = True


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/maxrepeat/hook`` (``~/.cache/maxrepeat/hook`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "maxrepeat" / "hook"


def signature_of(configs: Sequence[MaxRepeatConfig], names: Sequence[str],
                 policy: Policy | None = None, *extra: Any) -> str:
    """The configuration a saved state belongs to (graders, their names, the policy and
    whatever else changes the meaning of the state)."""
    pol = None if policy is None else [policy.warn_at, policy.block_at, policy.stop_at,
                                       policy.warn, policy.block, policy.stop]
    graders = [[c.to_dict(), n] for c, n in zip(configs, names, strict=True)]
    return json.dumps([graders, pol, list(extra)], sort_keys=True, default=str)


def _digest(data: bytes | memoryview) -> bytes:
    return blake2b(data, digest_size=16).digest()


def block_hash() -> tuple[str, Callable[[bytes | memoryview], bytes]]:
    """The name and function of the 16-byte hash the log's blocks are checked with:
    BLAKE2b, on the native path too. The native extension's ``hash128`` (~13 GB/s,
    against ~0.9 GB/s) is not used: it is not cryptographic, and two different blocks
    with equal ``hash128`` were built in under a second (issue 30, row 8), so a log
    rewritten by someone who controls part of it could pass the check. The name is part
    of a saved state's version: a state hashed another way is ignored (read again).

    >>> name, fn = block_hash(); name == "blake2b" and len(fn(b"x")) == 16
    True
    """
    return "blake2b", _digest


#: names `block_hash` gave to earlier hashes (other digests): never to be used again
#: ("hash128": four lanes folded by two mixes, before the module's hashes were one, FH;
#: "hash128v2": FH's ``hash128``, not collision-resistant)
RETIRED_BLOCK_HASHES: Final = ("hash128", "hash128v2")

_SEAL: Final = b"maxrepeat-state\0"


def seal(data: bytes, digest: Callable[[bytes | memoryview], bytes] = _digest) -> bytes:
    """A state file's bytes: a marker, the payload's checksum (``digest``: BLAKE2b by
    default; a session uses its `block_hash`), then the payload.

    >>> unseal(seal(b"x")), unseal(b"maxrepeat-state\\0" + bytes(16) + b"x")
    (b'x', None)
    """
    return _SEAL + digest(data) + data


def unseal(raw: bytes, digest: Callable[[bytes | memoryview], bytes] = _digest
           ) -> bytes | None:
    """The payload of a state file, or None when it is not intact (never decoded then;
    a file sealed with another ``digest`` is not intact either)."""
    n = len(_SEAL)
    if not raw.startswith(_SEAL) or len(raw) < n + 16:
        return None
    view = memoryview(raw)[n + 16:]
    if digest(view) != raw[n:n + 16]:
        return None
    return bytes(view)


_NEW: Final = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_BINARY", 0)
_SIDE: Final = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_BINARY", 0)


def _new_file(folder: Path) -> tuple[int, str]:
    """A new file of ours in ``folder``, open for writing: what ``tempfile.mkstemp(dir=folder,
    prefix=".tmp-", suffix=".state")`` gives, without importing tempfile (and with it
    shutil, random, bz2 and lzma) at every hook call."""
    for _ in range(100):
        path = os.path.join(folder, f".tmp-{os.urandom(6).hex()}.state")
        try:
            return os.open(path, _NEW, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name in {folder}")


def _target(path: Path) -> tuple[Path, os.stat_result | None]:
    """The file writing ``path`` must replace (a symlink's target, however many links
    lead to it) and its status (None when it does not exist yet)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path, None
    if S_ISLNK(st.st_mode):
        path = Path(os.path.realpath(path))
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return path, None  # a dangling link: its target is created
    return path, st


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it (`OSError`
    when it cannot be written; the temporary file is removed then). A symlink is
    written through (the file it points to is replaced, the link stays), and a file
    that exists keeps its mode and owner (a new one is made ``0600``)."""
    path, st = _target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _new_file(path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            if st is not None:
                _keep_mode_and_owner(out.fileno(), st)
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _keep_mode_and_owner(fd: int, st: os.stat_result) -> None:
    """Give the new file ``fd`` the mode and owner ``st`` says (`PermissionError` when
    the owner cannot be kept: the file is then not replaced)."""
    os.fchmod(fd, S_IMODE(st.st_mode))
    new = os.fstat(fd)
    if (new.st_uid, new.st_gid) != (st.st_uid, st.st_gid):
        os.fchown(fd, st.st_uid, st.st_gid)


def _side_path(state: Path, name: str) -> str:
    """``<key>.<name>.marks`` beside ``<key>.state`` (a string: no path object per file)."""
    return f"{os.fspath(state)[:-len('.state')]}.{name}.marks"


def load_sides(state: Path, sides: Sequence[_Side],
               digest: Callable[[bytes | memoryview], bytes]
               ) -> dict[str, tuple[str, bytes]] | None:
    """The verified bytes of the side files of the state saved at ``state`` (name ->
    (epoch, bytes)); None when one is missing, shorter than the state says or not the
    bytes it was saved with (the whole state is then ignored)."""
    loaded: dict[str, tuple[str, bytes]] = {}
    for side in sides:
        try:
            data = read_regular(_side_path(state, side.name), side.size)
        except OSError:
            return None
        if len(data) != side.size or digest(data) != side.digest:
            return None
        loaded[side.name] = (side.epoch, data)
    return loaded


def save_sides(state: Path, spill: Spill, sides: Sequence[_Side],
               digest: Callable[[bytes | memoryview], bytes]) -> list[_Side]:
    """Write what ``spill`` holds for the state about to be saved at ``state`` and return
    its side files (``sides``: the previous state's; those of a part encoded again and not
    written now are dropped). A set that extends its file appends what it gained (the
    file cut to the length it was read at first); any other is written from the start.
    `OSError` when a file cannot be written (the state must not be saved then)."""
    table = {s.name: s for s in sides if s.name.rsplit(".", 1)[0] not in spill.parts}
    for name, (epoch, marks, base, size) in spill.pending.items():
        data = memoryview(marks.data)[:size]
        fd = os.open(_side_path(state, name), _SIDE, 0o600)
        try:
            if os.lseek(fd, 0, os.SEEK_END) != base:  # garbage after it, or a new epoch
                os.ftruncate(fd, base)
                os.lseek(fd, base, os.SEEK_SET)
            at = base
            while at < size:
                at += os.write(fd, data[at:])
        finally:
            os.close(fd)
        table[name] = _Side(name, epoch, size, digest(data))
    return [table[n] for n in sorted(table)]
