"""``maxrepeat grade --engine ray``: the batch graded on a Ray cluster, with the errors
of reaching one said in one line (exit 2)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from .options import die, say

if TYPE_CHECKING:
    from ..engines.driver import Graded, Graders

__all__ = ["on_ray"]


def on_ray(
    paths: Sequence[str], graders: Graders, fmt: str, address: str | None,
    on_error: Callable[[str], None], detail: Any, quiet: bool, sink: Any,
) -> Iterator[Graded]:
    from ..engines.ray import grade_paths_on_ray

    try:
        return grade_paths_on_ray(paths, graders, fmt, address=address, on_error=on_error,
                                  detail=detail, quiet=quiet)
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
