"""A user's settings file read and written as strict JSON, its numbers kept as written.

``hook install`` edits files that agents parse with JavaScript's ``JSON.parse``: what it
writes must be JSON that parser takes, and everything but the guard's entries must mean
exactly what it meant. So:

* ``NaN``, ``Infinity`` and ``-Infinity`` (which Python's `json` accepts and writes) are
  refused when read: such a file is not JSON, and it is left unchanged;
* every number is kept as its original text (`Number`, `BigInt`): ``1e999`` is written
  back as ``1e999``, never as ``Infinity``, and ``0.10`` stays ``0.10``;
* a file nested too deep to read, or not UTF-8, is refused with its position;
* the line endings are the file's own (``\\r\\n`` stays ``\\r\\n``).

>>> value = loads("f", '{"a": 1e999, "b": [0.10, 12]}')
>>> dumps(value)
'{\\n  "a": 1e999,\\n  "b": [\\n    0.10,\\n    12\\n  ]\\n}\\n'
>>> same(value, loads("f", '{"b": [0.10, 12], "a": 1e999}'))
True
>>> loads("f", '{"a": NaN}')
Traceback (most recent call last):
...
ValueError: f:1:7: settings must be strict JSON (got NaN); left unchanged
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["Number", "BigInt", "loads", "decode", "dumps", "same"]

#: how deeply a settings file may nest (agents' settings nest a few levels; the copies
#: and comparisons install makes recurse)
MAX_DEPTH: Final = 100

_TOO_DEEP: Final = object()

#: the tokens strict JSON does not have, outside strings (to say where one is)
_TOKENS: Final = re.compile(r'"(?:[^"\\]|\\.)*"|(NaN|-?Infinity)', re.S)


class Number(float):
    """A JSON number with a fraction or exponent, as written (``text``)."""

    text: str

    def __new__(cls, text: str) -> Number:
        self = super().__new__(cls, text)
        self.text = text
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Number, (self.text,))


class BigInt(float):
    """A JSON integer longer than Python converts (4,300 digits), as written."""

    text: str

    def __new__(cls, text: str) -> BigInt:
        self = super().__new__(cls, float(text))
        self.text = text
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (BigInt, (self.text,))


def _int(text: str) -> Any:
    return BigInt(text) if len(text) > 4000 else int(text)


class _Constant(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


def _where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def decode(path: object, raw: bytes) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped); `ValueError` naming
    ``path`` and the first bad byte's place otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = raw[:exc.start].decode("utf-8", "replace")
        raise ValueError(f"{path}:{_where(text, len(text))}: settings must be UTF-8 text "
                         f"(got byte 0x{raw[exc.start]:02x}); left unchanged") from None


def loads(path: object, text: str) -> Any:
    """``text`` parsed as strict JSON (`ValueError` naming ``path`` otherwise)."""
    try:
        value = json.loads(text, parse_float=Number, parse_int=_int,
                           parse_constant=_refuse_constant)
    except _Constant as exc:
        at = next((m.start(1) for m in _TOKENS.finditer(text) if m.group(1)), 0)
        raise ValueError(f"{path}:{_where(text, at)}: settings must be strict JSON "
                         f"(got {exc}); left unchanged") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: settings must be JSON "
                         f"(got {exc.msg}); left unchanged") from None
    except RecursionError:
        value = _TOO_DEEP
    if value is _TOO_DEEP or _deeper(value, MAX_DEPTH):
        raise ValueError(f"{path}:1:1: settings must be JSON nested at most {MAX_DEPTH} "
                         f"levels deep (got more); left unchanged") from None
    return value


def _deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` levels deep."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                  else item))
    return False


def _parts(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, (Number, BigInt)):
        out.append(value.text)
    elif isinstance(value, dict) and value:
        inner = indent + "  "
        items = [f"\n{inner}{json.dumps(str(k), ensure_ascii=False)}: " for k in value]
        out.append("{")
        for i, (head, item) in enumerate(zip(items, value.values(), strict=True)):
            out.append(head if not i else "," + head)
            _parts(item, inner, out)
        out.append(f"\n{indent}}}")
    elif isinstance(value, list) and value:
        inner = indent + "  "
        out.append("[")
        for i, item in enumerate(value):
            out.append(f"\n{inner}" if not i else f",\n{inner}")
            _parts(item, inner, out)
        out.append(f"\n{indent}]")
    elif isinstance(value, float):
        out.append(json.dumps(value, allow_nan=False))
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def dumps(value: Any, newline: str = "\n") -> str:
    """``value`` as JSON indented by two spaces, a newline at the end, numbers as read
    (`ValueError` for a float that is not finite: never written)."""
    out: list[str] = []
    _parts(value, "", out)
    text = "".join(out) + "\n"
    return text.replace("\n", newline) if newline != "\n" else text


def _key(value: Any) -> Any:
    """``value`` with each item tagged by its JSON type (numbers by their text)."""
    if isinstance(value, (Number, BigInt)):
        return ["n", value.text]
    if isinstance(value, dict):
        return ["o", {k: _key(v) for k, v in value.items()}]
    if isinstance(value, list):
        return ["a", [_key(v) for v in value]]
    if isinstance(value, float):
        return ["f", repr(value)]
    return [type(value).__name__, value]


def same(a: Any, b: Any) -> bool:
    """JSON equality that tells ``true`` from ``1``, ``1`` from ``1.0`` and ``1e999``
    from ``2e999`` (Python's ``==`` does not)."""
    return json.dumps(_key(a), sort_keys=True) == json.dumps(_key(b), sort_keys=True)
