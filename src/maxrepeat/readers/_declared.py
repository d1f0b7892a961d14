"""The fields the reader registry takes from a reader module's source, without importing
it: ``name``, ``order``, ``top`` and ``markers`` of its ``READER = Reader(...)``
statement (see `maxrepeat.readers.registry`). Each is written at the statement's indent,
as a literal or the name of a module-level constant."""

from __future__ import annotations

import ast
import re
from typing import Any, Final

__all__ = ["reader_fields"]

#: one of the registry's fields in a ``READER = Reader(...)`` statement: a keyword at the
#: statement's indent, its value up to the next keyword or the closing parenthesis
_FIELD: Final = re.compile(rb"^    (name|order|top|markers)=(.*?),\n(?=    \w+=|\))",
                           re.MULTILINE | re.DOTALL)


def reader_fields(text: bytes) -> dict[str, Any] | None:
    """The registry's fields of the ``READER = Reader(...)`` statement in a module's
    source, or None when the module declares no reader. A value is a literal, or the
    name of a module-level constant (``name=NAME``); anything else is a `ValueError`.

    >>> reader_fields(b'NAME = "x"\\nREADER = Reader(\\n    name=NAME,\\n    top=90,\\n)\\n')
    {'name': 'x', 'top': 90}
    """
    start = text.find(b"\nREADER")
    if start < 0:
        return None
    end = text.find(b"\n)\n", start)
    keys, values = [], []
    for key, value in _FIELD.findall(text, start, end + 2):
        if value.decode("utf-8").isidentifier():  # a constant: NAME[: Final] = "..."
            found = re.search(rb"^" + value + rb"(?:: *Final)? *= *(.+)$", text, re.MULTILINE)
            if found is None:
                raise ValueError(f"no constant {value.decode()}")
            value = found.group(1)
        keys.append(key.decode())
        values.append(value.decode("utf-8"))
    if "name" not in keys:
        raise ValueError("READER names no format")
    # one parse for every value (the registry reads the package at every start)
    return dict(zip(keys, ast.literal_eval(f"({', '.join(values)},)"), strict=True))
