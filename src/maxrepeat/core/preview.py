"""Short, inert previews of calls for evidence and reports (spec §5).

Trajectory text is written by models and tools: it may hold ANSI escapes, bidi overrides
or megabytes of output. Everything shown to a person passes through `inert` (control and
format characters escaped as ``\\uXXXX``) and is shortened.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Any, Final

from .canonical import decode_value, normalize
from .steps import MISSING

__all__ = ["inert", "shorten", "json_preview", "call_preview", "step_preview", "utf8_safe",
           "tool_label"]

NAME_LIMIT: Final = 60
VALUE_LIMIT: Final = 60
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_SAFE_CACHE: dict[str, bool] = {}


def _unsafe(ch: str) -> bool:
    hit = _SAFE_CACHE.get(ch)
    if hit is None:
        hit = unicodedata.category(ch) in _UNSAFE_CATEGORIES
        if len(_SAFE_CACHE) < 65536:
            _SAFE_CACHE[ch] = hit
    return hit


def inert(text: str) -> str:
    """Text with every control, format and separator character escaped.

    >>> inert("ok\\x1b[31m\\u202e")
    'ok\\\\u001b[31m\\\\u202e'
    """
    if text.isprintable():
        # Printable excludes every Other (C*) and Separator (Z*) category but the ASCII
        # space, a superset of what is escaped: nothing to do (the "…" of a cut preview
        # included, which used to send every shortened value through the slow loop).
        return text
    out = []
    for ch in text:
        if ch == " " or not _unsafe(ch):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out)


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX``, so that it encodes as UTF-8.

    Lenient JSON reading keeps lone surrogates (``"\\ud800"``) in ids and tool names; no
    report can write them, so values that reach results verbatim pass through here.

    >>> utf8_safe("a\\ud800b")
    'a\\\\ud800b'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, with an ellipsis when cut.

    >>> shorten("abcdefgh", 5)
    'abcd…'
    """
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def json_preview(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value as short, inert JSON text.

    >>> json_preview({"command": "ls -la"})
    '{"command": "ls -la"}'
    """
    try:
        # normalized, so that 1.0 and 1 (equal for the grader) also look the same
        value = normalize(decode_value(value))
        if isinstance(value, str) and len(value) > 4 * limit:
            value = value[: 4 * limit]  # never dump megabytes only to cut them
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        text = "…"
    return inert(shorten(text, limit))


_PLAIN_NAME: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_-.:/@")


def tool_label(name: str, limit: int = NAME_LIMIT) -> str:
    """A tool name as evidence shows it: bare when it is a plain identifier, else quoted as
    a JSON string (so an empty name, or one with spaces, cannot read as something else).

    >>> tool_label("bash"), tool_label(""), tool_label("run tests"), tool_label("a\u202eb")
    ('bash', '""', '"run tests"', '"a\\\\u202eb"')
    """
    if name and all(c in _PLAIN_NAME for c in name[:limit]):
        return shorten(name, limit)
    return inert(json.dumps(shorten(name, limit), ensure_ascii=False))


def call_preview(name: str, arguments: Any, observation: Any, match: str) -> str:
    """One call as shown in a pattern: ``name``, plus arguments, plus ``-> observation``.

    >>> call_preview("bash", {"command": "ls"}, "a.txt", "observation")
    'bash {"command": "ls"} -> "a.txt"'
    >>> call_preview("", None, None, "name")
    '""'
    """
    text = tool_label(name)
    if match == "name":
        return text
    text += " " + json_preview(arguments)
    if match == "observation":
        text += " -> " + ("(no result)" if observation is MISSING else json_preview(observation))
    return text


#: calls shown per step; a turn of a million parallel calls must not make a 30 MB preview
STEP_CALL_LIMIT: Final = 8


def step_preview(calls: Sequence[tuple[str, Any, Any]], match: str) -> str:
    """One step (its calls, joined by `` + ``) as shown in a pattern preview.

    At most `STEP_CALL_LIMIT` calls are shown, then how many more there are.

    >>> step_preview([("ls", None, "a")] * 10, "name")
    'ls + ls + ls + ls + ls + ls + ls + ls + … (2 more calls)'
    """
    shown = [call_preview(n, a, o, match) for n, a, o in calls[:STEP_CALL_LIMIT]]
    if len(calls) > STEP_CALL_LIMIT:
        shown.append(f"… ({len(calls) - STEP_CALL_LIMIT} more calls)")
    return " + ".join(shown)
