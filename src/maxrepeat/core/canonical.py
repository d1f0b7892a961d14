"""Canonical JSON bytes: the deep equality of spec §3 turned into byte equality.

Two JSON values are equal for the grader exactly when their canonical bytes are equal:
object keys are sorted, integral floats are written as integers (``1.0`` equals ``1``),
booleans stay booleans (``true`` is not ``1``), strings compare exactly (lone surrogates
included). See ``docs/design/canonical-json.md`` for the reasons.

Values arrive either as Python objects (from ``grade(dict)`` or a reader) or as
``msgspec.Raw`` slices of the input file, decoded only when a match mode needs them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

import msgspec

from .toolmatch import ES_WHITESPACE

__all__ = ["canonical_bytes", "is_empty", "is_blank", "decode_value", "normalize",
           "float_literal", "observation_bytes", "SAFE_INTEGER"]

#: the largest integer a double holds exactly: beyond it, numbers compare as the doubles
#: that JavaScript's JSON.parse makes of them (9007199254740993 equals 9007199254740992)
SAFE_INTEGER: Final = 2**53
#: an integer literal that may exceed SAFE_INTEGER (16 digits or more) in raw JSON
_LONG_INTEGER: Final = re.compile(rb"\d{16}")


def is_blank(text: str) -> bool:
    """Whether a string is empty once ECMAScript's ``trim()`` is applied (its white space
    and line terminators, not Python's: U+FEFF is blank, U+001C and U+0085 are not).

    >>> is_blank(" \\ufeff\\n"), is_blank("\\x1c"), is_blank("x")
    (True, False, False)
    """
    return not text.strip(ES_WHITESPACE)


def _as_double(value: int) -> Any:
    """An integer as the double JavaScript makes of it (exact ints stay as they are)."""
    try:
        rounded = float(value)
    except OverflowError:
        return {"$maxrepeat$nonfinite": "Infinity" if value > 0 else "-Infinity"}
    return int(rounded)


def float_literal(text: str) -> Any:
    """A JSON float literal as a number; integral finite values become ints (1.0 == 1).

    >>> float_literal("2.0"), float_literal("2.5")
    (2, 2.5)
    """
    value = float(text)
    if math.isfinite(value) and value.is_integer():
        return int(value)
    return value


_DECODER: Final = msgspec.json.Decoder(float_hook=float_literal)


def _canonical_float(text: str) -> Any:
    """As `_float_hook`, but an overflowing literal (``1e400``) becomes the same token that
    `normalize` gives infinity, not a float that the encoder would write as ``null``."""
    value = float(text)
    if value.is_integer():  # False for infinities
        return int(value)
    if math.isinf(value):
        return {"$maxrepeat$nonfinite": "Infinity" if value > 0 else "-Infinity"}
    return value


def _plain_string(raw: bytes) -> bytes | None:
    """The text of a raw JSON string that decoding would not change (ASCII, no escapes:
    its bytes are already its UTF-8), else None."""
    if raw[:1] == b'"' and raw.isascii() and b"\\" not in raw:
        return raw[1:-1]
    return None


#: Decodes Raw slices for comparison only (never shown): values come out normalized.
_CANON_DECODER: Final = msgspec.json.Decoder(float_hook=_canonical_float)
_ENCODE: Final = msgspec.json.Encoder(order="sorted").encode


def decode_value(value: Any) -> Any:
    """A Python value for a JSON value that may still be a ``msgspec.Raw`` slice."""
    if isinstance(value, msgspec.Raw):
        return _DECODER.decode(value)
    return value


def _needs_normalizing(value: Any) -> bool:
    # Iterative so that deeply nested values never hit the recursion limit here.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item) or item.is_integer():
                return True
        elif isinstance(item, int) and not isinstance(item, bool) and \
                not -SAFE_INTEGER <= item <= SAFE_INTEGER:
            return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


_NAN: Final = {"$maxrepeat$nonfinite": "NaN"}


def _norm(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -SAFE_INTEGER <= value <= SAFE_INTEGER else _as_double(value)
    if isinstance(value, float):
        if math.isnan(value):
            return _NAN
        if math.isinf(value):
            return {"$maxrepeat$nonfinite": "Infinity" if value > 0 else "-Infinity"}
        if value.is_integer():
            return int(value)
        return value
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def normalize(value: Any) -> Any:
    """The value with integral floats made ints, non-finite floats made distinct tokens,
    and integers beyond 2**53 rounded to the double JavaScript would hold.

    >>> normalize({"a": [1.0, 2.5]})
    {'a': [1, 2.5]}
    >>> normalize(9007199254740993)
    9007199254740992
    """
    if _needs_normalizing(value):
        return _norm(value)
    return value


def canonical_bytes(value: Any) -> bytes:
    """The canonical encoding of a JSON value (or ``msgspec.Raw``).

    >>> canonical_bytes({"b": 1.0, "a": True}) == canonical_bytes({"a": True, "b": 1})
    True
    >>> canonical_bytes(True) == canonical_bytes(1)
    False
    """
    if isinstance(value, str):
        # Fast path for the commonest observation; the tag keeps it distinct from JSON text.
        return b"s" + value.encode("utf-8", "surrogatepass")
    if isinstance(value, msgspec.Raw):
        text = _plain_string(bytes(value))
        if text is not None:
            return b"s" + text
        raw = bytes(value)
        value = _CANON_DECODER.decode(raw)
        if isinstance(value, str):
            return b"s" + value.encode("utf-8", "surrogatepass")
        return b"j" + _encode(normalize(value) if _LONG_INTEGER.search(raw) else value)
    return b"j" + _encode(normalize(value))


def _encode(value: Any) -> bytes:
    try:
        return _ENCODE(value)
    except UnicodeEncodeError:
        # Lone surrogates: msgspec refuses them. Equal values always take this same path,
        # so a different (ASCII-escaped) spelling here cannot make equal values differ.
        return b"u" + json.dumps(
            value, sort_keys=True, ensure_ascii=True, separators=(",", ":")
        ).encode("ascii")


def observation_bytes(value: Any) -> bytes | None:
    """`canonical_bytes` of an observation, or None when it `is_empty` (a Raw slice is
    decoded once for both questions).

    >>> observation_bytes("  "), observation_bytes("ok")
    (None, b'sok')
    """
    if isinstance(value, str):
        return None if is_blank(value) else b"s" + value.encode("utf-8", "surrogatepass")
    if isinstance(value, msgspec.Raw):
        text = _plain_string(bytes(value))
        if text is not None:  # only spaces can be blank here: controls are escaped
            return b"s" + text if text.strip(b" ") else None
        raw = bytes(value)
        decoded = _CANON_DECODER.decode(raw)
        if isinstance(decoded, str):
            return None if is_blank(decoded) else b"s" + decoded.encode("utf-8", "surrogatepass")
        if decoded is None or (isinstance(decoded, (list, dict)) and not decoded):
            return None
        return b"j" + _encode(normalize(decoded) if _LONG_INTEGER.search(raw) else decoded)
    if is_empty(value):
        return None
    return canonical_bytes(value)


def is_empty(value: Any) -> bool:
    """Whether an observation is empty (spec §1): null, a blank string, ``[]`` or ``{}``.

    >>> [is_empty(v) for v in (None, "  \\n", [], {}, 0, "x")]
    [True, True, True, True, False, False]
    """
    if isinstance(value, msgspec.Raw):
        value = _DECODER.decode(value)
    if value is None:
        return True
    if isinstance(value, str):
        return is_blank(value)
    if isinstance(value, (list, tuple, dict)):
        return len(value) == 0
    return False
