"""JSON numbers as the grader compares them: as the doubles JavaScript's ``JSON.parse``
makes of them (integral floats are integers, ``1.0`` equals ``1``; integers beyond
`SAFE_INTEGER` are rounded to a double), with non-finite values as tokens no JSON value
can spell (`canonical` uses them; docs/design/canonical-json.md)."""

from __future__ import annotations

import math
import re
from typing import Any, Final

import msgspec

__all__ = ["SAFE_INTEGER", "LONG_INTEGER", "NAN", "POS_INF", "NEG_INF", "TOKENS", "as_double",
           "float_literal", "canonical_float", "json_int", "canon_int"]

#: the largest integer a double holds exactly: beyond it, numbers compare as the doubles
#: that JavaScript's JSON.parse makes of them (9007199254740993 equals 9007199254740992)
SAFE_INTEGER: Final = 2**53
#: an integer literal that may exceed SAFE_INTEGER (16 digits or more) in raw JSON
LONG_INTEGER: Final = re.compile(rb"\d{16}")


def as_double(value: int) -> Any:
    """An integer as the double JavaScript makes of it (exact ints stay as they are)."""
    try:
        rounded = float(value)
    except OverflowError:
        return POS_INF if value > 0 else NEG_INF
    return int(rounded)


# Non-finite numbers (NaN, infinities, overflowing literals such as 1e309) have no JSON
# spelling, so they are encoded as the bare words NaN, Infinity and -Infinity (inserted
# verbatim as Raw): no JSON value's canonical text can contain them outside a string, so
# no object (such as {"$maxrepeat$nonfinite": "NaN"}) or string can equal them. Equal
# doubles stay equal: 1e309 equals 1e400 and Infinity, NaN equals NaN (as the monitor and
# a re-read must agree), -Infinity equals neither.
NAN: Final = msgspec.Raw(b"NaN")
POS_INF: Final = msgspec.Raw(b"Infinity")
NEG_INF: Final = msgspec.Raw(b"-Infinity")
TOKENS: Final = {b"NaN": math.nan, b"Infinity": math.inf, b"-Infinity": -math.inf}
def float_literal(text: str) -> Any:
    """A JSON float literal as a number; integral finite values become ints (1.0 == 1).

    >>> float_literal("2.0"), float_literal("2.5")
    (2, 2.5)
    """
    value = float(text)
    if math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def canonical_float(text: str) -> Any:
    """As `float_literal`, but an overflowing literal (``1e400``) becomes the same token that
    `normalize` gives infinity, not a float that the encoder would write as ``null``."""
    value = float(text)
    if value.is_integer():  # False for infinities
        return int(value)
    if math.isinf(value):
        return POS_INF if value > 0 else NEG_INF
    return value


def json_int(text: str) -> Any:
    """A JSON integer literal as a number without Python's 4,300-digit limit: a longer one
    is far beyond any double, so it is the infinity JavaScript's JSON.parse makes of it.

    >>> json_int("12"), json_int("-" + "9" * 5000)
    (12, -inf)
    """
    if len(text) > 4000:
        return float(text)
    return int(text)


def canon_int(text: str) -> Any:
    value = json_int(text)
    if isinstance(value, float):
        return POS_INF if value > 0 else NEG_INF
    return value
