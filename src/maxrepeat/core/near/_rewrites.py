"""The pieces of the built-in normalizers' table (`normalizers.NORMALIZERS`) that are
code rather than one substitution: the functions some of its steps call (``trailing``,
``keyed_durations``) or replace with (``tmp_path``, ``hex_run``), the shared parts of its
patterns, and the cheap checks the durations' pre-check is made of."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MONTH", "DUR_BEFORE", "TRAIL", "KEYED", "tmp_path", "hex_run", "keyed_durations",
           "keyed_check", "escaped_check", "trailing"]

_TMP_PART: Final = re.compile(r"^(?:tmp|pytest-|pymp-)[\w.-]*$|^[\w.-]*\d[\w.-]*$")


def tmp_path(m: re.Match[str]) -> str:
    # Keep the temp root and the stable parts (a file's name); hide parts made of random
    # letters and digits (tmpa1b2c3, pytest-17, 1f2e3d...).
    root, rest = m.group(1), m.group(2)
    parts = rest.split("/")
    return root + "/".join("<tmp>" if _TMP_PART.match(p) and p else p for p in parts)


MONTH = r"(?:an|eb|ar|pr|ay|un|ul|ug|ep|ct|ov|ec)[a-z]*"
#: what may stand before a duration's first digit (the look-behinds after it)
DUR_BEFORE = r"(?:(?<![\w.][0-9])|(?<=\\[ntr][0-9]))"
TRAIL: Final = re.compile(r"[ \t\r]+\n")
_HEX_LETTER: Final = re.compile(r"[a-fA-F]")
_DIGIT: Final = re.compile(r"[0-9]")


def hex_run(m: re.Match[str]) -> str:
    run = m.group(0)
    return "<hex>" if _HEX_LETTER.search(run) and _DIGIT.search(run) else run


#: A duration key's name contains one of these words (lower case, or capitalised as in
#: camelCase: ``durationMs``, ``totalDurationMs``, ``wallTime``), so it names a measured
#: time...
_DURATION_NAME: Final = re.compile(r"[Dd]uration|[Ee]lapsed|[Ll]atency|[Tt]ook"
                                   r"|[Ww]all_?[Tt]ime|[Tt]ime_?[Tt]aken")
#: ... unless it also names a bound someone set: a configured timeout or limit is an
#: argument, not volatile output (``"timeout_duration": 30`` stays).
_BOUND_NAME: Final = re.compile(r"[Tt]ime_?[Oo]ut|[Ll]imit|[Dd]eadline|[Bb]udget")
#: Substrings every duration key's name holds one of (the pre-check's needles).
_DURATION_NEEDLES: Final = ("uration", "lapsed", "atency", "took", "Took", "all_time",
                            "alltime", "allTime", "all_Time", "ime_taken", "imetaken",
                            "imeTaken", "ime_Taken")


def _keyed_duration(m: re.Match[str]) -> str:
    # The key and what follows it up to the number stay; the number becomes <duration>
    # when the key names a measured time. Another key's match is kept as it is (its
    # number is no duration): no duration key can start inside it, so keeping it is the
    # same as not matching it.
    name = m.group(3)
    if _DURATION_NAME.search(name) is None or _BOUND_NAME.search(name) is not None:
        return m.group(0)
    return m.group(1) + "<duration>"


#: A number under a key (JSON's ``"duration_seconds": 0.5``, a Python dict's
#: ``'elapsed': 3``, or a bare key at the start of a word: ``duration_ms: 32855``): the
#: key is ASCII letters, digits and ``_``; spaces may stand around the colon; the number
#: is JSON's (a sign, a fraction, an exponent) and ends at neither \w nor ``.``. Unlike the
#: other patterns it does not start with a character class (the key may or may not be
#: quoted): it runs only on texts that pass `keyed_check`, which few do.
KEYED: Final = re.compile(r"(?<!\w)((['\"]?)([A-Za-z0-9_]+)\2 *: *)"
                           r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?![\w.])")


def keyed_durations(text: str) -> str:
    """The number under every duration key made ``<duration>`` (`KEYED`,
    `_keyed_duration`); the check in front only skips texts it cannot change."""
    return KEYED.sub(_keyed_duration, text) if keyed_check(text) else text


def keyed_check(text: str) -> bool:
    """The pre-check of `_keyed_duration`'s pattern: a colon and a duration word."""
    if ":" not in text:
        return False
    for needle in _DURATION_NEEDLES:
        if needle in text:
            return True
    return False


_ESCAPED_SCAN: Final = re.compile(r"\\[ntr][0-9]+(?:\.[0-9]+)?(?:m[0-9]| ?[numsµh])").search


def escaped_check(text: str) -> bool:
    """The pre-check of a duration after an escaped \\n, \\t or \\r (a backslash first)."""
    return "\\" in text and _ESCAPED_SCAN(text) is not None


def trailing(text: str) -> str:
    return TRAIL.sub("\n", text).rstrip() if text[-1:].isspace() or " \n" in text or \
        "\t\n" in text or "\r\n" in text else text
