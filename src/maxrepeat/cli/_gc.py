"""The cyclic garbage collector, paused while a command starts (start-up is measured:
bench/RESULTS.md).

Importing click and a command's modules allocates tens of thousands of objects that are
never garbage (classes, functions, constants). `pause` stops the collector while they
are made; `resume` starts it again when the command's own work starts (``grade``: before
any trajectory is read; the other commands: when they are invoked), after moving them
out of its reach (``freeze``: `gc.freeze`). Otherwise every later collection, and the
one at interpreter exit, would scan them again: together about 9 ms of a 70 ms
``maxrepeat grade`` of one small file. The module's own import resumes without freezing
(an importer of `maxrepeat.cli` keeps its collector as it was); ``main`` is the
command's process, whose start-up objects stay frozen until it exits.

>>> import gc
>>> pause(); gc.isenabled()
False
>>> resume(); gc.isenabled()
True
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False


def pause() -> None:
    """Stop the collector, if it runs (`resume` starts it again)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume(*, freeze: bool = False) -> None:
    """Start the collector again if `pause` stopped it; with ``freeze``, first move every
    object made so far out of its reach for good (`gc.freeze`)."""
    global _paused
    if _paused:
        _paused = False
        if freeze:
            gc.freeze()
        gc.enable()
