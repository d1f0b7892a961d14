"""Per-session guard state kept on disk between hook processes, verified before use.

An agent runs its hook as a new process for every tool call. So that a call reads only
what the agent's session log gained since the previous call, the guard saves, per
session, how far it read, the reader's conversion state, the monitors and the escalation
state. A saved state is a hint, never trusted: it is used only when it was written by
this version for the same agent, session, log path and grader signature, its offset is
within the log, the log still matches it where it was checked (below), and the state file
itself still matches the checksum written with it (a flipped byte in the cache is never
decoded). Anything else (missing, corrupt, another version or config, a log that shrank
or was rewritten) is ignored and the log read from its start.

The log is checked against the saved state in blocks (`maxrepeat.guards.logcheck`:
every block at every call, or, by default, what the call can tell was appended).

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
* ``signature_of(configs, policy, *extra)`` is the config part of the verification;
* inside the ``with`` block, states encoded with ``readers._marks.encode_state`` keep
  their large sets of id digests in side files that a call only appends to, verified with
  the state (`maxrepeat.guards.statefile`, which holds the file's layout, seal and side
  files; this module reads and checks the log).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

import msgspec

from .. import __version__
from ..core.errors import TrajectoryFormatError
from ..core.monitor import STATE_VERSION
from ..readers._marks import _SPILL, Spill
from ..readers._regular import open_regular, read_regular
from .logcheck import (
    _D,
    BLOCK,
    CHECKS,
    block_digests,
    check_mode,
    file_stat,
    tail_digest,
    verify,
)
from .sessionlock import SessionLock
from .statefile import (
    CACHE_FORMAT,
    RETIRED_BLOCK_HASHES,
    Snapshot,
    _Saved,
    _Side,
    block_hash,
    default_cache_dir,
    load_sides,
    save_sides,
    seal,
    signature_of,
    unseal,
    write_atomic,
)

try:
    # The C module behind hashlib's sha256: importing hashlib also loads OpenSSL's
    # _hashlib, and an agent pays this module's start-up at every tool call.
    try:
        from _sha2 import sha256  # type: ignore[import-not-found, unused-ignore]  # 3.12 on
    except ImportError:
        from _sha256 import sha256  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import sha256

__all__ = ["GuardSession", "Snapshot", "default_cache_dir", "signature_of", "CACHE_FORMAT",
           "CHECKS", "check_mode",
           "BLOCK", "block_digests", "block_hash", "RETIRED_BLOCK_HASHES", "seal", "unseal"]

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
        self.check = check_mode()
        self.session = session or ""
        self.log = log
        self.signature = signature
        self.hash_name, self._hash = block_hash()
        self.version = f"{__version__}/{STATE_VERSION}/{CACHE_FORMAT}/{self.hash_name}"
        key = sha256(
            f"{agent}\0{self.session}\0{log or ''}".encode("utf-8", "surrogatepass")
        ).hexdigest()[:40]
        base = cache_dir if cache_dir is not None else default_cache_dir()
        self.file = base / f"{key}.state"
        self._lock = SessionLock(base / f"{key}.lock")
        self._fh: IO[bytes] | None = None
        self.size = 0
        #: the log's identity, size and times at entry, and whether they vouch for it
        self.stat: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
        self.racy = True
        #: after `lines`: bytes and lines read so far, and the unterminated last line
        self.offset = 0
        self.line_count = 0
        self.partial = b""
        # what `restore` verified, carried over by `store`: block digests and the cursor
        self._blocks = b""
        self._audit = 0
        #: the side files of the state restored (kept by `store` unless replaced), and
        #: where the states encoded in the ``with`` block keep their sets of id digests
        self._sides: list[_Side] = []
        self.spill = Spill()
        self._spill_token: object = None

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> GuardSession:
        self._lock.acquire()
        self._spill_token = _SPILL.set(self.spill)
        if self.log is not None:
            try:
                self._fh = open_regular(self.log)
            except FileNotFoundError:
                if not self.missing_ok:
                    self.__exit__(None, None, None)
                    raise TrajectoryFormatError(self.log, "cannot read: no such file") from None
                self.missing = True
                return self
            except OSError as exc:
                self.__exit__(None, None, None)
                raise TrajectoryFormatError(
                    self.log, f"cannot read: {exc.strerror or exc}") from None
            self.stat, self.racy = file_stat(self._fh.fileno())
            self.size = self.stat[2]
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._spill_token is not None:
            _SPILL.reset(self._spill_token)  # type: ignore[arg-type]
            self._spill_token = None
        self._lock.release()

    # -- the log -----------------------------------------------------------------------

    def _verify(self, saved: _Saved) -> bool:
        """Whether the log still matches ``saved`` where this call checks it
        (`logcheck.verify`); keeps what `store` carries over."""
        assert self._fh is not None
        audit = verify(self._fh, saved, self.stat, self.check, self._hash)
        if audit is None:
            return False
        self._audit, self._blocks = audit, saved.blocks
        return True

    def _whole_lines(self, offset: int, lines: int, size: int) -> Iterator[bytes]:
        """The log from byte ``offset`` on, read ``size`` bytes at a time and cut after
        each read's last newline: every piece is complete lines, newlines kept. Resets
        ``offset`` / ``line_count`` (to ``offset`` / ``lines``: the callers advance them)
        and ``partial``, which holds the unterminated rest once the log is read."""
        if self._fh is None and self.missing and self.log is not None:
            try:  # created since the session was entered
                self._fh = open_regular(self.log)
            except OSError:
                pass
        fh = self._fh
        self.offset, self.line_count, self.partial = offset, lines, b""
        if fh is None:
            return
        fh.seek(offset)
        carry = b""
        while True:
            chunk = fh.read(size)
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
            carry = data[cut:]
        self.partial = carry

    def lines(self, offset: int = 0, lines: int = 0) -> Iterator[tuple[int, bytes]]:
        """The complete lines of the log from byte ``offset`` on, numbered after ``lines``;
        afterwards ``offset`` / ``line_count`` are where reading stopped and ``partial``
        holds an unterminated last line (still being written)."""
        # a MiB at a time: a first read of a long log stays small in memory
        for piece in self._whole_lines(offset, lines, 1 << 20):
            for raw in io.BytesIO(piece):  # split at b"\n" only, as binary files are
                self.offset += len(raw)
                self.line_count += 1
                yield self.line_count, raw

    def line_chunks(self, offset: int = 0, lines: int = 0,
                    size: int = 8 << 20) -> Iterator[tuple[int, list[bytes]]]:
        """`lines` read ``size`` bytes at a time: (the number of the chunk's first line,
        its complete lines without their newline); the same ``offset`` / ``line_count`` /
        ``partial`` afterwards."""
        for piece in self._whole_lines(offset, lines, size):
            part = piece.split(b"\n")
            part.pop()  # the empty text after the last newline
            first = self.line_count + 1
            self.offset += len(piece)
            self.line_count += len(part)
            yield first, part

    # -- the saved state ---------------------------------------------------------------

    def restore(self, check: bytes = b"") -> Snapshot | None:
        """The saved snapshot when it verifies against the log (and ``check``) and its side
        files verify against it; None otherwise."""
        try:
            payload = unseal(read_regular(self.file), self._hash)
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
            if snap.offset != 0:
                return None
        elif self._fh is not None:
            # offset 0: saved before anything was read (or before the log existed);
            # such a state claims nothing about the log's bytes
            if not 0 <= snap.offset <= self.size or not self._verify(saved):
                return None
        loaded = load_sides(self.file, saved.sides, self._hash)
        if loaded is None:
            self._blocks, self._audit = b"", 0
            return None
        self.spill.loaded = loaded
        self._sides = saved.sides
        return snap

    def store(self, snap: Snapshot, check: bytes = b"") -> None:
        """Save ``snap`` atomically (silently skipped when the cache cannot be written),
        with the side files of the states encoded in this ``with`` block."""
        blocks, tail = b"", b""
        if self._fh is not None and snap.offset > 0:
            # the blocks checked when restoring are kept; only the new ones are hashed
            count = snap.offset // BLOCK
            blocks = self._blocks[:count * _D]
            blocks += block_digests(self._fh, len(blocks) // _D, count, self._hash)
            tail = tail_digest(self._fh, snap.offset, self._hash)
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            sides = save_sides(self.file, self.spill, self._sides, self._hash)
            write_atomic(self.file, seal(msgspec.msgpack.encode(
                _Saved(self.version, self.agent, self.session, self.log or "",
                       self.signature, check, blocks, tail, self._audit, snap, sides,
                       self.stat, self.racy)),
                self._hash))
        except OSError:
            pass  # a cache we cannot write only costs a full read next time
