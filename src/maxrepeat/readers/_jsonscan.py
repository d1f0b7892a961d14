"""The scanner of `_windows`: the items of a JSON array (or the end of a value) found in
raw bytes by tracking only strings and brackets, a block at a time (the state carries
over from block to block). `scan` is the native one when built, else `scan_pure`."""

from __future__ import annotations

import re
from typing import Final

from ..core import accel

__all__ = ["scan", "scan_pure"]

_OUT: Final = re.compile(rb'[\[\]{}",]')
_IN: Final = re.compile(rb'["\\]')


def scan_pure(buf: bytes, pos: int, depth: int, in_str: int, esc: int,
              first: int) -> tuple[int, int, int, int, int]:
    """Scan ``buf`` from ``pos`` with the state (depth below the container, inside a
    string, after a backslash) where the previous block left it. Stops at a ``]`` or
    ``}`` closing the container, or (``first``) at its first comma; otherwise runs to the
    end. Returns (position, depth, in_str, esc, last comma of the container seen or -1).

    >>> scan_pure(b'{"a":"x,]"},[1,2]]', 0, 0, 0, 0, 0)
    (17, 0, 0, 0, 11)
    """
    last = -1
    n = len(buf)
    if esc:
        if pos >= n:
            return n, depth, in_str, esc, last
        pos += 1
        esc = 0
    while pos < n:
        if in_str:
            m = _IN.search(buf, pos)
            if m is None:
                return n, depth, 1, 0, last
            pos = m.start()
            if buf[pos] == 0x5C:  # a backslash escapes the next byte
                if pos + 1 >= n:
                    return n, depth, 1, 1, last
                pos += 2
                continue
            in_str = 0
            pos += 1
            continue
        m = _OUT.search(buf, pos)
        if m is None:
            return n, depth, 0, 0, last
        pos = m.start()
        c = buf[pos]
        if c == 0x22:
            in_str = 1
        elif c == 0x5B or c == 0x7B:
            depth += 1
        elif c == 0x5D or c == 0x7D:
            if depth == 0:
                return pos, 0, 0, 0, last
            depth -= 1
        elif depth == 0:  # a comma of the container
            if first:
                return pos, 0, 0, 0, last
            last = pos
        pos += 1
    return n, depth, in_str, esc, last


def scan(buf: bytes, pos: int, depth: int, in_str: int, esc: int,
         first: int) -> tuple[int, int, int, int, int]:
    """`scan_pure`, by the native extension when it is active."""
    native = accel.native
    if native is not None and hasattr(native, "scan_json"):
        out: tuple[int, int, int, int, int] = native.scan_json(buf, pos, depth, in_str, esc,
                                                                first)
        return out
    return scan_pure(buf, pos, depth, in_str, esc, first)
