"""The cyclic garbage collector and start-up (start-up is measured: bench/RESULTS.md).

Importing click and a command's modules allocates tens of thousands of objects that are
never garbage (classes, functions, constants). `pause` stops the collector while they
are made; `resume` starts it again when the command's own work starts (``grade``: before
any trajectory is read; the other commands: when they are invoked). The module's own
import resumes it too, so an importer of `maxrepeat.cli` keeps its collector as it was.
`spare_exit` makes the interpreter's last collection, at exit, skip every object (it
would scan them all: most of the ~9 ms of a 70 ms ``maxrepeat grade`` of one small file
that the collector cost); nothing is collected then that the exit does not free anyway.

>>> import gc
>>> pause(), gc.isenabled()
(True, False)
>>> resume(); gc.isenabled()
True
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False


def pause() -> bool:
    """Stop the collector, if it runs (`resume` starts it again); whether this call
    stopped it (False: it was already stopped, by `pause` or by the program)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True
        return True
    return False


def resume() -> None:
    """Start the collector again if `pause` stopped it."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


def spare_exit() -> None:
    """At interpreter exit, before its last collection, move every object out of the
    collector's reach (`gc.freeze`): the process ends, and its memory goes with it.
    (Freezing earlier, while worker pools start and stop, made a Ctrl-C exit report a
    leaked semaphore now and then; at exit nothing runs any more.)"""
    import atexit

    atexit.register(gc.freeze)
