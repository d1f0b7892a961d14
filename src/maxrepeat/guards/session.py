"""Per-session guard state kept on disk between hook processes, verified before use.

An agent runs its hook as a new process for every tool call. So that a call reads only
what the agent's session log gained since the previous call, the guard saves, per
session, how far it read, the reader's conversion state, the monitors and the escalation
state. A saved state is a hint, never trusted: it is used only when it was written by
this version for the same agent, session, log path and grader signature, its offset is
within the log, the whole log up to the offset still hashes to what was saved (a rewrite
anywhere before the offset is seen, not only in the first and last 4 KiB: issue 18), and
the state file itself still matches the checksum written with it (a flipped byte in the
cache is never decoded). Anything else (missing, corrupt, another version or config, a
log that shrank or was rewritten) is ignored and the log read from its start.

API (shared by every agent hook; ``maxrepeat.guards.claude_code`` is the first user)::

    from maxrepeat.guards.session import GuardSession, Snapshot, default_cache_dir

    with GuardSession(cache_dir, agent="codex", session=sid, log=path,
                      signature=signature_of(configs, policy)) as gs:
        snap = gs.restore()            # Snapshot | None (verified against gs.log)
        start = snap.offset if snap else 0
        for number, line in gs.lines(start, snap.lines if snap else 0):
            ...                         # complete lines only, numbered from 1
        gs.partial                      # the unterminated last line (b"" when none)
        gs.store(Snapshot(gs.offset, gs.line_count, reader_state, monitor_bytes,
                          escalation_state))

* ``GuardSession`` takes an exclusive per-session lock for the ``with`` block (parallel
  tool calls of one turn run their hooks at the same time; each sees the state the
  previous one saved, and one reason per turn holds);
* ``log=None`` for an agent whose hook payload carries the whole history: no file is
  read and ``restore(check=...)`` verifies a caller-made digest instead (for example of
  the history prefix the state covers);
* ``store`` writes atomically (temporary file and rename); a cache that cannot be
  written costs only a full read next time;
* ``signature_of(configs, policy, *extra)`` is the config part of the verification.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final

import msgspec

from .. import __version__
from ..core.config import MaxRepeatConfig
from ..core.errors import TrajectoryFormatError
from ..core.monitor import STATE_VERSION
from .policy import EscalationState, Policy

try:  # POSIX; elsewhere parallel hooks of one turn may interleave (the cache stays valid)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["GuardSession", "Snapshot", "default_cache_dir", "signature_of", "CACHE_FORMAT",
           "prefix_digest", "seal", "unseal"]

#: Changes whenever the saved layout changes; part of every saved state.
CACHE_FORMAT: Final = 3
_CHECK_BYTES: Final = 4096


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


class _Saved(msgspec.Struct):
    version: str
    agent: str
    session: str
    log: str
    signature: str
    check: bytes
    head: bytes
    before: bytes
    snapshot: Snapshot


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
    return json.dumps([[[c.to_dict(), n] for c, n in zip(configs, names)], pol, list(extra)],
                      sort_keys=True, default=str)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def prefix_digest(fh: IO[bytes], offset: int) -> bytes:
    """The digest of the first ``offset`` bytes of ``fh`` (all of them: hashing runs at
    about 1 GB/s, far faster than reading the log again, and a cache must never be
    trusted over a log rewritten in its middle)."""
    if offset <= 0:
        return b""
    fh.seek(0)
    h = hashlib.blake2b(digest_size=16)
    left = offset
    while left > 0:
        chunk = fh.read(min(left, 1 << 20))
        if not chunk:
            return b""  # shorter than offset: matches no saved digest
        h.update(chunk)
        left -= len(chunk)
    return h.digest()


_SEAL: Final = b"maxrepeat-state\0"


def seal(data: bytes) -> bytes:
    """A state file's bytes: a marker, the payload's checksum, then the payload.

    >>> unseal(seal(b"x")), unseal(b"maxrepeat-state\\0" + bytes(16) + b"x")
    (b'x', None)
    """
    return _SEAL + _digest(data) + data


def unseal(raw: bytes) -> bytes | None:
    """The payload of a state file, or None when it is not intact (never decoded then)."""
    n = len(_SEAL)
    if not raw.startswith(_SEAL) or len(raw) < n + 16:
        return None
    data = raw[n + 16:]
    return data if _digest(data) == raw[n:n + 16] else None


class GuardSession:
    """One hook call's view of a session: its lock, its saved state, the log's new lines.

    Raises `TrajectoryFormatError` on entry when the log cannot be opened.
    """

    def __init__(self, cache_dir: Path | None, *, agent: str, session: str | None,
                 log: str | None, signature: str, missing_ok: bool = False) -> None:
        self.agent = agent
        #: a log that does not exist yet is an empty log (an agent that writes its log
        #: asynchronously may run the first hooks before the file is created): the state
        #: stays keyed by the log's path, so it is the same state once the file appears
        self.missing_ok = missing_ok
        self.missing = False
        self.session = session or ""
        self.log = log
        self.signature = signature
        self.version = f"{__version__}/{STATE_VERSION}/{CACHE_FORMAT}"
        key = hashlib.sha256(
            f"{agent}\0{self.session}\0{log or ''}".encode("utf-8", "surrogatepass")
        ).hexdigest()[:40]
        base = cache_dir if cache_dir is not None else default_cache_dir()
        self.file = base / f"{key}.state"
        self._lockfile = base / f"{key}.lock"
        self._lock_fd: int | None = None
        self._fh: IO[bytes] | None = None
        self.size = 0
        #: after `lines`: bytes and lines read so far, and the unterminated last line
        self.offset = 0
        self.line_count = 0
        self.partial = b""

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> GuardSession:
        self._lock()
        if self.log is not None:
            try:
                self._fh = open(self.log, "rb")
            except FileNotFoundError:
                if not self.missing_ok:
                    self._unlock()
                    raise TrajectoryFormatError(self.log, "cannot read: no such file") from None
                self.missing = True
                return self
            except OSError as exc:
                self._unlock()
                raise TrajectoryFormatError(
                    self.log, f"cannot read: {exc.strerror or exc}") from None
            self.size = os.fstat(self._fh.fileno()).st_size
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self._unlock()

    def _lock(self) -> None:
        if fcntl is None:
            return
        try:
            self._lockfile.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._lockfile, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return  # no lock without a cache folder: the state is verified anyway
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None and fcntl is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- the log -----------------------------------------------------------------------

    def _hashes(self, offset: int) -> tuple[bytes, bytes]:
        fh = self._fh
        if fh is None or offset == 0:
            return b"", b""
        return prefix_digest(fh, offset), b""

    def lines(self, offset: int = 0, lines: int = 0) -> Iterator[tuple[int, bytes]]:
        """The complete lines of the log from byte ``offset`` on, numbered after ``lines``;
        afterwards ``offset`` / ``line_count`` are where reading stopped and ``partial``
        holds an unterminated last line (still being written)."""
        if self._fh is None and self.missing and self.log is not None:
            try:  # created since the session was entered
                self._fh = open(self.log, "rb")
            except OSError:
                pass
        fh = self._fh
        self.offset, self.line_count, self.partial = offset, lines, b""
        if fh is None:
            return
        fh.seek(offset)
        for raw in fh:  # streamed: a first read of a long log stays small in memory
            if not raw.endswith(b"\n"):
                self.partial = raw
                return
            self.offset += len(raw)
            self.line_count += 1
            yield self.line_count, raw

    # -- the saved state ---------------------------------------------------------------

    def restore(self, check: bytes = b"") -> Snapshot | None:
        """The saved snapshot when it verifies against the log (and ``check``); None
        otherwise."""
        try:
            payload = unseal(self.file.read_bytes())
            if payload is None:
                return None
            saved = msgspec.msgpack.decode(payload, type=_Saved)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        if (saved.version, saved.agent, saved.session, saved.log, saved.signature,
                saved.check) != (self.version, self.agent, self.session, self.log or "",
                                 self.signature, check):
            return None
        snap = saved.snapshot
        if self.missing:
            return snap if snap.offset == 0 else None
        if self._fh is not None:
            # offset 0: saved before anything was read (or before the log existed);
            # such a state claims nothing about the log's bytes
            if not 0 <= snap.offset <= self.size:
                return None
            if self._hashes(snap.offset) != (saved.head, saved.before):
                return None
        return snap

    def store(self, snap: Snapshot, check: bytes = b"") -> None:
        """Save ``snap`` atomically (silently skipped when the cache cannot be written)."""
        head, before = self._hashes(snap.offset)
        data = seal(msgspec.msgpack.encode(_Saved(self.version, self.agent, self.session,
                                                  self.log or "", self.signature, check,
                                                  head, before, snap)))
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".tmp-", suffix=".state")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, self.file)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # a cache we cannot write only costs a full read next time
