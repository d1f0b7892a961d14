"""The pre-checks of the built-in normalizers: for a normalizer (or one of its
substitutions), a check true for every text in which one of its patterns could match, so
that a text failing it skips the scan (`normalizers.rewriter` uses them; the result is
the same as applying every substitution: tests/core/near/test_neardup.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ._rewrites import escaped_check, keyed_check

__all__ = ["PRECHECKS", "BLOCK", "BLOCK_SCAN", "block_check"]


def _needles(*needles: str) -> Callable[[str], bool]:
    """A pre-check: whether one of ``needles`` is in the text (an ``in`` test in C)."""
    def check(text: str) -> bool:
        for needle in needles:
            if needle in text:
                return True
        return False
    return check


def _either(first: Callable[[str], bool], second: Callable[[str], bool]) -> Callable[[str], bool]:
    """A pre-check true where one of two is."""
    return lambda text: first(text) or second(text)


def _scan(pattern: str) -> Callable[[str], bool]:
    """A pre-check: one regex scan (a superset of the guarded patterns' matches)."""
    search = re.compile(pattern).search
    return lambda text: search(text) is not None


# The pre-checks: (normalizer, index of its substitution or None for all of them) -> a
# check true for every text one of the guarded patterns matches. Each is a superset:
# every match of a guarded pattern contains the needle, or starts where the scan matches.
PRECHECKS: Final[dict[tuple[str, int | None], Callable[[str], bool]]] = {
    ("ansi", None): _needles("\x1b"),
    # a date (4 digits and '-'), a clock (d:dd: or dd:dd:), an epoch (1[5-9] + 8 digits),
    # or a capitalised day or month name, at the start of a word
    ("timestamps", None): _scan(
        r"[0-9A-Z](?<![\w][0-9A-Z])(?:(?<=[0-9])(?:[0-9]{3}-|[0-9]?:[0-9]{2}:|[5-9][0-9]{8})"
        r"|(?<=[A-Z])(?:on|ue|ed|hu|ri|at|un|an|eb|ar|pr|ay|ul|ug|ep|ct|ov|ec))"),
    # a number at the start of a word followed by m<digit> or a unit's first letter
    # (or the same after an escaped \n, \t, \r: `escaped_check`), or a colon and a
    # duration key's word (`keyed_check`)
    ("durations", None): _either(_scan(
        r"[0-9](?<![\w.][0-9])[0-9]*(?:\.[0-9]+)?(?:m[0-9]| ?[numsµh])"),
        lambda text: escaped_check(text) or keyed_check(text)),
    # both need eight hex digits at the start of a word
    ("ids", None): _scan(r"[0-9a-fA-F](?<![\w][0-9a-fA-F])[0-9a-fA-F]{7}"),
    ("addresses", None): _needles("0x"),
    ("pids", 0): _scan(r"[pP](?:id|ID|gid|GID|rocess|ort|ORT)|shellId"),
    ("pids", 1): _needles("localhost:", "127.0.0.1:", "0.0.0.0:", "]:", ":::", "::1:"),
    ("temp-paths", 0): _needles("/tmp/", "/var/", "/dev/shm/"),
    ("temp-paths", 1): _needles("\\"),
}

#: Normalizers whose pre-checks one scan can do at once (they stand together in the
#: order): when all of them are on and `_BLOCK_CHECK` is false, none of their patterns
#: matches the text, so it skips them all. Its branches are their pre-checks', plus
#: ``[nn]`` and ``0xhhhh`` (at the start of a word); ports and ``shellId`` are needles,
#: and durations after an escape and under a key `escaped_check` and `keyed_check`.
BLOCK: Final = ("timestamps", "durations", "ids", "addresses", "pids")
BLOCK_SCAN: Final = _scan(
    r"[0-9A-Za-fpP](?<![\w][0-9A-Za-fpP])(?:"
    r"(?<=[0-9])(?:[0-9]{3}-|[0-9]?:[0-9]{2}:|[5-9][0-9]{8}"
    r"|[0-9]*(?:\.[0-9]+)?(?:m[0-9]| ?[numsµh]))"
    r"|(?<=\[[0-9])[0-9]{1,6}\]"
    r"|(?<=0)x[0-9a-fA-F]{4}"
    r"|(?<=[A-Z])(?:on|ue|ed|hu|ri|at|un|an|eb|ar|pr|ay|ul|ug|ep|ct|ov|ec)"
    r"|(?<=[0-9a-fA-F])[0-9a-fA-F]{7}"
    r"|(?<=[pP])(?:id|ID|gid|GID|rocess|ort|ORT))")
BLOCK_NEEDLES: Final = _needles("localhost:", "127.0.0.1:", "0.0.0.0:", "]:", ":::", "::1:",
                                 "shellId")


def block_check(text: str) -> bool:
    return (BLOCK_NEEDLES(text) or BLOCK_SCAN(text) or escaped_check(text)
            or keyed_check(text))
