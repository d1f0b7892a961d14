"""One rule for repeated keys in a streamed document: the last one wins, as in memory
(and in JSON.parse).

A prefix such as "events.item" matches the items of *every* "events" key of the object,
so a document with two would be joined by streaming and read as the last one in memory.
The objects that hold the keys the grader reads (the document and its direct children)
are numbered in document order; a first pass counts their repeated keys, and the passes
that read values drop every occurrence but the last. Only documents whose bytes could
hold a repeated key take the (slower, Python-level) first pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

__all__ = ["may_repeat", "repeated_keys", "last_only"]

#: key spellings that could repeat a key the grader reads; \u006x / \u007x escapes
#: could spell one of their letters
_KEY_BYTES: Final = (b'"events"', b'"trajectory"', b'"stimulus"')
_ESCAPED_LETTER: Final = re.compile(rb"\\u00[67]")


def repeated_keys(events: Iterable[tuple[str, str, Any]]) -> dict[tuple[int, str], int]:
    """{(object number, key): occurrences} of the repeated keys of the document and of
    its direct child objects, from its parse events (empty when none)."""
    counts: dict[tuple[int, str], int] = {}
    stack: list[int | None] = []
    serial = [0]
    for _prefix, event, value in events:
        _track(stack, serial, event)
        if event == "map_key" and stack[-1] is not None:
            key = (stack[-1], value)
            counts[key] = counts.get(key, 0) + 1
    return {k: n for k, n in counts.items() if n > 1}


def may_repeat(chunks: Iterable[bytes]) -> bool:
    """Whether the document's bytes (``chunks``, in order) could hold a repeated key the
    grader reads: only such a document takes the counting pass (`repeated_keys`)."""
    counts = dict.fromkeys(_KEY_BYTES, 0)
    tail = b""
    for chunk in chunks:
        window = tail + chunk
        if _ESCAPED_LETTER.search(window):
            return True
        for key in _KEY_BYTES:
            # those wholly inside the tail were counted with the previous chunk
            counts[key] += window.count(key) - tail.count(key)
            if counts[key] > 1:
                return True
        tail = chunk[-16:]
    return False


def _track(stack: list[int | None], serial: list[int], event: str) -> None:
    """Keep the stack of open containers: the document's objects up to depth 2 get a
    number, in document order (the same in every pass)."""
    if event == "start_map":
        if len(stack) < 2 and all(n is not None for n in stack):
            stack.append(serial[0])
            serial[0] += 1
        else:
            stack.append(None)
    elif event == "start_array":
        stack.append(None)
    elif event in ("end_map", "end_array"):
        stack.pop()


def last_only(events: Iterator[tuple[str, str, Any]],
               repeated: dict[tuple[int, str], int]) -> Iterator[tuple[str, str, Any]]:
    """The parse events without the earlier occurrences of each repeated key."""
    stack: list[int | None] = []
    serial = [0]
    seen: dict[tuple[int, str], int] = {}
    skip_at: int | None = None
    for prefix, event, value in events:
        if skip_at is not None:
            if len(stack) == skip_at and event in ("map_key", "end_map"):
                skip_at = None
            else:
                _track(stack, serial, event)
                continue
        _track(stack, serial, event)
        if event == "map_key" and stack[-1] is not None:
            key = (stack[-1], value)
            if key in repeated:
                seen[key] = n = seen.get(key, 0) + 1
                if n < repeated[key]:
                    skip_at = len(stack)
                    continue
        yield prefix, event, value
