"""The cyclic garbage collector, paused while a command starts (start-up is measured:
bench/RESULTS.md).

Importing click and a command's modules allocates tens of thousands of objects that are
never garbage (classes, functions, constants); the collector would scan them some thirty
times, about 6 ms of a 70 ms ``maxrepeat grade`` of one small file. `pause` stops it;
`resume` restores it before the command's own work (``grade`` resumes it before any
trajectory is read, the other commands when they are invoked) and when ``main`` returns,
so nothing runs long with the collector off and an importer of `maxrepeat.cli` keeps it.

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


def resume() -> None:
    """Start the collector again if `pause` stopped it."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
