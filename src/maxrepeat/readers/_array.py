"""A large JSON array of trajectories read a stretch of items at a time (issue 18 item 11).

Loaded whole, a 290 MB array of 5 million runs held its bytes, one ``msgspec.Raw`` slice
per run and every result (3.1 GB). `array_ranges` makes one pass over the file in blocks
and cuts it into ranges of whole items (at most `RANGE_ITEMS` items or about
`RANGE_BYTES` bytes each); `read_array_range` reads one range back. The batch engine
grades each range as a unit of its own (a worker returns one range's results, not the
file's), and `readers.vally` reads a large array range by range.

Exactly the in-memory results: item ends are found by the standard library's scanner
(`json.JSONDecoder.raw_decode` over the bytes decoded as Latin-1, so a character is a
byte and positions are byte offsets; UTF-8 never puts a byte below 0x80 inside a
character, so no item end is ever misplaced), and each range is checked with msgspec
as the whole array is (``list[msgspec.Raw]``). Each item is then read from its own bytes
by the same code as before. Anything the whole-document path would read differently
(JSON msgspec refuses, which the lenient path then reads for the whole file; text after
the array; an empty array) makes `array_ranges` return None: the file is loaded whole,
as before. Memory is one block (`BLOCK_BYTES`, or the largest item) and the list of
ranges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Final

import msgspec

__all__ = ["ArrayRange", "array_ranges", "read_range_items", "RANGE_ITEMS", "RANGE_BYTES",
           "BLOCK_BYTES", "SPLIT_BYTES"]

#: Arrays larger than this are read range by range (smaller ones are loaded whole).
SPLIT_BYTES: Final = 16 * 1024 * 1024

#: A range holds at most this many items (a worker's results for one unit)...
RANGE_ITEMS: Final = 2_000
#: ...and about this many bytes.
RANGE_BYTES: Final = 16 * 1024 * 1024
#: What one pass reads at a time (doubled while a single item does not fit).
BLOCK_BYTES: Final = 4 * 1024 * 1024

_WS: Final = re.compile(r"[ \t\n\r]*")
_BOM: Final = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class ArrayRange:
    """Bytes ``[start, end)`` of the file hold items ``first`` onwards, whole, separated
    by commas (no leading or trailing comma)."""

    start: int
    end: int
    first: int


def _scanner() -> json.JSONDecoder:
    # Values are thrown away: only where each item ends matters. Numbers are not
    # converted (a 5,000-digit integer must not stop the scan); control characters in
    # strings are left to msgspec's check of the range.
    return json.JSONDecoder(strict=False, parse_int=lambda s: 0, parse_float=lambda s: 0.0,
                            parse_constant=lambda s: 0.0)


def array_ranges(fh: IO[bytes], size: int, *, items: int | None = None,
                 max_bytes: int | None = None, block: int | None = None
                 ) -> list[ArrayRange] | None:
    """The ranges of the top-level JSON array in ``fh`` (``size`` bytes), or None when
    the file must be read whole (see the module's docstring). Sizes default to
    `RANGE_ITEMS`, `RANGE_BYTES` and `BLOCK_BYTES`."""
    items = RANGE_ITEMS if items is None else items
    max_bytes = RANGE_BYTES if max_bytes is None else max_bytes
    block = BLOCK_BYTES if block is None else block
    scan = _BlockScan(_scanner().raw_decode, fh, items, max_bytes, block)
    decode_check = msgspec.json.Decoder(list[msgspec.Raw]).decode
    start = _array_start(fh)
    if start is None:
        return None
    pos = start
    out: list[ArrayRange] = []
    index = 0
    want = block
    while True:
        fh.seek(pos)
        data = fh.read(want)
        at_eof = pos + len(data) >= size
        text = data.decode("latin-1")
        cur = _WS.match(text).end()  # type: ignore[union-attr]
        if index == 0 and text[cur:cur + 1] == "]":
            return None  # an empty array: nothing to gain
        found = scan.items(text, cur)
        if found is None:
            return None
        ends, next_start, closed = found
        if not ends:
            if at_eof:
                return None  # not JSON, or cut short: the whole-file path reports it
            want *= 2  # one item longer than the block
            continue
        try:
            decode_check(b"[" + data[: ends[-1]] + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None  # msgspec refuses what the whole-file read would also refuse
        out.append(ArrayRange(pos, pos + ends[-1], index))
        index += len(ends)
        if closed:
            return out
        pos += next_start
        want = block


def _array_start(fh: IO[bytes]) -> int | None:
    """Where the top-level array's items begin (just after its ``[``, past a BOM and
    whitespace), or None when the file does not open with one."""
    head = fh.read(3)
    pos = 3 if head == _BOM else 0
    fh.seek(pos)
    lead = fh.read(64 * 1024).decode("latin-1")
    skip = _WS.match(lead)
    assert skip is not None
    if lead[skip.end():skip.end() + 1] != "[":
        return None
    return pos + skip.end() + 1


class _BlockScan:
    """Finding the whole items in one block of an array's text (`array_ranges`)."""

    def __init__(self, raw_decode: Callable[[str, int], tuple[Any, int]], fh: IO[bytes],
                 items: int, max_bytes: int, block: int) -> None:
        self.raw_decode = raw_decode
        self.fh = fh
        self.max_items = items
        self.max_bytes = max_bytes
        self.block = block

    def items(self, text: str, cur: int) -> tuple[list[int], int, bool] | None:
        """(the end of each whole item from ``cur``, where the next one starts, whether
        the array closed), or None when the file must be read whole."""
        ends: list[int] = []
        next_start = cur
        while True:
            try:
                _, end = self.raw_decode(text, cur)
            except json.JSONDecodeError as exc:
                if exc.pos < len(text) - 16 and not exc.msg.startswith("Unterminated"):
                    return None  # not JSON (not cut by the block's end): read it whole
                # cut by the block's end (or bad near it: decided with more bytes)
                return ends, next_start, False
            except RecursionError:
                return None
            after = _WS.match(text, end).end()  # type: ignore[union-attr]
            if after >= len(text):
                # what follows is not read yet (a number may go on)
                return ends, next_start, False
            sep = text[after]
            if sep not in ",]":
                return None
            ends.append(end)
            if sep == "]":
                if text[after + 1:].strip(" \t\n\r") or not _blank_after(self.fh, self.block):
                    return None  # text after the array
                return ends, next_start, True
            cur = next_start = _WS.match(text, after + 1).end()  # type: ignore[union-attr]
            if len(ends) >= self.max_items or end >= self.max_bytes:
                return ends, next_start, False


def _blank_after(fh: IO[bytes], block: int) -> bool:
    """Whether the rest of ``fh`` (from where it was last read) is JSON whitespace."""
    while chunk := fh.read(block):
        if chunk.strip(b" \t\n\r"):
            return False
    return True


def read_range_items(fh: IO[bytes], rng: ArrayRange) -> list[bytes]:
    """The items of ``rng``, each its own bytes (as the whole-array read slices them)."""
    fh.seek(rng.start)
    data = fh.read(rng.end - rng.start)
    return [bytes(raw) for raw in
            msgspec.json.decode(b"[" + data + b"]", type=list[msgspec.Raw])]
