"""Observation mode of `windowed`: each call id's first result anywhere in the
document (spec §1), kept on disk. A first pass over the segments writes the first result
of every id that may span segments (a blocked Bloom filter over the ids: `bloom`) to a
temporary SQLite table (`FirstResults`); each segment then gets, for its calls' ids,
those results appended at its end, and its own results of those ids lose their id
(`FirstResults.substitute`), so the first result of each id in the segment is the
document's first. Event indices are unchanged. See docs/design/streaming.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from ..core import accel
from ..core.events import TOOL_CALL, TOOL_RESULT
from ..readers._windows import _NotWindowed
from .scratch import ScratchDB

__all__ = ["FirstResults", "SEEN_BYTES", "SPANS_BYTES", "bloom", "bloom_pure", "bloom_events",
           "structs"]

_IN_LIST: Final = 500  # ids per SELECT (SQLite's limit on parameters is far above)

# Most call ids live in one segment (the call and its result a few events apart): there,
# the segment's own first result is the document's, and the segment is graded as it is.
# The others are found by two Bloom filters (a false "yes" costs a little exact work, a
# "no" is always true): ``seen`` holds every id of the segments read so far, ``spans``
# the ids met again in a later segment. The first pass stores the results whose id was
# seen in an earlier segment; the grading pass stores the results whose id spans
# segments, then gives each call whose id spans segments the earliest stored result
# (by event index) in place of the segment's own. Every result of such an id is stored by
# one pass or the other (those in segments up to the call's by the grading pass, those
# after it by the first pass), so the earliest stored is the document's first.

#: bytes of the two Bloom filters (powers of two): 8 MiB keep false hits below 1e-3 at
#: two million distinct ids (each only costs a little exact work)
SEEN_BYTES: Final = 8 * 1024 * 1024
SPANS_BYTES: Final = 1024 * 1024


class FirstResults(ScratchDB):
    """The first result of every call id that spans segments, in a temporary SQLite
    table (see the module's doc)."""

    def __init__(self) -> None:
        super().__init__("results")
        self.db.execute("CREATE TABLE results (cid TEXT PRIMARY KEY, idx INTEGER NOT NULL,"
                        " ans BLOB) WITHOUT ROWID")
        self.seen = bytearray(SEEN_BYTES)
        self.spans = bytearray(SPANS_BYTES)

    @classmethod
    def fill(cls, segmented: Iterable[tuple[int, list[Any]]]) -> FirstResults:
        """The first pass over the document's segments (`windowed.segments`)."""
        import sqlite3

        try:
            self = cls()
        except (sqlite3.Error, OSError):
            raise _NotWindowed("no database") from None
        try:
            for offset, events in segmented:
                hits = bloom_events(self.seen, events, True)
                if hits:
                    bloom(self.spans, list({_id_of(events[i]) for i in hits}), True)
                    self._store(offset, events, hits)
            self.db.commit()
        except (sqlite3.Error, MemoryError, UnicodeEncodeError):
            self.close()
            raise _NotWindowed("database") from None
        except BaseException:
            self.close()
            raise
        return self

    def _store(self, offset: int, events: list[Any], at: list[int]) -> None:
        """Store the results among ``events[at]``: the events a Bloom filter answered
        "yes" for, which are all those with such an id (the answer depends on the id)."""
        rows = [(_id_of(events[j]), offset + j, events[j].data.result) for j in at
                if events[j].type == TOOL_RESULT]
        if rows:  # the earliest result of an id wins, whichever pass stored it
            self.db.executemany(
                "INSERT INTO results VALUES (?, ?, ?) ON CONFLICT(cid) DO UPDATE SET"
                " idx = excluded.idx, ans = excluded.ans WHERE excluded.idx < results.idx",
                rows)

    def substitute(self, offset: int, events: list[Any]) -> list[Any]:
        """``events`` as the grader reads them: unchanged, unless a call's id spans
        segments; then its results here lose their id, and its first result is appended."""
        import sqlite3

        hits = bloom_events(self.spans, events, False)
        if not hits:
            return events
        try:
            self._store(offset, events, hits)
            wanted = list({_id_of(events[j]) for j in hits if events[j].type == TOOL_CALL})
            if not wanted:
                return events
            firsts: list[tuple[str, Any]] = []
            for a in range(0, len(wanted), _IN_LIST):
                part = wanted[a:a + _IN_LIST]
                query = ("SELECT cid, ans FROM results WHERE cid IN ("
                         + ",".join("?" * len(part)) + ")")
                firsts.extend(self.db.execute(query, part))
        except (sqlite3.Error, UnicodeEncodeError):
            raise _NotWindowed("database") from None
        gone = set(wanted)
        out = list(events)
        for j in hits:
            if events[j].type == TOOL_RESULT and _id_of(events[j]) in gone:
                out[j] = _BARE
        for cid, ans in firsts:
            out.append(_Event(TOOL_RESULT, _Data(
                tool_call_id=cid, result=None if ans is None else msgspec.Raw(ans))))
        return out



def _id_of(event: Any) -> str | None:
    """An event's call id (None when it has none)."""
    data = event.data
    cid = data.tool_call_id if data is not None else None
    return cid if isinstance(cid, str) else None


def bloom_pure(bits: bytearray, keys: Sequence[str | None], add: bool) -> list[int]:
    """Indices of ``keys`` (None: no key) whose bits were all set before this call (a
    blocked Bloom filter over ``hash()``, three probes in one 64-byte block); with ``add``,
    every key's bits are then set.

    >>> bits = bytearray(64)
    >>> bloom_pure(bits, ["a", "b"], True), bloom_pure(bits, ["b", "c"], False)[:1]
    ([], [0])
    """
    nbits = len(bits) * 8
    block = min(nbits, 512)  # the probes of a key fall in one 64-byte block
    probes = []
    hits = []
    for i, key in enumerate(keys):
        if key is None:
            continue
        a = hash(key) & 0xFFFFFFFFFFFFFFFF
        b = (a * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        base = (a & (nbits // block - 1)) * block
        ps = [base + ((b >> (9 * j + 10)) & (block - 1)) for j in range(3)]
        probes.append(ps)
        if all(bits[p >> 3] & (1 << (p & 7)) for p in ps):
            hits.append(i)
    if add:
        for ps in probes:
            for p in ps:
                bits[p >> 3] |= 1 << (p & 7)
    return hits


def bloom(bits: bytearray, keys: Sequence[str | None], add: bool) -> list[int]:
    """`bloom_pure`, by the native extension when it is active."""
    native = accel.native
    if native is not None and hasattr(native, "bloom"):
        found: list[int] = native.bloom(bits, keys, int(add))
        return found
    return bloom_pure(bits, keys, add)


def bloom_events(bits: bytearray, events: Sequence[Any], add: bool) -> list[int]:
    """`bloom` over the call id of each event (`_id_of`): indices of events."""
    native = accel.native
    if native is not None and hasattr(native, "bloom_events"):
        found: list[int] = native.bloom_events(bits, events, int(add))
        return found
    return bloom_pure(bits, [_id_of(e) for e in events], add)


def structs() -> tuple[Any, Any]:
    from ..readers.vally import _Data, _Event

    return _Data, _Event


_Data, _Event = structs()
_BARE: Final = _Event(TOOL_RESULT, _Data())
