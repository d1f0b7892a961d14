"""Matching ``tools`` patterns against tool names in bounded time (issue 8, item 3).

Two defences, because tool names come from the trajectory (a hostile file may hold a
megabyte-long one) and patterns from the config:

1. **Matched in linear time**: even a simple pattern such as ``.*_x`` is quadratic in
   ``re`` under unanchored search (minutes on a 1 MB name). When the name is printable
   ASCII (every real tool name) and the pattern is written in the syntax both engines
   read the same way, it is matched by RE2 (``google-re2``), whose time is linear in the
   name. Otherwise ``re`` decides, as before. On that subset the two engines agree
   exactly, so the answer never depends on which one ran.
2. **Refused at grading time, never hung**: when ``re`` must decide (a name with
   non-ASCII or control characters, or a pattern RE2 reads differently) and the pattern
   has nested unbounded quantifiers (``(a+)+``, ``(x*y*)*``: exponential backtracking,
   found on the parse tree by `backtracking_hazard`), a name longer than
   `HAZARD_NAME_LIMIT` raises `UnsafeMatchError`, which the grader reports as an
   ``error`` result. Lint does not refuse such patterns: spec §2 accepts every pattern
   that compiles, and on real (ASCII) tool names RE2 matches them in linear time.

No I/O here; ``re2`` is imported on first use and its absence only costs speed.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

from .errors import MaxRepeatError

__all__ = ["backtracking_hazard", "search", "re2_eligible", "UnsafeMatchError",
           "HAZARD_NAME_LIMIT"]

#: the longest name ``re`` may try a nested-quantifier pattern on (2^16 splits at worst)
HAZARD_NAME_LIMIT: Final = 16


class UnsafeMatchError(MaxRepeatError, ValueError):
    """A ``tools`` pattern that would backtrack exponentially on one tool name.

    >>> str(UnsafeMatchError("(a+)+$", 40, "the quantifier + repeats a group"))[:31]
    "tools pattern '(a+)+$' cannot b"
    """

    def __init__(self, pattern: str, name_length: int, reason: str) -> None:
        self.pattern = pattern
        self.name_length = name_length
        self.reason = reason
        super().__init__(
            f"tools pattern {pattern!r} cannot be matched safely against a "
            f"{name_length}-character tool name that is not plain ASCII: {reason}, which "
            "backtracks exponentially; drop the inner quantifier (a+ for (a+)+) or make it "
            "possessive (a++) or atomic ((?>a+))"
        )

#: escapes with the same meaning in ``re`` and RE2 on printable ASCII text
#: (not \\B: before Python 3.14 ``re`` never matches it in an empty string, RE2 does)
_SAME_ESCAPES: Final = frozenset(".-_\\/$^()[]{}|*+?!\"#%&',:;<=>@`~ dwsDWSbAntrf")
#: group openers both engines read the same way
_SAME_GROUPS: Final = ("(?:", "(?P<", "(?i)", "(?i:")


def re2_eligible(pattern: str) -> bool:
    """Whether RE2 reads ``pattern`` exactly as ``re`` does on printable ASCII names.

    Conservative: printable ASCII only; no ``{,n}`` (``re`` reads it as ``{0,n}``, RE2 as
    text), no POSIX ``[:class:]`` (RE2 only), no octal or ``\\Z``-style escapes, no
    lookaround, backreferences, atomic groups or possessive quantifiers (``re`` only).

    >>> re2_eligible("^mcp__.*__read$"), re2_eligible("(?=a)b"), re2_eligible("a{,3}")
    (True, False, False)
    """
    if not (pattern.isascii() and pattern.isprintable()):
        return False
    if "{," in pattern or "[:" in pattern or "[=" in pattern or "[." in pattern:
        return False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n or pattern[i + 1] not in _SAME_ESCAPES:
                return False
            i += 2
            continue
        if ch == "(" and pattern.startswith("(?", i):
            if not any(pattern.startswith(g, i) for g in _SAME_GROUPS):
                return False
        if ch in "+*?}" and i + 1 < n and pattern[i + 1] == "+":
            return False  # possessive quantifier
        i += 1
    return True


_RE2: Any = None
_RE2_MISSING = False
_COMPILED: dict[str, Any] = {}


def _re2_pattern(pattern: str) -> Any:
    """The RE2 form of ``pattern``, or None when ``re`` must decide."""
    global _RE2, _RE2_MISSING
    if pattern in _COMPILED:
        return _COMPILED[pattern]
    compiled = None
    if not _RE2_MISSING and re2_eligible(pattern):
        if _RE2 is None:
            try:
                _RE2 = importlib.import_module("re2")
            except ImportError:
                _RE2_MISSING = True
        if _RE2 is not None:
            options = _RE2.Options()
            options.log_errors = False  # a refused pattern falls back quietly to re
            try:
                compiled = _RE2.compile(pattern, options=options)
            except Exception:  # re2.error: a construct RE2 lacks; re decides
                compiled = None
    if len(_COMPILED) < 4096:
        _COMPILED[pattern] = compiled
    return compiled


def search(pattern: re.Pattern[str], name: str) -> bool:
    """Whether ``pattern`` is found anywhere in ``name`` (unanchored, as spec §3 says).

    >>> search(re.compile("(a+)+$"), "a" * 100_000 + "!")
    False
    """
    if name.isascii() and name.isprintable():
        # Flags come from the pattern text ((?i) is eligible); others were passed in code.
        plain_flags = not pattern.flags & ~(re.UNICODE | re.IGNORECASE)
        fast = _re2_pattern(pattern.pattern) if plain_flags else None
        if fast is not None:
            return fast.search(name) is not None
    if len(name) > HAZARD_NAME_LIMIT:
        hazard = _hazard(pattern.pattern)
        if hazard is not None:
            raise UnsafeMatchError(pattern.pattern, len(name), hazard)
    return pattern.search(name) is not None


_HAZARDS: dict[str, str | None] = {}


def _hazard(pattern: str) -> str | None:
    if pattern not in _HAZARDS:
        if len(_HAZARDS) >= 4096:
            _HAZARDS.clear()
        _HAZARDS[pattern] = backtracking_hazard(pattern)
    return _HAZARDS[pattern]


def backtracking_hazard(pattern: str) -> str | None:
    """Why ``pattern`` can backtrack exponentially, or None when it cannot.

    The hazard is an unbounded quantifier (``*``, ``+``, ``{n,}``) over a part that
    itself repeats: the two loops can split a long name in exponentially many ways.

    >>> backtracking_hazard("(a+)+$")
    'the quantifier + repeats a group that itself holds a quantifier'
    >>> backtracking_hazard("^bash$") is None, backtracking_hazard("(a++)+$") is None
    (True, True)
    """
    parser: Any = importlib.import_module("re._parser")
    constants: Any = importlib.import_module("re._constants")
    try:
        tree = parser.parse(pattern)
    except (re.error, RecursionError):
        return None  # the "must compile" rule reports it
    repeats = {constants.MAX_REPEAT, constants.MIN_REPEAT}
    unbounded = constants.MAXREPEAT

    def has_repeat(items: Any) -> bool:
        for op, av in items:
            if op in repeats and av[1] > 1:
                return True
            for sub in _children(op, av, constants):
                if has_repeat(sub):
                    return True
        return False

    def walk(items: Any) -> str | None:
        for op, av in items:
            if op in repeats and av[1] == unbounded and has_repeat(av[2]):
                sign = "*" if av[0] == 0 else "+" if av[0] == 1 else "{%d,}" % av[0]
                return f"the quantifier {sign} repeats a group that itself holds a quantifier"
            for sub in _children(op, av, constants):
                found = walk(sub)
                if found:
                    return found
        return None

    try:
        return walk(tree)
    except RecursionError:
        return "the pattern is nested too deeply to check"


def _children(op: Any, av: Any, c: Any) -> list[Any]:
    """The sub-patterns of one parsed node that can backtrack (atomic parts cannot)."""
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return [av[2]]
    if op is c.SUBPATTERN:
        return [av[3]]
    if op is c.BRANCH:
        return list(av[1])
    if op in (c.ASSERT, c.ASSERT_NOT):
        return [av[1]]
    if op is c.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]
    return []  # ATOMIC_GROUP and POSSESSIVE_REPEAT never give back what they matched
