"""Character sets of ECMAScript patterns (`core.toolmatch`): sorted, disjoint,
non-adjacent inclusive ranges of UTF-16 code units, the class escapes, and case folding
by the spec's ``Canonicalize``. No I/O here.

>>> _contains(_WORD, ord("_")), _contains(_DIGIT, ord("١"))
(True, False)
"""

from __future__ import annotations

from typing import Final

from ..canonical import ES_WHITESPACE
from ._es_casetable import canonical_units

MAX_UNIT: Final = 0xFFFF



Ranges = tuple[tuple[int, int], ...]


def _normalize(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_UNIT:
        out.append((nxt, MAX_UNIT))
    return tuple(out)


def _contains(ranges: Ranges, unit: int) -> bool:
    for lo, hi in ranges:
        if unit < lo:
            return False
        if unit <= hi:
            return True
    return False


_DIGIT: Final = ((0x30, 0x39),)
_WORD: Final = _normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
_SPACE: Final = _normalize([(ord(c), ord(c)) for c in ES_WHITESPACE])
_LINE_TERMINATORS: Final = _normalize([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)])
_DOT: Final = _negate(_LINE_TERMINATORS)
_ALL: Final = ((0, MAX_UNIT),)
_CLASS_ESCAPES: Final = {"d": _DIGIT, "D": _negate(_DIGIT), "w": _WORD, "W": _negate(_WORD),
                         "s": _SPACE, "S": _negate(_SPACE)}

_CANON: list[int] | None = None


def _canon_table() -> list[int]:
    """Canonicalize(ch) of ECMA-262 (non-Unicode, ignoreCase) for every code unit, from
    the pinned Unicode 17 table of `core.es_casetable` (not the running Python's)."""
    global _CANON
    if _CANON is None:
        _CANON = canonical_units()
    return _CANON


_SAME_CANON: dict[int, list[int]] | None = None


def _same_canon() -> dict[int, list[int]]:
    """Canonical value -> every code unit with that value (for units whose class is not
    just themselves)."""
    global _SAME_CANON
    if _SAME_CANON is None:
        groups: dict[int, list[int]] = {}
        for unit, value in enumerate(_canon_table()):
            groups.setdefault(value, []).append(unit)
        _SAME_CANON = {k: v for k, v in groups.items() if len(v) > 1 or v[0] != k}
    return _SAME_CANON


def _case_closure(ranges: Ranges) -> Ranges:
    """Every code unit whose Canonicalize equals that of a member (what ``i`` matches)."""
    canon = _canon_table()
    size = sum(hi - lo + 1 for lo, hi in ranges)
    if size <= 512:  # the common case (letters, short ranges): look the few units up
        same = _same_canon()
        out = list(ranges)
        for lo, hi in ranges:
            for unit in range(lo, hi + 1):
                for other in same.get(canon[unit], ()):
                    out.append((other, other))
        return _normalize(out)
    keys = set()
    for lo, hi in ranges:
        keys.update(canon[lo:hi + 1])
    found: list[tuple[int, int]] = []
    start = -1
    for unit in range(MAX_UNIT + 1):
        if canon[unit] in keys:
            if start < 0:
                start = unit
        elif start >= 0:
            found.append((start, unit - 1))
            start = -1
    if start >= 0:
        found.append((start, MAX_UNIT))
    return tuple(found)


def to_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (lone surrogates kept as they are).

    >>> to_units("a😀")
    [97, 55357, 56832]
    """
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]
