"""A set of short digests that saves as one byte string (for state kept between calls).

The hook's saved state must cost what was appended to the log, not what the log holds:
a ``set[bytes]`` of 40,000 digests takes milliseconds to encode and decode at every call,
one byte string of them is copied. A new mark is looked up by scanning that string's
aligned 16-byte words (the native extension's ``has_mark``, ~10 GB/s; an aligned
``find`` on the pure path, ~2 GB/s); a call that looks up many marks (a first read of a
long log) builds the set once instead of scanning the string each time.

A mark is 16 bytes (issue 30: a check whose equality decides a verdict must not be
forged cheaply): a log's author chooses its call ids, and with 8-byte digests a birthday
search (~2^32 BLAKE2b calls, minutes) finds two ids with one mark, which would make a
new call look already logged, or a reused id look new. 16 bytes take ~2^64.

A hook call saves its state at every tool call, and the marks grow with the session
(~48 bytes a call): written inside the state they would make every call write the whole
session's marks again. So a state that holds marks is encoded with `encode_state` and
decoded with `decode_state`: inside a hook call (a `Spill` made current by the guard's
session, ``maxrepeat.guards.statefile``) a set of marks is saved as a reference
``[name, epoch, length]`` to a side file that only ever grows by what the call added,
and read back from the bytes the session verified; anywhere else (and for a small set
that was never spilled) it is saved inline, as its bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, TypeVar

import msgspec

from ..core import accel

try:
    # The C module behind hashlib.blake2b: importing hashlib also loads OpenSSL's
    # _hashlib, at every hook call (start-up is measured in bench/RESULTS.md).
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["Marks", "mark", "Spill", "encode_state", "decode_state", "spilling"]

_T = TypeVar("_T")

#: Bytes per mark: 16, so that no log can hold two ids with one mark (2^64 birthday work).
SIZE: Final = 16
#: Lookups answered by scanning the string before the set is built.
_SCANS: Final = 64


def mark(text: str) -> bytes:
    """The 16-byte digest of ``text`` (equal texts, equal marks)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=SIZE).digest()


class Marks:
    """A set of `mark` digests, saved as their concatenation (``data``).

    >>> m = Marks()
    >>> m.add(mark("a")); mark("a") in m, mark("b") in m, len(m)
    (True, False, 1)
    >>> decode_state(encode_state(m, "doc"), Marks) == m
    True
    """

    __slots__ = ("data", "origin", "_set", "_scans")

    def __init__(self, data: bytes | bytearray = b"") -> None:
        self.data = bytearray(data)
        #: (name, epoch, length) of the side file it was read from (`Spill`): what it
        #: is known to extend, so that saving it again appends only what it gained
        self.origin: tuple[str, str, int] | None = None
        self._set: set[bytes] | None = None
        self._scans = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Marks) and self.data == other.data

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Marks({len(self)} marks)"

    def __len__(self) -> int:
        return len(self.data) // SIZE

    def copy(self) -> Marks:
        """A copy that still extends the same side file (see `origin`)."""
        other = Marks(self.data)
        other.origin = self.origin
        return other

    def __contains__(self, item: bytes) -> bool:
        found = self._set
        if found is None:
            self._scans += 1
            if self._scans <= _SCANS:
                return self._scan(item)
            data = bytes(self.data)
            found = self._set = {data[i:i + SIZE] for i in range(0, len(data), SIZE)}
        return item in found

    def _scan(self, item: bytes) -> bool:
        data = self.data
        native = accel.native
        if native is not None and len(item) == SIZE:
            return bool(native.has_mark(data, item))
        at = data.find(item)
        while at >= 0:
            if at % SIZE == 0:
                return True
            at = data.find(item, at + 1)
        return False

    def extend(self, items: list[bytes]) -> None:
        """Add ``items`` (none of them in the set yet, all distinct)."""
        if not items:
            return
        self.data += b"".join(items)
        if self._set is not None:
            self._set.update(items)

    def add(self, item: bytes) -> None:
        """Add ``item`` (the caller has checked that it is not in the set yet)."""
        self.data += item
        if self._set is not None:
            self._set.add(item)


