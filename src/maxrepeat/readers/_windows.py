"""One large trajectory document read a window of events at a time, decoded exactly as
the in-memory reader decodes the whole (issue 17 item 3).

A pass reads the file in blocks and finds the items of the ``events`` array in the raw
bytes with a scanner that only tracks strings and brackets (`_jsonscan.scan`: the native
one when built, else a regex loop). Each window of whole items is decoded by msgspec as the
document's own struct (``{"events":[...window...]}`` as `vally._Traj`), so every event
is the struct the in-memory path makes, checked the same way; every other top-level
member is decoded alone the same way (``{"key": value}`` as `vally._Traj`), so the whole
document is validated as the in-memory decoder would. Nesting depth is the same too (the
window sits under the same two levels). The decoding is in `_window_decode`.

Whatever this reader does not handle identically raises `_NotWindowed` (the caller then
takes the `readers._vally_stream` path, whose results are exact, slow): a document
whose events are not a top-level array, a repeated or escaped top-level key, a member
other than ``events`` above `MEMBER_LIMIT`, bytes msgspec refuses or decodes to another
shape (the in-memory path then reports them through its checked path), events that
`steps.events_readable` refuses. See docs/design/streaming.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import IO, Any, Final

from . import Source
from ._json import BOM
from ._jsonscan import scan, scan_pure
from ._regular import open_regular
from ._window_decode import _NotWindowed, decode_light, decode_member, decode_window
from .vally import _id_of

__all__ = ["_NotWindowed", "WindowedDocument", "scan", "scan_pure", "WINDOW", "MEMBER_LIMIT"]

#: bytes of events decoded at a time (whole items; one larger item is a window alone)
WINDOW: Final = 1024 * 1024
#: a top-level member other than ``events`` larger than this takes the slow path
MEMBER_LIMIT: Final = 64 * 1024 * 1024
_WS: Final = b" \t\r\n"


# --- the document -----------------------------------------------------------------------

_KEY: Final = re.compile(rb'"[^"\\]*"')


class _Blocks:
    """The file's bytes from a position on, a block at a time."""

    def __init__(self, fh: IO[bytes], block: int) -> None:
        self.fh = fh
        self.block = block
        self.buf = b""
        self.pos = 0
        self.base = 0  # the file offset of buf[0]

    def more(self) -> bool:
        """Drop what was consumed (before ``pos``) and read one more block: at least as
        many bytes as are kept, so that one long value (a 64 MiB string), which keeps
        everything from its start, is copied a bounded number of times per byte (each
        read doubles the buffer), not once per block (quadratic: issue 30, row 7)."""
        chunk = self.fh.read(max(self.block, len(self.buf) - self.pos))
        if not chunk:
            return False
        self.buf = self.buf[self.pos:] + chunk
        self.base += self.pos
        self.pos = 0
        return True

    def skip_ws(self) -> int:
        """The next byte after whitespace (-1 at the end of the file)."""
        while True:
            buf = self.buf
            pos = self.pos
            n = len(buf)
            while pos < n and buf[pos] in _WS:
                pos += 1
            self.pos = pos
            if pos < n:
                return buf[pos]
            if not self.more():
                return -1


