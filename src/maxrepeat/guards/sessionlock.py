"""The per-session lock of a hook's saved state (`maxrepeat.guards.session`).

Parallel tool calls of one turn run their hooks at the same time: each takes the
session's lock for the whole call, so it sees the state the previous one saved. POSIX
only (``fcntl.flock``); elsewhere parallel hooks of one turn may interleave, and the
cache stays valid because every saved state is verified before use.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["SessionLock"]


class SessionLock:
    """An exclusive lock on the file ``path`` (made with its folder when missing).

    >>> import tempfile
    >>> lock = SessionLock(Path(tempfile.mkdtemp()) / "s" / "k.lock")
    >>> lock.acquire(); lock.held
    True
    >>> lock.release(); lock.held
    False
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this process holds the lock now."""
        return self._fd is not None

    def acquire(self) -> None:
        """Wait for the lock; without a folder to hold it, go on unlocked (the state is
        verified anyway)."""
        if fcntl is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd = fd

    def release(self) -> None:
        """Let the lock go (a no-op when it is not held)."""
        if self._fd is not None and fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