class Spill:
    """Where the marks of the states a hook call encodes go, and where the marks of the
    states it decodes come from: side files, one per set, named by the part of the state
    (``reader``, ``extra``) and the set's place in it (``reader.0``, ``reader.1``...).

    The bookkeeping only; the guard's session reads and verifies the files (`loaded`)
    before any state is decoded, and writes what is `pending` when it saves the state.
    A set read from a side file and saved again appends what it gained (``base`` is the
    length it was read at); any other set over `MIN` bytes starts a new ``epoch`` of its
    file (written whole). A reference names the epoch and the length, so a state is only
    ever decoded against the very bytes it was saved with.

    >>> sp = Spill()
    >>> with spilling(sp):
    ...     raw = encode_state([Marks(bytes(SIZE * 300))], "reader")
    >>> [(name, base, length) for name, (_, _, base, length) in sp.pending.items()]
    [('reader.0', 0, 4800)]
    """

    #: A set smaller than this, never spilled before, stays inline (a side file each for
    #: a few marks would cost more than it saves).
    MIN: Final = 4096

    def __init__(self) -> None:
        #: name -> (epoch, bytes) of the side files the session verified
        self.loaded: dict[str, tuple[str, bytes]] = {}
        #: name -> (epoch, marks, base, length): what to write when the state is saved
        self.pending: dict[str, tuple[str, Marks, int, int]] = {}
        #: the parts encoded by this call (their side files not in `pending` are stale)
        self.parts: set[str] = set()
        self._part = ""
        self._count = 0

    def begin(self, part: str) -> None:
        """A state of ``part`` is about to be encoded (it replaces an earlier one)."""
        prefix = part + "."
        for name in [n for n in self.pending if n.startswith(prefix)]:
            del self.pending[name]
        self.parts.add(part)
        self._part, self._count = part, 0

    def ref(self, marks: Marks) -> bytes | list[Any]:
        """How ``marks`` is written in the state: its bytes, or a reference."""
        name = f"{self._part}.{self._count}"
        self._count += 1
        origin = marks.origin
        if origin is None and len(marks.data) < self.MIN:
            return bytes(marks.data)
        size = len(marks.data)
        loaded = self.loaded.get(name, ("",))[0]
        if origin is not None and origin[0] == name and loaded == origin[1]:
            epoch, base = origin[1], origin[2]
        else:
            epoch, base = os.urandom(8).hex(), 0
        self.pending[name] = (epoch, marks, base, size)
        return [name, epoch, size]

    def get(self, ref: list[Any]) -> Marks:
        """The marks a reference names (`ValueError` when no verified file holds them)."""
        name, epoch, size = ref
        found = self.loaded.get(name)
        if found is None or found[0] != epoch or not 0 <= size <= len(found[1]) \
                or size % SIZE:
            raise ValueError(f"no verified side file for {name}")
        marks = Marks(found[1][:size])
        marks.origin = (name, epoch, size)
        return marks


_SPILL: ContextVar[Spill | None] = ContextVar("maxrepeat_spill", default=None)


@contextmanager
def spilling(spill: Spill) -> Iterator[Spill]:
    """Make ``spill`` where the states encoded and decoded in the block keep their marks."""
    token = _SPILL.set(spill)
    try:
        yield spill
    finally:
        _SPILL.reset(token)


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Marks):
        spill = _SPILL.get()
        return bytes(obj.data) if spill is None else spill.ref(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def _dec_hook(kind: type, obj: Any) -> Any:
    if kind is Marks:
        if isinstance(obj, (bytes, bytearray)):
            if len(obj) % SIZE:
                raise ValueError("marks of a partial length")
            return Marks(obj)
        spill = _SPILL.get()
        if spill is not None and isinstance(obj, list) and len(obj) == 3 \
                and isinstance(obj[0], str) and isinstance(obj[1], str) \
                and isinstance(obj[2], int):
            return spill.get(obj)
        raise ValueError("marks that cannot be read here")
    raise NotImplementedError(f"cannot decode {kind.__name__}")


_ENCODER: Final = msgspec.msgpack.Encoder(enc_hook=_enc_hook)


def encode_state(value: Any, part: str) -> bytes:
    """MessagePack of a state that may hold `Marks` (``part``: which part of the saved
    state it is, naming its side files when a `Spill` is current)."""
    spill = _SPILL.get()
    if spill is not None:
        spill.begin(part)
    return _ENCODER.encode(value)


def decode_state(data: bytes, kind: type[_T]) -> _T:
    """The state `encode_state` encoded (msgspec's errors when it does not decode)."""
    return msgspec.msgpack.decode(data, type=kind, dec_hook=_dec_hook)
