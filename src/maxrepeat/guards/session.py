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

The log is checked in blocks of `BLOCK` bytes: the saved state holds a digest of every
complete block before the offset and of the partial block ending at it, made by
`block_hash` (the native extension's non-cryptographic ``hash128`` at ~13 GB/s where it
is built, BLAKE2b otherwise; the state file's checksum too). By default (``"full"``) each
call hashes every block again, once (a rewrite anywhere is seen at the next call: issue
18; ~0.2 ms a MB with the reading); blocks appended are hashed once more when saved. With
``MAXREPEAT_HOOK_CHECK=sampled`` a call costs what was appended, not the length of the
log (issue 12): it hashes again the first block, the partial block (so a log replaced by
another, cut, or rewritten near where the last call stopped is seen at once) and, in
turn, ``1 + appended // BLOCK`` further blocks from a cursor that goes round the log (a
rewrite anywhere else is seen within as many calls as the log has blocks).
``docs/design/guards.md`` says what each costs and sees.

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
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Final

import msgspec

from .. import __version__
from ..core.errors import TrajectoryFormatError
from ..core.monitor import STATE_VERSION
from ..readers._marks import Spill, _SPILL
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

try:  # POSIX; elsewhere parallel hooks of one turn may interleave (the cache stays valid)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["GuardSession", "Snapshot", "default_cache_dir", "signature_of", "CACHE_FORMAT",
           "CHECKS", "check_mode",
           "BLOCK", "block_digests", "block_hash", "RETIRED_BLOCK_HASHES", "seal", "unseal"]

#: The log is verified in blocks of this many bytes (hashing one takes ~0.3 ms).
BLOCK: Final = 256 * 1024
#: How the log is checked against a saved state: ``"full"`` (every block, every call)
#: or ``"sampled"`` (the first block, the block at the offset and a round of others).
CHECKS: Final = ("full", "sampled")


def check_mode(environ: Mapping[str, str] | None = None) -> str:
    """The check mode ``MAXREPEAT_HOOK_CHECK`` asks for: ``"full"`` unless it is exactly
    ``sampled`` (anything else, a typo included, keeps the safe check).

    >>> check_mode({}), check_mode({"MAXREPEAT_HOOK_CHECK": "sampled"})
    ('full', 'sampled')
    >>> check_mode({"MAXREPEAT_HOOK_CHECK": "sampeld"})
    'full'
    """
    env = os.environ if environ is None else environ
    return "sampled" if env.get("MAXREPEAT_HOOK_CHECK") == "sampled" else "full"


_D: Final = 16  # bytes per block digest


def _read_at(fh: IO[bytes], start: int, size: int) -> bytes:
    fh.seek(start)
    return fh.read(size)


def block_digests(fh: IO[bytes], start: int, end: int,
                  digest: Callable[[bytes | memoryview], bytes] | None = None) -> bytes:
    """The digests (``digest``, default: `block_hash`'s) of the complete `BLOCK`-byte
    blocks of ``fh`` from block ``start`` to block ``end`` (exclusive), 16 bytes each;
    shorter when the file ends first. Blocks are read into one buffer, not a new bytes
    object each.

    >>> import io
    >>> len(block_digests(io.BytesIO(bytes(3 * BLOCK)), 1, 3))
    32
    """
    if digest is None:
        digest = block_hash()[1]
    out = []
    if end <= start:
        return b""
    buf = memoryview(bytearray(BLOCK))
    fh.seek(start * BLOCK)
    for _ in range(start, end):
        got = 0
        while got < BLOCK:
            n = fh.readinto(buf[got:])  # type: ignore[attr-defined]
            if not n:
                break
            got += n
        if got < BLOCK:
            break
        out.append(digest(buf))
    return b"".join(out)


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
        self._lockfile = base / f"{key}.lock"
        self._lock_fd: int | None = None
        self._fh: IO[bytes] | None = None
        self.size = 0
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
        self._lock()
        self._spill_token = _SPILL.set(self.spill)
        if self.log is not None:
            try:
                self._fh = open(self.log, "rb")
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
            self.size = os.fstat(self._fh.fileno()).st_size
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._spill_token is not None:
            _SPILL.reset(self._spill_token)  # type: ignore[arg-type]
            self._spill_token = None
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

    def _tail(self, offset: int) -> bytes:
        """The digest of the partial block that ends at ``offset``."""
        assert self._fh is not None
        start = offset - offset % BLOCK
        return self._hash(_read_at(self._fh, start, offset - start))

    def _verify(self, saved: _Saved) -> bool:
        """Whether the log still matches ``saved`` where this call checks it (every
        block; or, sampled, the first block, the block at the offset, and the next blocks
        of the round)."""
        fh = self._fh
        assert fh is not None
        offset = saved.snapshot.offset
        if offset == 0:
            return True
        count = offset // BLOCK
        blocks = saved.blocks
        if len(blocks) != count * _D or self._tail(offset) != saved.tail:
            return False
        if count == 0:
            return True
        if block_digests(fh, 0, 1, self._hash) != blocks[:_D]:
            return False
        if self.check == "full":
            if block_digests(fh, 1, count, self._hash) != blocks[_D:]:
                return False
            self._blocks = blocks
            return True
        cursor = saved.audit % count
        for _ in range(min(count - 1, 1 + (self.size - offset) // BLOCK)):
            cursor = cursor % (count - 1) + 1  # block 0 is checked every time
            if block_digests(fh, cursor, cursor + 1, self._hash) != \
                    blocks[cursor * _D:(cursor + 1) * _D]:
                return False
        self._audit = cursor
        self._blocks = blocks
        return True

    def _whole_lines(self, offset: int, lines: int, size: int) -> Iterator[bytes]:
        """The log from byte ``offset`` on, read ``size`` bytes at a time and cut after
        each read's last newline: every piece is complete lines, newlines kept. Resets
        ``offset`` / ``line_count`` (to ``offset`` / ``lines``: the callers advance them)
        and ``partial``, which holds the unterminated rest once the log is read."""
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
            payload = unseal(self.file.read_bytes(), self._hash)
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
            tail = self._tail(snap.offset)
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            sides = save_sides(self.file, self.spill, self._sides, self._hash)
            write_atomic(self.file, seal(msgspec.msgpack.encode(
                _Saved(self.version, self.agent, self.session, self.log or "",
                       self.signature, check, blocks, tail, self._audit, snap, sides)),
                self._hash))
        except OSError:
            pass  # a cache we cannot write only costs a full read next time
