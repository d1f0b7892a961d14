"""Ctrl-C that never tears a result line (an adapter, used by the CLI only).

Python raises `KeyboardInterrupt` wherever the main thread happens to be, which could be
between writing a result line and counting it, or in the middle of a flush: the partial
summary would then disagree with the lines written, or a line would be cut. `SigintGuard`
raises it at once while the batch is waiting for workers (so a stop is prompt), but holds
it back inside `critical` sections (write one result and count it) until they end.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["SigintGuard"]


class SigintGuard:
    """Install with ``with SigintGuard() as guard:``; wrap each write in ``guard.critical()``.

    >>> with SigintGuard() as guard:
    ...     with guard.critical():
    ...         pass
    """

    def __init__(self) -> None:
        self._depth = 0
        self._pending = False
        self._previous: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._depth:
            self._pending = True
            return
        raise KeyboardInterrupt

    def __enter__(self) -> SigintGuard:
        # Only the main thread may set handlers; elsewhere (tests, embedding) do nothing.
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is not signal.SIG_IGN:  # `nohup`/background jobs keep ignoring it
                self._previous = previous
                signal.signal(signal.SIGINT, self._handle)
                self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    @contextmanager
    def critical(self) -> Iterator[None]:
        """A section Ctrl-C does not cut; an interrupt during it is raised at its end."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if not self._depth and self._pending:
            self._pending = False
            raise KeyboardInterrupt
