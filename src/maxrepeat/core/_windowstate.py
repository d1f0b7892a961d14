"""What `windowsearch.WindowSearch` keeps between windows (a step beyond its window, the
stretch of a period reaching the last step) and the scan it runs within a window: the
stretches of `core.search` (the native one when active)."""

from __future__ import annotations

from array import array

from . import accel

__all__ = ["KeptStep", "OpenStretch", "packed_ids", "stretches"]


class KeptStep:
    """A step kept beyond its window: what a run's report needs of it."""

    __slots__ = ("key", "first", "last", "preview", "tools")

    def __init__(self, key: bytes | None, first: int, last: int, preview: str,
                 tools: tuple[str, ...]) -> None:
        self.key = key
        self.first = first
        self.last = last
        self.preview = preview
        self.tools = tools


class OpenStretch:
    """The stretch of one period reaching the last step (``length`` 0: none)."""

    __slots__ = ("start", "length", "block", "primitive")

    def __init__(self) -> None:
        self.start = 0
        self.length = 0
        self.block: list[KeptStep] = []
        self.primitive = True


def packed_ids(ids: list[int]) -> array[int] | None:
    return array("q", ids) if accel.native is not None else None


def stretches(ids: list[int], packed: array[int] | None, p: int, least: int,
               jlo: int) -> list[tuple[int, int]]:
    """(start, equalities) of the maximal stretches of at least ``least`` equalities
    among those from index ``jlo`` on, with starts counted from ``jlo``."""
    from .search import _stretches as scan

    if packed is not None:
        return scan(ids[jlo:], p, least, packed[jlo:])
    return scan(ids[jlo:], p, least)
