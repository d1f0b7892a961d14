"""Canonical JSON bytes: the deep equality of spec §3 turned into byte equality.

Two JSON values are equal for the grader exactly when their canonical bytes are equal:
object keys are sorted, integral floats are written as integers (``1.0`` equals ``1``),
booleans stay booleans (``true`` is not ``1``), strings compare exactly (lone surrogates
included). See ``docs/design/canonical-json.md`` for the reasons.

Values arrive either as Python objects (from ``grade(dict)`` or a reader) or as
``msgspec.Raw`` slices of the input file, decoded only when a match mode needs them.
How numbers compare is `_jsonnumbers`.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

import msgspec

from ._jsonnumbers import (
    LONG_INTEGER,
    NAN,
    NEG_INF,
    POS_INF,
    SAFE_INTEGER,
    TOKENS,
    as_double,
    canon_int,
    canonical_float,
    float_literal,
    json_int,
)
from .errors import MalformedValueError

__all__ = ["canonical_bytes", "is_empty", "is_blank", "decode_value", "normalize",
           "float_literal", "observation_bytes", "SAFE_INTEGER", "MalformedValueError", "json_int",
           "MAX_DEPTH", "comparison_value", "normalized_bytes", "ES_WHITESPACE"]

#: WhiteSpace and LineTerminator of ECMA-262 (what \s and String.prototype.trim use).
#: Here, not in `toolmatch` (which translates ``tools`` patterns and uses it too): a
#: grader without ``tools`` never imports the translator (start-up is measured).
ES_WHITESPACE: Final = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                        "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def is_blank(text: str) -> bool:
    """Whether a string is empty once ECMAScript's ``trim()`` is applied (its white space
    and line terminators, not Python's: U+FEFF is blank, U+001C and U+0085 are not).

    >>> is_blank(" \\ufeff\\n"), is_blank("\\x1c"), is_blank("x")
    (True, False, False)
    """
    return not text.strip(ES_WHITESPACE)


#: how deep `normalize` follows nested values (deeper, or a value that contains itself:
#: RecursionError, reported as "nested too deeply")
MAX_DEPTH: Final = 10_000

_DECODER: Final = msgspec.json.Decoder(float_hook=float_literal)


def _plain_string(raw: bytes) -> bytes | None:
    """The text of a raw JSON string that decoding would not change (ASCII, no escapes:
    its bytes are already its UTF-8), else None."""
    if raw[:1] == b'"' and raw.isascii() and b"\\" not in raw:
        return raw[1:-1]
    return None


#: Decodes Raw slices for comparison only (never shown): values come out normalized.
_CANON_DECODER: Final = msgspec.json.Decoder(float_hook=canonical_float)
_ENCODE: Final = msgspec.json.Encoder(order="sorted").encode


def _stdlib(raw: bytes, err: Exception, parse_int: Any, parse_float: Any) -> Any:
    """msgspec refuses integers past 64 bits: the standard library reads them."""
    try:
        return json.loads(raw.decode("utf-8"), parse_int=parse_int, parse_float=parse_float)
    except (ValueError, RecursionError):
        raise MalformedValueError(str(err)) from None


def decode_value(value: Any) -> Any:
    """A Python value for a JSON value that may still be a ``msgspec.Raw`` slice."""
    if isinstance(value, msgspec.Raw):
        try:
            return _DECODER.decode(value)
        except (msgspec.DecodeError, ValueError) as err:
            return _stdlib(bytes(value), err, json_int, float_literal)
    return value


def _decode_raw(raw: bytes) -> Any:
    try:
        return _CANON_DECODER.decode(raw)
    except (msgspec.DecodeError, ValueError) as err:
        value = _stdlib(raw, err, canon_int, canonical_float)
        return normalize(value)


_JSON_SCALARS: Final = (str, int, float, type(None))


def _needs_normalizing(value: Any) -> bool:
    """Whether `_norm` must rebuild ``value``; raises `MalformedValueError` for a value
    that is not JSON and RecursionError for one nested deeper than `MAX_DEPTH` (a dict or
    list that contains itself included: it would otherwise be walked for ever)."""
    # Iterative so that deeply nested values never hit the recursion limit here.
    stack = [(value, 0)]
    needs = False
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item) or item.is_integer():
                needs = True
        elif isinstance(item, int):
            if not isinstance(item, bool) and not -SAFE_INTEGER <= item <= SAFE_INTEGER:
                needs = True
        elif isinstance(item, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                raise RecursionError("a value nested too deeply (or containing itself)")
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str):
                        raise MalformedValueError(
                            f"an object key must be a string (got {type(key).__name__})")
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
        elif not isinstance(item, (*_JSON_SCALARS, msgspec.Raw)):
            # bytes would be written as base64 text and equal it; sets, dates and
            # objects are not JSON either
            raise MalformedValueError(f"{type(item).__name__} is not a JSON value")
    return needs


def _norm(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -SAFE_INTEGER <= value <= SAFE_INTEGER else as_double(value)
    if isinstance(value, float):
        if math.isnan(value):
            return NAN
        if math.isinf(value):
            return POS_INF if value > 0 else NEG_INF
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
        value = _decode_raw(raw)
        if isinstance(value, str):
            return b"s" + value.encode("utf-8", "surrogatepass")
        return b"j" + _encode(normalize(value) if LONG_INTEGER.search(raw) else value)
    return b"j" + _encode(normalize(value))


def _encode(value: Any) -> bytes:
    try:
        return _ENCODE(value)
    except UnicodeEncodeError:
        # Lone surrogates: msgspec refuses them. Equal values always take this same path,
        # so a different (ASCII-escaped) spelling here cannot make equal values differ.
        # The standard library writes non-finite floats as the same bare words.
        return b"u" + json.dumps(
            _floats(value), sort_keys=True, ensure_ascii=True, separators=(",", ":")
        ).encode("ascii")
    except (TypeError, msgspec.EncodeError) as err:
        raise MalformedValueError(str(err)) from None


def _floats(value: Any) -> Any:
    """The non-finite tokens turned back into floats (for the standard library)."""
    if isinstance(value, msgspec.Raw):
        return TOKENS.get(bytes(value), value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


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
        decoded = _decode_raw(raw)
        if isinstance(decoded, str):
            return None if is_blank(decoded) else b"s" + decoded.encode("utf-8", "surrogatepass")
        if decoded is None or (isinstance(decoded, (list, dict)) and not decoded):
            return None
        return b"j" + _encode(normalize(decoded) if LONG_INTEGER.search(raw) else decoded)
    if is_empty(value):
        return None
    return canonical_bytes(value)


def is_empty(value: Any) -> bool:
    """Whether an observation is empty (spec §1): null, a blank string, ``[]`` or ``{}``.

    >>> [is_empty(v) for v in (None, "  \\n", [], {}, 0, "x")]
    [True, True, True, True, False, False]
    """
    value = decode_value(value)
    if value is None:
        return True
    if isinstance(value, str):
        return is_blank(value)
    if isinstance(value, (list, tuple, dict)):
        return len(value) == 0
    return False


def comparison_value(raw: msgspec.Raw) -> Any:
    """A raw JSON slice decoded for comparison: already normalized, so that rewriting its
    strings keeps it so and `normalized_bytes` of it is `canonical_bytes` (without a
    second walk over the value).

    >>> v = comparison_value(msgspec.Raw(b'{"a": 2.0, "b": "x"}'))
    >>> v, normalized_bytes(v) == canonical_bytes(msgspec.Raw(b'{"b": "x", "a": 2}'))
    ({'a': 2, 'b': 'x'}, True)
    """
    data = bytes(raw)
    decoded = _decode_raw(data)
    return normalize(decoded) if LONG_INTEGER.search(data) else decoded


def normalized_bytes(value: Any) -> bytes:
    """`canonical_bytes` of a value that is already normalized (see `comparison_value`)."""
    if isinstance(value, str):
        return b"s" + value.encode("utf-8", "surrogatepass")
    return b"j" + _encode(value)
