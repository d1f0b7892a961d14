"""``tools`` patterns as the seed framework reads them: ECMAScript regular expressions.

The seed framework (TypeScript) compiles each pattern with ``new RegExp(source, flags)``,
taking ``flags`` from a leading inline group such as ``(?i)``. This module parses a
pattern by the ECMAScript grammar *without* the ``u`` flag, Annex B included (the
web-compatible syntax every JavaScript engine accepts: ``]`` and ``{`` as literals,
``\\8`` as ``8``, legacy octal escapes, quantified lookaheads, ``\\c`` without a letter
as a backslash), into a small tree (`toolmatch._es_parser`, over the code-unit sets of
`core.es_charsets`), then decides matches with ECMAScript's semantics:

- the subject is the tool name as UTF-16 code units (an emoji is two units, as in JS);
- ``.`` excludes the four line terminators; ``\\d`` ``\\w`` ``\\b`` are ASCII;
  ``\\s`` is ECMAScript's white space and line terminators; ``^``/``$`` are the input's
  ends (line ends too with ``m``);
- ``i`` folds case by the spec's ``Canonicalize`` (upper-case mapping, never from
  non-ASCII to ASCII) over a pinned Unicode 17 table (`core.es_casetable`), which is
  not Python's case folding;
- a count above 2**31 - 1 is read as 2**31 - 1 and a maximum of 2**31 - 1 as none, as
  V8 reads them; repeats of bodies that match empty text are rewritten first
  (`core.es_tree`), so ``(?:){99999999999}`` matches every name, as in V8;
- a back-reference to a group that did not take part matches the empty string.

Matching is in linear time when it can be: a pattern without back-references or
lookaround is translated, character sets spelt out as code-unit ranges, into RE2 syntax
and run by RE2 over the name's code units. The rest run on a small backtracking matcher
over the same tree (`core.es_backtrack`; runs of single-outcome items and repeats of
them in loops, not recursion), with a step budget; a name that would exceed
it raises `UnsafeMatchError` (an ``error`` result, never a hang). No I/O here.

>>> compile_pattern("^bash$").search("bash"), compile_pattern("^bash$").search("bash\\n")
(True, False)
>>> compile_pattern("(?i)^BASH$").search("bash"), compile_pattern(r"\\d").search("١")
(True, False)
>>> compile_pattern("a{,3}").search("a{,3}")
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Final

from ..errors import PatternSyntaxError, UnsafeMatchError
from ._es_backtrack import MATCH_STEP_BUDGET, _Budget, _Matcher
from ._es_charsets import Ranges, to_units
from ._es_parser import INF, Node, _Parser
from ._es_tree import depth, simplify

__all__ = ["ESPattern", "PatternSyntaxError", "UnsafeMatchError", "compile_pattern",
           "split_flags", "is_empty_pattern", "MATCH_STEP_BUDGET", "DEPTH_REASON"]

#: inline flags a pattern may start with, as ``(?i)``: the ones that change matching
INLINE_FLAGS: Final = "ims"


def split_flags(pattern: str) -> tuple[str, str]:
    """A leading inline flags group taken off: ``(?i)bash`` -> (``i``, ``bash``).

    The framework turns such a group into ``RegExp`` flags; only ``i``, ``m`` and ``s``
    (the ones that change what a pattern matches) are read, each at most once.

    >>> split_flags("(?i)^bash$"), split_flags("^bash$")
    (('i', '^bash$'), ('', '^bash$'))
    """
    if pattern.startswith("(?"):
        end = pattern.find(")")
        letters = pattern[2:end] if end > 2 else ""
        if letters and all(c in INLINE_FLAGS for c in letters) and \
                len(set(letters)) == len(letters):
            return letters, pattern[end + 1:]
    return "", pattern


def is_empty_pattern(pattern: str) -> bool:
    """Whether a pattern's source is empty once its flags are taken (``RegExp.source`` is
    ``(?:)``): it would watch every tool, so grading refuses it.

    >>> is_empty_pattern("(?i)"), is_empty_pattern("(?:)"), is_empty_pattern("()")
    (True, True, False)
    """
    return split_flags(pattern)[1] in ("", "(?:)")


# ---------------------------------------------------------------------------------------
# Linear-time matching with RE2 over the code units.

_SURROGATE_SHIFT: Final = 0xF0000 - 0xD800
_RE2_DEPTH: Final = 300


def _re2_unit(unit: int) -> int:
    # RE2 reads UTF-8, which has no surrogates: lone ones move to plane 15 (the subject
    # holds no astral character after its split into units, so nothing collides).
    return unit + _SURROGATE_SHIFT if 0xD800 <= unit <= 0xDFFF else unit


def _re2_ranges(ranges: Ranges) -> str:
    if not ranges:
        return r"[^\x00-\x{10FFFF}]"
    parts = []
    for lo, hi in ranges:
        if lo <= 0xDFFF and hi >= 0xD800:  # split around the surrogates
            pieces = []
            if lo < 0xD800:
                pieces.append((lo, 0xD7FF))
            pieces.append((max(lo, 0xD800), min(hi, 0xDFFF)))
            if hi > 0xDFFF:
                pieces.append((0xE000, hi))
        else:
            pieces = [(lo, hi)]
        for a, b in pieces:
            a2, b2 = _re2_unit(a), _re2_unit(b)
            parts.append(f"\\x{{{a2:X}}}" if a2 == b2 else f"\\x{{{a2:X}}}-\\x{{{b2:X}}}")
    return "[" + "".join(parts) + "]"


def _re2_source(node: Node, multiline: bool) -> str | None:
    """RE2 syntax for the tree, or None when it holds what RE2 lacks."""
    kind = node[0]
    if kind in ("seq", "alt"):
        parts = [_re2_source(n, multiline) for n in node[1]]
        if None in parts:
            return None
        return "(?:" + ("|" if kind == "alt" else "").join(
            p for p in parts if p is not None) + ")"
    if kind == "group":
        inner = _re2_source(node[2], multiline)
        return None if inner is None else "(?:" + inner + ")"
    if kind == "repeat":
        inner = _re2_source(node[3], multiline)
        return None if inner is None else _re2_repeat(inner, node[1], node[2])
    return _re2_leaf(node, multiline)


def _re2_repeat(inner: str, lo: int, hi: int) -> str | None:
    """RE2 syntax for ``inner`` repeated ``lo`` to ``hi`` times, or None past RE2's
    limit of 1000."""
    if lo > 1000 or hi > 1000:
        return None
    suffix = "{%d,}" % lo if hi == INF else "{%d,%d}" % (lo, hi)
    return "(?:" + inner + ")" + suffix


def _re2_leaf(node: Node, multiline: bool) -> str | None:
    """RE2 syntax for a node without children, or None when RE2 lacks it."""
    kind = node[0]
    if kind == "set":
        return _re2_ranges(node[1])
    if kind == "bol":
        return None if multiline else r"\A"
    if kind == "eol":
        return None if multiline else r"\z"
    if kind == "boundary":  # RE2's \b is ECMAScript's (ASCII word characters); its \B
        return None if node[1] else r"\b"  # also matches inside a multi-byte character
    return None  # lookaround, back-references


# ---------------------------------------------------------------------------------------

_RE2: Any = None
_RE2_MISSING = False


def _re2_compile(source: str) -> Any:
    global _RE2, _RE2_MISSING
    if _RE2_MISSING:
        return None
    if _RE2 is None:
        try:
            _RE2 = importlib.import_module("re2")
        except ImportError:
            _RE2_MISSING = True
            return None
    options = _RE2.Options()
    options.log_errors = False
    try:
        return _RE2.compile(source, options=options)
    except Exception:  # beyond RE2's limits (program size): the backtracker decides
        return None


@dataclass(frozen=True, eq=False)
class ESPattern:
    """One compiled ``tools`` pattern: `search` says whether it is found in a tool name.

    >>> p = compile_pattern("^mcp__.*__read$")
    >>> p.search("mcp__fs__read"), p.search("mcp__fs__read\\n"), p.linear
    (True, False, True)
    """

    pattern: str
    flags: str
    source: str
    tree: Node
    groups: int
    names: dict[str, int]
    _re2: Any

    @property
    def linear(self) -> bool:
        """Whether matching runs in time linear in the name (RE2), not by backtracking."""
        return self._re2 is not None

    def search(self, name: str) -> bool:
        """Whether the pattern is found anywhere in ``name`` (``RegExp.prototype.test``)."""
        units = to_units(name)
        if self._re2 is not None:
            subject = "".join(chr(_re2_unit(u)) for u in units)
            return self._re2.search(subject) is not None
        matcher = _Matcher(self.tree, self.groups, self.names, "i" in self.flags,
                           "m" in self.flags)
        try:
            return matcher.search(units)
        except _Budget:
            raise UnsafeMatchError(
                self.pattern, len(name),
                f"it needs more than {MATCH_STEP_BUDGET:,} backtracking steps") from None
        except RecursionError:
            raise UnsafeMatchError(self.pattern, len(name), DEPTH_REASON) from None


#: why a name is refused when backtracking nests deeper than Python's recursion limit
#: (a group entered about 300 times or more on one path, as ``(?:a|\\b){1001}``)
DEPTH_REASON: Final = "its backtracking nests deeper than the matcher's recursion allows"

_CACHE: dict[str, ESPattern] = {}


def compile_pattern(pattern: str) -> ESPattern:
    """Parse ``pattern`` as the framework does (leading ``(?ims)`` flags, then
    ``new RegExp(rest, flags)``); raises `PatternSyntaxError` where RegExp throws.

    >>> compile_pattern("(?<n>bash)\\\\k<n>").search("bashbash")
    True
    >>> compile_pattern("[^]").search("x"), compile_pattern("[]").search("x")
    (True, False)
    """
    cached = _CACHE.get(pattern)
    if cached is not None:
        return cached
    flags, source = split_flags(pattern)
    parser = _Parser(to_units(source), flags)
    tree = simplify(parser.parse())
    # RE2 refuses more than 1,000 levels of nesting; the translation recurses
    re2_source = _re2_source(tree, "m" in flags) if depth(tree) <= _RE2_DEPTH else None
    fast = _re2_compile(re2_source) if re2_source is not None else None
    compiled = ESPattern(pattern, flags, source, tree, parser.groups, dict(parser.names), fast)
    if len(_CACHE) >= 4096:
        _CACHE.clear()
    _CACHE[pattern] = compiled
    return compiled
