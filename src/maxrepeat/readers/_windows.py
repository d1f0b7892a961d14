"""One large trajectory document read a window of events at a time, decoded exactly as
the in-memory reader decodes the whole (issue 17 item 3).

A pass reads the file in blocks and finds the items of the ``events`` array in the raw
bytes with a scanner that only tracks strings and brackets (`scan`: the native one when
built, else a regex loop). Each window of whole items is decoded by msgspec as the
document's own struct (``{"events":[...window...]}`` as `vally._Traj`), so every event
is the struct the in-memory path makes, checked the same way; every other top-level
member is decoded alone the same way (``{"key": value}`` as `vally._Traj`), so the whole
document is validated as the in-memory decoder would. Nesting depth is the same too (the
window sits under the same two levels).

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

import msgspec

from ..core import accel
from ..core.steps import events_readable
from . import Source
from ._json import BOM
from ._regular import open_regular
from .vally import _id_of, _Traj

__all__ = ["_NotWindowed", "WindowedDocument", "scan", "scan_pure", "WINDOW", "MEMBER_LIMIT"]

#: bytes of events decoded at a time (whole items; one larger item is a window alone)
WINDOW: Final = 1024 * 1024
#: a top-level member other than ``events`` larger than this takes the slow path
MEMBER_LIMIT: Final = 64 * 1024 * 1024
_WS: Final = b" \t\r\n"


class _NotWindowed(Exception):
    """This document must be read another way (see the module's docstring)."""


# --- the scanner ------------------------------------------------------------------------

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


# --- the document -----------------------------------------------------------------------

_DECODE_TRAJ: Final = msgspec.json.Decoder(_Traj).decode
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
        decode = _decode_light if light else _decode_window
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
                wire = _decode_member(key, value)
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


def _decode_window(items: bytes) -> list[Any]:
    try:
        wire = _DECODE_TRAJ(b'{"events":[' + items + b']}')
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _NotWindowed("window") from None
    events = wire.events
    if events is None or not events_readable(events):
        raise _NotWindowed("events")
    return events


class _LightData(msgspec.Struct, rename="camel", gc=False):
    tool_call_id: str | None = None
    result: msgspec.Raw = None  # type: ignore[assignment]


class _LightEvent(msgspec.Struct, gc=False):
    type: str
    data: _LightData | None = None


class _LightTraj(msgspec.Struct, gc=False):
    events: list[_LightEvent] | None = None


_DECODE_LIGHT: Final = msgspec.json.Decoder(_LightTraj).decode


def _decode_light(items: bytes) -> list[Any]:
    try:
        wire = _DECODE_LIGHT(b'{"events":[' + items + b']}')
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _NotWindowed("window") from None
    if wire.events is None:
        raise _NotWindowed("events")
    return wire.events


def _decode_member(key: bytes, value: bytes) -> _Traj:
    try:
        return _DECODE_TRAJ(b"{" + key + b":" + value + b"}")
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _NotWindowed("member") from None


def windowed_document(source: Source) -> WindowedDocument | None:
    """The document as event windows, when it can be (a file starting with ``{``); whether
    it reads to the end is only known after a pass."""
    if source.path is None:
        return None
    return WindowedDocument(source)
