"""How a hook call checks the agent's log against the state a previous call saved.

The log is checked in blocks of `BLOCK` bytes: the saved state holds a digest of every
complete block before the offset and of the partial block ending at it, made by
`block_hash` (BLAKE2b, a cryptographic hash: a check that a crafted log could satisfy
would be no check, issue 30; the state file's checksum too), and the log's device, inode,
size and times as the saving call opened it. Every call hashes again the first block and
the partial block at the offset (a log replaced, cut, or rewritten where the last call
stopped is seen at once). Then, by default (``"appended"``, issue 12: a call costs what
was appended, not the length of the log):

* a log that **grew** (what an agent does between two calls) has, in turn,
  ``1 + appended // BLOCK`` further blocks hashed again, from a cursor that goes round
  the log (a same-length rewrite in the middle made together with an append is seen
  within as many calls as the log has blocks);
* a log that **did not grow** is hashed again whole (a rewrite anywhere is seen at the
  next call: issue 18), unless its identity, size and times are the ones saved and were
  not too recent when saved (a change within the file system's time granularity can
  keep them: "racy", as git calls it): then nothing was written to it since.

``MAXREPEAT_HOOK_CHECK=full`` hashes every block at every call (~0.2 ms a MB with the
reading); blocks appended are hashed once more when saved, in both modes.
``docs/design/guards.md`` says what each costs and sees.

`verify` is the check; `GuardSession` (`maxrepeat.guards.session`) calls it when it
restores a state and keeps what it returns.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import IO, Final

from .statefile import Snapshot, _Saved, block_hash  # noqa: F401  (Snapshot: the doctests)

__all__ = ["BLOCK", "CHECKS", "RACY", "RACY_COARSE", "check_mode", "file_stat",
           "block_digests", "tail_digest", "verify"]

#: The log is verified in blocks of this many bytes (hashing one takes ~0.3 ms).
BLOCK: Final = 256 * 1024
#: How the log is checked against a saved state: ``"appended"`` (the default: what a log
#: that grew since the saved state can have changed in turn, a log that did not grow
#: whole unless untouched) or ``"full"`` (every block, every call).
CHECKS: Final = ("appended", "full")
#: File times this close (in ns) to the moment the file was opened do not vouch for it: a
#: write within the clock's granularity (a tick of the kernel's coarse clock, at most
#: 10 ms on Linux, ~16 ms on Windows) can leave them as they were. Times in whole seconds
#: (a file system that keeps no finer ones) get `RACY_COARSE`. Kept small because a hook
#: process usually opens the log 30-150 ms after the agent last wrote to it (the four
#: agents' end-to-end tests): a call before a tool that finds the times old enough lets
#: the call after the tool, finding the log untouched, hash nothing more.
RACY: Final = 20_000_000
RACY_COARSE: Final = 2_000_000_000


def check_mode(environ: Mapping[str, str] | None = None) -> str:
    """The check mode ``MAXREPEAT_HOOK_CHECK`` asks for: ``"appended"`` when it is unset,
    empty, ``appended`` or ``sampled`` (this mode's former name); ``"full"`` for ``full``
    and for anything else (a typo never weakens the check).

    >>> check_mode({}), check_mode({"MAXREPEAT_HOOK_CHECK": "full"})
    ('appended', 'full')
    >>> check_mode({"MAXREPEAT_HOOK_CHECK": "ful"})
    'full'
    """
    env = os.environ if environ is None else environ
    value = env.get("MAXREPEAT_HOOK_CHECK", "")
    return "appended" if value in ("", "appended", "sampled") else "full"


def file_stat(fd: int) -> tuple[tuple[int, int, int, int, int], bool]:
    """The open file's (device, inode, size, mtime ns, ctime ns), and whether its times
    are too recent to vouch for it (a later write may keep them: `RACY`).

    >>> import tempfile
    >>> with tempfile.TemporaryFile() as fh:  # modified "an hour ahead": racy however slow
    ...     ahead = time.time_ns() + 3_600_000_000_000
    ...     os.utime(fh.fileno(), ns=(ahead, ahead))
    ...     stat, racy = file_stat(fh.fileno())
    >>> stat[2], racy
    (0, True)
    """
    now = time.time_ns()
    st = os.fstat(fd)
    second = st.st_mtime_ns % 1_000_000_000 == 0 and st.st_ctime_ns % 1_000_000_000 == 0
    margin = RACY_COARSE if second else RACY
    racy = max(st.st_mtime_ns, st.st_ctime_ns) >= now - margin
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), racy


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


def tail_digest(fh: IO[bytes], offset: int,
                digest: Callable[[bytes | memoryview], bytes]) -> bytes:
    """The digest of the partial block of ``fh`` that ends at ``offset``.

    >>> import io
    >>> tail_digest(io.BytesIO(b"ab" * BLOCK), BLOCK + 2, bytes) == b"ab"
    True
    """
    start = offset - offset % BLOCK
    return digest(_read_at(fh, start, offset - start))


def verify(fh: IO[bytes], saved: _Saved, stat: tuple[int, int, int, int, int], check: str,
           digest: Callable[[bytes | memoryview], bytes]) -> int | None:
    """The round's cursor to save next when the log ``fh`` (``stat`` as `file_stat`
    gave it) still matches, where this call checks it, the ``saved`` state (its offset,
    block digests, cursor and the log's stat then); None when it does not. Checked: the
    first block and the block at the offset, then every other block (``check ==
    "full"``, or a log that did not grow and is not known untouched) or the next blocks
    of the round (a log that grew).

    >>> import io
    >>> size = 2 * BLOCK + 5
    >>> log, h, stat = io.BytesIO(b"x" * size), block_hash()[1], (1, 2, size, 0, 0)
    >>> saved = _Saved("v", "agent", "S", "log", "sig", b"", block_digests(log, 0, 2, h),
    ...                tail_digest(log, size, h), 0, Snapshot(size, 3, b"", []), [],
    ...                stat, True)
    >>> verify(log, saved, stat, "full", h)
    0
    >>> verify(io.BytesIO(b"y" + b"x" * (size - 1)), saved, stat, "full", h)
    """
    offset, blocks, audit = saved.snapshot.offset, saved.blocks, saved.audit
    if offset == 0:
        return audit
    count = offset // BLOCK
    if len(blocks) != count * _D or tail_digest(fh, offset, digest) != saved.tail:
        return None
    if count == 0:
        return audit
    if block_digests(fh, 0, 1, digest) != blocks[:_D]:
        return None
    size = stat[2]
    grew = size > saved.stat[2]
    untouched = stat == saved.stat and not saved.racy
    cursor = audit % count
    if check == "full" or not (grew or untouched):
        if block_digests(fh, 1, count, digest) != blocks[_D:]:
            return None
    elif grew:
        for _ in range(min(count - 1, 1 + (size - offset) // BLOCK)):
            cursor = cursor % (count - 1) + 1  # block 0 is checked every time
            if block_digests(fh, cursor, cursor + 1, digest) != \
                    blocks[cursor * _D:(cursor + 1) * _D]:
                return None
    return cursor
