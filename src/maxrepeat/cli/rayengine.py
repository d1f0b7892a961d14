"""``maxrepeat grade --engine ray``: the batch's Ray engine started, with the errors of
reaching a cluster said in one line (exit 2)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from .options import die, say

if TYPE_CHECKING:
    from ..engines.grading import Grading

__all__ = ["start_on_ray"]


def start_on_ray(grading: Grading, sink: Any) -> None:
    """`Grading.start` on Ray; no Ray installed, or no cluster reached: one line, exit 2."""
    try:
        grading.start()
    except MissingExtraError as err:
        die(str(err))
    except ConnectionError as err:
        # One line, exit 2, now: a half-made Ray connection can block the interpreter's
        # exit (Ray's exit-time shutdown waits on the cluster).
        if sink is not None:
            sink.discard()
        say(str(err))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)
