"""Ctrl-C that never tears a result line (an adapter, used by the CLI only).

Python raises `KeyboardInterrupt` wherever the main thread happens to be, which could be
between writing a result line and counting it, or in the middle of a flush: the partial
summary would then disagree with the lines written, or a line would be cut. `SigintGuard`
raises it at once while the batch is waiting for workers (so a stop is prompt), but holds
it back inside `critical` sections (write one result and count it) until they end.

SIGTERM (``kill``, ``timeout``, a service manager) and SIGHUP (the terminal closed) are
handled the same way (issue 30): they raise `Stopped`, a `KeyboardInterrupt` that names
the signal, so the same clean-up runs (workers stopped, no ``.part`` file left) and the
exit is 128 + the signal's number, as the signal itself would have made it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["SigintGuard", "Stopped", "STOP_SIGNALS", "exit_code"]

#: the signals a run stops cleanly on (those this platform has)
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """A stop signal arrived: ``signum`` says which (the exit is 128 + it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def exit_code(exc: BaseException) -> int:
    """The exit status a run stopped by ``exc`` ends with (130 for a plain Ctrl-C)."""
    return 128 + (exc.signum if isinstance(exc, Stopped) else signal.SIGINT)


class SigintGuard:
    """Install with ``with SigintGuard() as guard:``; wrap each write in ``guard.critical()``.

    >>> with SigintGuard() as guard:
    ...     with guard.critical():
    ...         pass
    """

    def __init__(self) -> None:
        self._depth = 0
        self._pending = 0  # the signal held back by a critical section (0: none)
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._depth:
            self._pending = self._pending or signum
            return
        raise Stopped(signum)

    def __enter__(self) -> SigintGuard:
        # Only the main thread may set handlers; elsewhere (tests, embedding) do nothing.
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                previous = signal.getsignal(signum)
                if previous is not signal.SIG_IGN:  # `nohup`/background jobs keep ignoring
                    self._previous[signum] = previous
                    signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    @contextmanager
    def critical(self) -> Iterator[None]:
        """A section Ctrl-C does not cut; an interrupt during it is raised at its end."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if not self._depth and self._pending:
            signum, self._pending = self._pending, 0
            raise Stopped(signum)
