"""A set of short digests that saves as one byte string (for state kept between calls).

The hook's saved state must cost what was appended to the log, not what the log holds:
a ``set[bytes]`` of 40,000 digests takes milliseconds to encode and decode at every call,
one byte string of them is copied. A new mark is looked up with an aligned ``find`` over
that string (memchr speed); a call that looks up many marks (a first read of a long log)
builds the set once instead of scanning the string each time.
"""

from __future__ import annotations

from typing import Final

import msgspec

try:
    # The C module behind hashlib.blake2b: importing hashlib also loads OpenSSL's
    # _hashlib, at every hook call (start-up is measured in bench/RESULTS.md).
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["Marks", "mark"]

#: Bytes per mark.
SIZE: Final = 8
#: Lookups answered by scanning the string before the set is built.
_SCANS: Final = 64


def mark(text: str) -> bytes:
    """The 8-byte digest of ``text`` (equal texts, equal marks)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=SIZE).digest()


class Marks(msgspec.Struct, dict=True):
    """A set of `mark` digests, saved as their concatenation (``data``).

    >>> m = Marks()
    >>> m.add(mark("a")); mark("a") in m, mark("b") in m, len(m)
    (True, False, 1)
    >>> msgspec.msgpack.decode(msgspec.msgpack.encode(m), type=Marks) == m
    True
    """

    data: bytearray = msgspec.field(default_factory=bytearray)

    def __len__(self) -> int:
        return len(self.data) // SIZE

    def __contains__(self, item: bytes) -> bool:
        found = self.__dict__.get("_set")
        if found is None:
            scans = self.__dict__.get("_scans", 0) + 1
            self.__dict__["_scans"] = scans
            if scans <= _SCANS:
                return self._scan(item)
            data = bytes(self.data)
            found = self.__dict__["_set"] = {data[i:i + SIZE]
                                            for i in range(0, len(data), SIZE)}
        return item in found

    def _scan(self, item: bytes) -> bool:
        data = self.data
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
        found = self.__dict__.get("_set")
        if found is not None:
            found.update(items)

    def add(self, item: bytes) -> None:
        """Add ``item`` (the caller has checked that it is not in the set yet)."""
        self.data += item
        found = self.__dict__.get("_set")
        if found is not None:
            found.add(item)