class WindowedDocument:
    """A large single-trajectory document, read in passes of event windows.

    ``windows()`` is one pass: (index of the window's first event, its events) in order,
    then the rest of the document is checked; afterwards ``id`` is the trajectory's id.
    Raises `_NotWindowed` (see the module) or `OSError`. A pass after a complete one reads
    the windows where the first found them (no scanning, no other member).
    ``windows(light=True)`` decodes only the events' types, call ids and results (a
    pass that needs nothing else; the events are not checked, a later full pass is).
    """

    def __init__(self, source: Source, window: int | None = None, block: int | None = None
                 ) -> None:
        assert source.path is not None
        self.source = source
        self.path = source.path
        self.window = window = window if window is not None else WINDOW
        self.block = block if block is not None else max(window // 2, 64 * 1024)
        self.id: str | None = None
        #: (file offset, end, first event) of each window, once a pass was complete
        self._cuts: list[tuple[int, int, int]] | None = None

    def windows(self, light: bool = False) -> Iterator[tuple[int, list[Any]]]:
        decode = decode_light if light else decode_window
        with open_regular(self.path) as fh:
            if self._cuts is not None:
                for a, b, first in self._cuts:
                    fh.seek(a)
                    yield first, decode(fh.read(b - a))
                return
            cuts: list[tuple[int, int, int]] = []
            yield from self._pass(fh, decode, cuts)
            self._cuts = cuts

    def _pass(self, fh: IO[bytes], decode: Callable[[bytes], list[Any]],
              cuts: list[tuple[int, int, int]]) -> Iterator[tuple[int, list[Any]]]:
        src = _Blocks(fh, self.block)
        if not src.more():
            raise _NotWindowed("empty")
        if src.buf.startswith(BOM):
            src.pos = 3
        if src.skip_ws() != 0x7B:
            raise _NotWindowed("not an object")
        src.pos += 1
        seen: set[bytes] = set()
        wire_id: Any = None
        events = False
        while True:
            c = src.skip_ws()
            if c == 0x7D and not seen:
                src.pos += 1
                break
            key = self._key(src)
            if key in seen:
                raise _NotWindowed("repeated key")
            seen.add(key)
            if src.skip_ws() != 0x3A:
                raise _NotWindowed("no colon")
            src.pos += 1
            if key == b'"events"':
                if src.skip_ws() != 0x5B:
                    raise _NotWindowed("events is not an array")
                src.pos += 1
                yield from self._events(src, decode, cuts)
                events = True
            else:
                value = self._value(src)
                wire = decode_member(key, value)
                if key == b'"id"':
                    wire_id = wire.id
            c = src.skip_ws()
            src.pos += 1
            if c == 0x7D:
                break
            if c != 0x2C:
                raise _NotWindowed("bad separator")
        if src.skip_ws() != -1:
            raise _NotWindowed("trailing bytes")
        if not events:
            raise _NotWindowed("no events")
        self.id = _id_of(wire_id)

    @staticmethod
    def _key(src: _Blocks) -> bytes:
        while True:
            m = _KEY.match(src.buf, src.pos)
            if m is not None:
                src.pos = m.end()
                return m.group()
            # a key cut by the block's end, or one with an escape (not handled here)
            if b'"' in src.buf[src.pos + 1:] or not src.more():
                raise _NotWindowed("key")

    def _value(self, src: _Blocks) -> bytes:
        """The bytes of one member's value, up to the comma or brace after it."""
        start = src.pos
        state = (0, 0, 0)
        scanned = start
        while True:
            pos, d, s, e, _ = scan(src.buf, scanned, *state, 1)
            if pos < len(src.buf):
                value = src.buf[start:pos]
                src.pos = pos
                return value
            if pos - start > MEMBER_LIMIT:
                raise _NotWindowed("large member")
            state = (d, s, e)
            consumed = start
            src.pos = consumed
            if not src.more():
                raise _NotWindowed("truncated")
            scanned = pos - consumed
            start = 0

    def _events(self, src: _Blocks, decode: Callable[[bytes], list[Any]],
                cuts: list[tuple[int, int, int]]) -> Iterator[tuple[int, list[Any]]]:
        """The windows of the events array (``src`` just after its ``[``)."""
        first_event = 0
        start = src.pos
        scanned = start
        state = (0, 0, 0)
        while True:
            pos, d, s, e, last = scan(src.buf, scanned, *state, 0)
            if pos < len(src.buf):  # the array's end
                if src.buf[pos] != 0x5D:
                    raise _NotWindowed("events")
                got = decode(src.buf[start:pos])
                src.pos = pos + 1
                if got:
                    cuts.append((src.base + start, src.base + pos, first_event))
                    yield first_event, got
                return
            state = (d, s, e)
            if last >= 0 and last - start >= self.window:
                got = decode(src.buf[start:last])
                cuts.append((src.base + start, src.base + last, first_event))
                yield first_event, got
                first_event += len(got)
                start = last + 1
            src.pos = start
            if not src.more():
                raise _NotWindowed("truncated")
            scanned = pos - start
            start = 0


def windowed_document(source: Source) -> WindowedDocument | None:
    """The document as event windows, when it can be (a file starting with ``{``); whether
    it reads to the end is only known after a pass."""
    if source.path is None:
        return None
    return WindowedDocument(source)
