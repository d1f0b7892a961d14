"""The worker processes of the batch engine (`batch.BatchGrader`): each is given the
graders once (`init_worker`, the pool's initializer), ignores Ctrl-C (the parent decides
how to stop), ends when the process that started the batch is gone, and grades the units
it is sent (`work`). `mp_context` is how they are started; `release_ipc` frees the
pool's named semaphores before a quick exit."""

from __future__ import annotations

import os
from typing import Any

from .driver import Detail, Graders
from .unitgrader import UnitOutcome, grade_unit
from .units import Unit

__all__ = ["init_worker", "work", "mp_context", "release_ipc"]

# Worker state, set once per process by the pool initializer (graders are not re-sent).
_WORKER: dict[str, Any] = {}


def init_worker(graders: Graders, fmt: str, detail: Detail | None, parent: int = 0) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):  # not the parent's clean stop (cli/sigint.py)
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    _WORKER.update(graders=graders, fmt=fmt, detail=detail)
    if parent:
        import threading

        threading.Thread(target=_watch_parent, args=(parent,), daemon=True,
                         name="maxrepeat-parent-watch").start()


def release_ipc() -> None:
    """Unlink the pool's semaphores before a quick exit (``os._exit``), as a normal exit
    would: otherwise the resource tracker warns of "leaked semaphore objects" after
    Ctrl-C. Runs multiprocessing's exit finalizers of priority 0 and above only (the
    ones that release named resources), never the thread joins that may hang."""
    try:
        from multiprocessing import util

        util._run_finalizers(0)  # type: ignore[attr-defined]
    except Exception:
        pass  # the tracker cleans up anyway; only its warning is lost


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return True  # no /proc: the signal test alone decides


def _watch_parent(parent: int) -> None:
    """End this worker when the process that started the batch is gone: SIGTERM, SIGHUP
    or ``kill -9`` of ``maxrepeat grade`` must not leave workers running for ever (the
    workers are children of the forkserver, so the kernel does not tell them)."""
    import time

    while _alive(parent):
        time.sleep(0.2)
    os._exit(3)


def work(unit: Unit) -> UnitOutcome:
    return grade_unit(unit, _WORKER["graders"], _WORKER["fmt"], _WORKER["detail"])


def mp_context() -> Any:
    import multiprocessing

    # forkserver: safe with the progress bar's thread in the parent, and cheap per worker.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if "forkserver" in methods:
        ctx.set_forkserver_preload(["maxrepeat.engines.batch", "maxrepeat.readers.vally"])
    return ctx
