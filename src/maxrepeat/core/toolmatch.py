"""``tools`` patterns as the seed framework reads them: ECMAScript regular expressions.

The seed framework (TypeScript) compiles each pattern with ``new RegExp(source, flags)``,
taking ``flags`` from a leading inline group such as ``(?i)``. This module parses a
pattern by the ECMAScript grammar *without* the ``u`` flag, Annex B included (the
web-compatible syntax every JavaScript engine accepts: ``]`` and ``{`` as literals,
``\\8`` as ``8``, legacy octal escapes, quantified lookaheads, ``\\c`` without a letter
as a backslash), into a small tree, then decides matches with ECMAScript's semantics:

- the subject is the tool name as UTF-16 code units (an emoji is two units, as in JS);
- ``.`` excludes the four line terminators; ``\\d`` ``\\w`` ``\\b`` are ASCII;
  ``\\s`` is ECMAScript's white space and line terminators; ``^``/``$`` are the input's
  ends (line ends too with ``m``);
- ``i`` folds case by the spec's ``Canonicalize`` (upper-case mapping, never from
  non-ASCII to ASCII), which is not Python's case folding;
- a back-reference to a group that did not take part matches the empty string.

Matching is in linear time when it can be: a pattern without back-references or
lookaround is translated, character sets spelt out as code-unit ranges, into RE2 syntax
and run by RE2 over the name's code units. The rest run on a small backtracking matcher
over the same tree, with a step budget; a name that would exceed it raises
`UnsafeMatchError` (an ``error`` result, never a hang). No I/O here.

>>> compile_pattern("^bash$").search("bash"), compile_pattern("^bash$").search("bash\\n")
(True, False)
>>> compile_pattern("(?i)^BASH$").search("bash"), compile_pattern(r"\\d").search("١")
(True, False)
>>> compile_pattern("a{,3}").search("a{,3}")
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .canonical import ES_WHITESPACE
from .errors import PatternSyntaxError, UnsafeMatchError

__all__ = ["ESPattern", "PatternSyntaxError", "UnsafeMatchError", "compile_pattern",
           "split_flags", "is_empty_pattern", "MATCH_STEP_BUDGET"]

MAX_UNIT: Final = 0xFFFF
INF: Final = -1  # an unbounded quantifier's maximum
_MAX_COUNT: Final = 2**31 - 1  # larger counts are unbounded, as in V8
#: the backtracking matcher's budget of steps for one name (then `UnsafeMatchError`)
MATCH_STEP_BUDGET: Final = 200_000
#: inline flags a pattern may start with, as ``(?i)``: the ones that change matching
INLINE_FLAGS: Final = "ims"


# ---------------------------------------------------------------------------------------
# Character sets: sorted, disjoint, non-adjacent inclusive ranges of UTF-16 code units.

Ranges = tuple[tuple[int, int], ...]


def _normalize(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_UNIT:
        out.append((nxt, MAX_UNIT))
    return tuple(out)


def _contains(ranges: Ranges, unit: int) -> bool:
    for lo, hi in ranges:
        if unit < lo:
            return False
        if unit <= hi:
            return True
    return False


_DIGIT: Final = ((0x30, 0x39),)
_WORD: Final = _normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
_SPACE: Final = _normalize([(ord(c), ord(c)) for c in ES_WHITESPACE])
_LINE_TERMINATORS: Final = _normalize([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)])
_DOT: Final = _negate(_LINE_TERMINATORS)
_ALL: Final = ((0, MAX_UNIT),)
_CLASS_ESCAPES: Final = {"d": _DIGIT, "D": _negate(_DIGIT), "w": _WORD, "W": _negate(_WORD),
                         "s": _SPACE, "S": _negate(_SPACE)}

_CANON: list[int] | None = None


def _canon_table() -> list[int]:
    """Canonicalize(ch) of ECMA-262 (non-Unicode, ignoreCase) for every code unit."""
    global _CANON
    if _CANON is None:
        table = list(range(MAX_UNIT + 1))
        for unit in range(MAX_UNIT + 1):
            upper = chr(unit).upper()
            if len(upper) == 1:
                cu = ord(upper)
                if not (unit >= 128 and cu < 128):
                    table[unit] = cu
        _CANON = table
    return _CANON


_SAME_CANON: dict[int, list[int]] | None = None


def _same_canon() -> dict[int, list[int]]:
    """Canonical value -> every code unit with that value (for units whose class is not
    just themselves)."""
    global _SAME_CANON
    if _SAME_CANON is None:
        groups: dict[int, list[int]] = {}
        for unit, value in enumerate(_canon_table()):
            groups.setdefault(value, []).append(unit)
        _SAME_CANON = {k: v for k, v in groups.items() if len(v) > 1 or v[0] != k}
    return _SAME_CANON


def _case_closure(ranges: Ranges) -> Ranges:
    """Every code unit whose Canonicalize equals that of a member (what ``i`` matches)."""
    canon = _canon_table()
    size = sum(hi - lo + 1 for lo, hi in ranges)
    if size <= 512:  # the common case (letters, short ranges): look the few units up
        same = _same_canon()
        out = list(ranges)
        for lo, hi in ranges:
            for unit in range(lo, hi + 1):
                for other in same.get(canon[unit], ()):
                    out.append((other, other))
        return _normalize(out)
    keys = set()
    for lo, hi in ranges:
        keys.update(canon[lo:hi + 1])
    found: list[tuple[int, int]] = []
    start = -1
    for unit in range(MAX_UNIT + 1):
        if canon[unit] in keys:
            if start < 0:
                start = unit
        elif start >= 0:
            found.append((start, unit - 1))
            start = -1
    if start >= 0:
        found.append((start, MAX_UNIT))
    return tuple(found)


# ---------------------------------------------------------------------------------------
# The tree. Nodes are tuples: ("set", ranges) ("seq", [..]) ("alt", [..])
# ("group", index|None, node) ("repeat", min, max, node) ("bol",) ("eol",)
# ("boundary", negated) ("look", behind, negated, node) ("backref", index)

Node = tuple[Any, ...]


def to_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (lone surrogates kept as they are).

    >>> to_units("a😀")
    [97, 55357, 56832]
    """
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]


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


class _Parser:
    """The ECMAScript (Annex B, non-Unicode) pattern grammar, as V8 reads it."""

    def __init__(self, units: list[int], flags: str) -> None:
        self.s = units
        self.n = len(units)
        self.i = 0
        self.ignore_case = "i" in flags
        self.multiline = "m" in flags
        self.dot_all = "s" in flags
        self.groups = 0  # capturing groups opened so far
        self.names: dict[str, int] = {}
        self.named_refs: list[tuple[str, int]] = []
        self.total_groups, self.has_names = self._scan()

    # -- helpers
    def cur(self, k: int = 0) -> int:
        j = self.i + k
        return self.s[j] if j < self.n else -1

    def err(self, reason: str, at: int | None = None) -> PatternSyntaxError:
        return PatternSyntaxError(reason, self.i if at is None else at)

    def _scan(self) -> tuple[int, bool]:
        """Capture groups and whether any is named, over the whole pattern (a
        back-reference may name a later group)."""
        s, n, i = self.s, self.n, 0
        count, named, in_class = 0, False, False
        while i < n:
            c = s[i]
            if c == 0x5C:  # backslash
                i += 2
                continue
            if in_class:
                if c == 0x5D:
                    in_class = False
            elif c == 0x5B:
                in_class = True
            elif c == 0x28:  # (
                if i + 1 < n and s[i + 1] == 0x3F:  # ?
                    if i + 2 < n and s[i + 2] == 0x3C and \
                            (i + 3 >= n or s[i + 3] not in (0x3D, 0x21)):
                        count += 1
                        named = True
                else:
                    count += 1
            i += 1
        return count, named

    def _set(self, ranges: Ranges) -> Node:
        return ("set", _case_closure(ranges) if self.ignore_case else ranges)

    # -- grammar
    def parse(self) -> Node:
        node = self.disjunction()
        if self.i < self.n:
            raise self.err("unmatched ')'")
        for name, at in self.named_refs:
            if name not in self.names:
                raise self.err("invalid named capture referenced", at)
        return node

    def disjunction(self) -> Node:
        alts = [self.alternative()]
        while self.cur() == 0x7C:  # |
            self.i += 1
            alts.append(self.alternative())
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def alternative(self) -> Node:
        terms: list[Node] = []
        while self.i < self.n and self.cur() not in (0x7C, 0x29):
            term = self.term()
            if term is not None:
                terms.append(term)
        return terms[0] if len(terms) == 1 else ("seq", terms)

    def term(self) -> Node | None:
        c = self.cur()
        start = self.i
        if c == 0x5E:  # ^
            self.i += 1
            return ("bol",)
        if c == 0x24:  # $
            self.i += 1
            return ("eol",)
        if c in (0x2A, 0x2B, 0x3F):  # * + ?
            raise self.err("nothing to repeat")
        if c == 0x7B and self._interval() is not None:  # a quantifier with no atom
            self.i = start
            raise self.err("nothing to repeat")
        self.i = start
        if c == 0x5C and self.cur(1) in (0x62, 0x42):  # \b \B
            self.i += 2
            return ("boundary", self.s[start + 1] == 0x42)
        quantifiable = True
        if c == 0x28:  # (
            atom, quantifiable = self.group()
        elif c == 0x2E:  # .
            self.i += 1
            atom = ("set", _ALL if self.dot_all else _DOT)
        elif c == 0x5B:  # [
            atom = self.char_class()
        elif c == 0x5C:
            atom = self.atom_escape()
        else:  # any other unit, ] { } included, stands for itself
            self.i += 1
            atom = self._set(((c, c),))
        return self.quantified(atom, quantifiable)

    def quantified(self, atom: Node, quantifiable: bool) -> Node:
        c = self.cur()
        at = self.i
        if c == 0x2A:
            lo, hi = 0, INF
            self.i += 1
        elif c == 0x2B:
            lo, hi = 1, INF
            self.i += 1
        elif c == 0x3F:
            lo, hi = 0, 1
            self.i += 1
        elif c == 0x7B:
            interval = self._interval()
            if interval is None:
                return atom  # a literal '{' follows
            lo, hi = interval
            if hi != INF and hi < lo:
                raise self.err("numbers out of order in {} quantifier", at)
        else:
            return atom
        if self.cur() == 0x3F:  # lazy: the same set of matches
            self.i += 1
        if not quantifiable:
            raise self.err("invalid quantifier", at)
        if atom[0] == "look":  # an assertion matches only the empty string
            return ("seq", []) if lo == 0 else atom
        if lo == INF:  # more repetitions than any name holds: it never matches
            return ("set", ())
        return ("repeat", lo, hi, atom)

    def _interval(self) -> tuple[int, int] | None:
        """``{n}``, ``{n,}`` or ``{n,m}`` at the cursor (consumed), else None (untouched)."""
        start = self.i
        self.i += 1
        lo = self._digits()
        if lo is None:
            self.i = start
            return None
        hi = lo
        if self.cur() == 0x2C:  # ,
            self.i += 1
            upper = self._digits()
            hi = INF if upper is None else upper
        if self.cur() != 0x7D:
            self.i = start
            return None
        self.i += 1
        return lo, hi

    def _digits(self) -> int | None:
        start = self.i
        while 0x30 <= self.cur() <= 0x39:
            self.i += 1
        if self.i == start:
            return None
        value = int("".join(chr(u) for u in self.s[start:self.i]))
        return INF if value > _MAX_COUNT else value

    def group(self) -> tuple[Node, bool]:
        open_at = self.i
        self.i += 1
        kind = "capture"
        name = None
        if self.cur() == 0x3F:  # ?
            nxt = self.cur(1)
            if nxt == 0x3A:
                kind = "group"
                self.i += 2
            elif nxt in (0x3D, 0x21):
                kind = "ahead" if nxt == 0x3D else "ahead!"
                self.i += 2
            elif nxt == 0x3C and self.cur(2) in (0x3D, 0x21):
                kind = "behind" if self.cur(2) == 0x3D else "behind!"
                self.i += 3
            elif nxt == 0x3C:
                self.i += 2
                name = self.group_name()
            else:
                raise self.err("invalid group", open_at + 1)
        index = None
        if kind == "capture":
            self.groups += 1
            index = self.groups
            if name is not None:
                if name in self.names:
                    raise self.err("duplicate capture group name", open_at)
                self.names[name] = index
        body = self.disjunction()
        if self.cur() != 0x29:
            raise self.err("unterminated group", open_at)
        self.i += 1
        if kind in ("capture", "group"):
            return ("group", index, body), True
        behind = kind.startswith("behind")
        return ("look", behind, kind.endswith("!"), body), not behind

    def group_name(self) -> str:
        start = self.i
        chars: list[str] = []
        while True:
            c = self.cur()
            if c == 0x3E:  # >
                self.i += 1
                break
            if c < 0:
                raise self.err("invalid capture group name", start)
            if c == 0x5C:  # \u escapes are allowed in names
                if self.cur(1) != 0x75:
                    raise self.err("invalid capture group name", start)
                self.i += 2
                code = self._name_unicode_escape()
                if code is None:
                    raise self.err("invalid capture group name", start)
            else:
                code = c
                self.i += 1
                if 0xD800 <= c <= 0xDBFF and 0xDC00 <= self.cur() <= 0xDFFF:
                    code = 0x10000 + ((c - 0xD800) << 10) + (self.cur() - 0xDC00)
                    self.i += 1
            ch = chr(code)
            ok = (ch in "$_" or ch.isidentifier()) if not chars else \
                (ch in "$\u200c\u200d" or ("a" + ch).isidentifier())
            if not ok:
                raise self.err("invalid capture group name", start)
            chars.append(ch)
        if not chars:
            raise self.err("invalid capture group name", start)
        return "".join(chars)

    def _name_unicode_escape(self) -> int | None:
        if self.cur() == 0x7B:  # \u{...}
            end = self.i + 1
            while end < self.n and self.s[end] != 0x7D:
                end += 1
            digits = "".join(chr(u) for u in self.s[self.i + 1:end])
            if end >= self.n or not digits or not _is_hex(digits) or int(digits, 16) > 0x10FFFF:
                return None
            self.i = end + 1
            return int(digits, 16)
        value = self._hex(4)
        if value is None:
            return None
        if 0xD800 <= value <= 0xDBFF and self.cur() == 0x5C and self.cur(1) == 0x75:
            save = self.i
            self.i += 2
            low = self._hex(4)
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            self.i = save
        return value

    def _hex(self, count: int) -> int | None:
        digits = "".join(chr(u) for u in self.s[self.i:self.i + count] if u < 128)
        if len(digits) != count or not _is_hex(digits):
            return None
        self.i += count
        return int(digits, 16)

    def atom_escape(self) -> Node:
        """``\\`` outside a class (the cursor is on the backslash)."""
        nxt = self.cur(1)
        if nxt < 0:
            raise self.err("\\ at end of pattern")
        if 0x31 <= nxt <= 0x39:  # \1 .. \9: a back-reference when that group exists
            start = self.i
            self.i += 1
            number = self._digits()
            assert number is not None
            if number != INF and number <= self.total_groups:
                return ("backref", number)
            self.i = start
            if nxt in (0x38, 0x39):  # \8 \9: the digit itself
                self.i += 2
                return self._set(((nxt, nxt),))
            self.i += 1
            unit = self._octal()
            return self._set(((unit, unit),))
        if nxt == 0x30:
            self.i += 1
            unit = self._octal()
            return self._set(((unit, unit),))
        if chr(nxt) in _CLASS_ESCAPES:
            self.i += 2
            return self._set(_CLASS_ESCAPES[chr(nxt)])
        if nxt == 0x6B and self.has_names:  # \k<name>
            at = self.i
            self.i += 2
            if self.cur() != 0x3C:
                raise self.err("invalid named reference", at)
            self.i += 1
            name = self.group_name()
            self.named_refs.append((name, at))
            return ("backref", name)
        self.i += 1
        unit = self.character_escape(in_class=False)
        return self._set(((unit, unit),))

    def _octal(self) -> int:
        """Annex B's legacy octal escape (the cursor is on its first digit)."""
        value = self.cur() - 0x30
        self.i += 1
        if 0x30 <= self.cur() <= 0x37:
            value = value * 8 + self.cur() - 0x30
            self.i += 1
            if value < 32 and 0x30 <= self.cur() <= 0x37:
                value = value * 8 + self.cur() - 0x30
                self.i += 1
        return value

    def character_escape(self, in_class: bool) -> int:
        """One escaped unit (the cursor is past the backslash)."""
        c = self.cur()
        simple = {0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09, 0x76: 0x0B}
        if c in simple:
            self.i += 1
            return simple[c]
        if c == 0x63:  # \c
            letter = self.cur(1)
            if 0x41 <= (letter & ~0x20) <= 0x5A:
                self.i += 2
                return letter & 0x1F
            if in_class and (0x30 <= letter <= 0x39 or letter == 0x5F):
                self.i += 2
                return letter & 0x1F
            return 0x5C  # a literal backslash; the 'c' is read next
        if c == 0x30 and not (0x30 <= self.cur(1) <= 0x39):
            self.i += 1
            return 0
        if 0x30 <= c <= 0x37:
            return self._octal()
        if c == 0x78:  # \xHH
            self.i += 1
            value = self._hex(2)
            return 0x78 if value is None else value
        if c == 0x75:  # \uHHHH
            self.i += 1
            value = self._hex(4)
            return 0x75 if value is None else value
        if c == 0x6B and self.has_names:  # with named groups, \k is never an identity
            raise self.err("invalid escape")
        self.i += 1
        return c  # identity escape

    def char_class(self) -> Node:
        open_at = self.i
        self.i += 1
        negated = False
        if self.cur() == 0x5E:
            negated = True
            self.i += 1
        ranges: list[tuple[int, int]] = []
        while True:
            if self.i >= self.n:
                raise self.err("unterminated character class", open_at)
            if self.cur() == 0x5D:
                self.i += 1
                break
            first, first_is_class = self.class_atom()
            if self.cur() != 0x2D:  # -
                ranges.extend(first)
                continue
            self.i += 1
            if self.i >= self.n:
                raise self.err("unterminated character class", open_at)
            if self.cur() == 0x5D:  # a trailing dash is literal
                ranges.extend(first)
                ranges.append((0x2D, 0x2D))
                continue
            at = self.i
            second, second_is_class = self.class_atom()
            if first_is_class or second_is_class:  # \d-x: the dash is literal (Annex B)
                ranges.extend(first)
                ranges.append((0x2D, 0x2D))
                ranges.extend(second)
                continue
            lo, hi = first[0][0], second[0][0]
            if lo > hi:
                raise self.err("range out of order in character class", at)
            ranges.append((lo, hi))
        result = _normalize(ranges)
        if self.ignore_case:
            result = _case_closure(result)
        return ("set", _negate(result) if negated else result)

    def class_atom(self) -> tuple[list[tuple[int, int]], bool]:
        """One class atom: its units, and whether it was a class escape (\\d, \\w …)."""
        c = self.cur()
        if c != 0x5C:
            self.i += 1
            return [(c, c)], False
        nxt = self.cur(1)
        if nxt < 0:
            raise self.err("\\ at end of pattern")
        if nxt == 0x62:  # \b: backspace
            self.i += 2
            return [(8, 8)], False
        if chr(nxt) in _CLASS_ESCAPES:
            self.i += 2
            return list(_CLASS_ESCAPES[chr(nxt)]), True
        self.i += 1
        if 0x38 <= nxt <= 0x39:
            self.i += 1
            return [(nxt, nxt)], False
        unit = self.character_escape(in_class=True)
        return [(unit, unit)], False


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


# ---------------------------------------------------------------------------------------
# Linear-time matching with RE2 over the code units.

_SURROGATE_SHIFT: Final = 0xF0000 - 0xD800


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
    if kind == "set":
        return _re2_ranges(node[1])
    if kind == "seq":
        parts = [_re2_source(n, multiline) for n in node[1]]
        return None if None in parts else "(?:" + "".join(p for p in parts if p) + ")"
    if kind == "alt":
        parts = [_re2_source(n, multiline) for n in node[1]]
        return None if None in parts else "(?:" + "|".join(p for p in parts if p is not None) + ")"
    if kind == "group":
        inner = _re2_source(node[2], multiline)
        return None if inner is None else "(?:" + inner + ")"
    if kind == "repeat":
        lo, hi = node[1], node[2]
        inner = _re2_source(node[3], multiline)
        if inner is None or lo > 1000 or hi > 1000:
            return None
        suffix = "{%d,}" % lo if hi == INF else "{%d,%d}" % (lo, hi)
        return "(?:" + inner + ")" + suffix
    if kind == "bol":
        return None if multiline else r"\A"
    if kind == "eol":
        return None if multiline else r"\z"
    if kind == "boundary":  # RE2's \b is ECMAScript's (ASCII word characters); its \B
        return None if node[1] else r"\b"  # also matches inside a multi-byte character
    return None  # lookaround, back-references


# ---------------------------------------------------------------------------------------
# The backtracking matcher (back-references, lookaround), with a step budget.

class _Budget(Exception):
    pass


Cont = Callable[[int], bool]


class _Matcher:
    def __init__(self, tree: Node, groups: int, names: dict[str, int], ignore_case: bool,
                 multiline: bool) -> None:
        self.tree = tree
        self.groups = groups
        self.names = names
        self.ignore_case = ignore_case
        self.multiline = multiline

    def search(self, units: list[int]) -> bool:
        self.s = units
        self.caps: list[tuple[int, int] | None] = [None] * (self.groups + 1)
        self.steps = 0
        for start in range(len(units) + 1):
            self.caps = [None] * (self.groups + 1)
            if self.m(self.tree, start, False, lambda _i: True):
                return True
        return False

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MATCH_STEP_BUDGET:
            raise _Budget

    def m(self, node: Node, i: int, back: bool, k: Cont) -> bool:
        self._tick()
        kind = node[0]
        s = self.s
        if kind == "set":
            if back:
                return i > 0 and _contains(node[1], s[i - 1]) and k(i - 1)
            return i < len(s) and _contains(node[1], s[i]) and k(i + 1)
        if kind == "seq":
            items = node[1][::-1] if back else node[1]
            return self._seq(items, 0, i, back, k)
        if kind == "alt":
            return any(self.m(alt, i, back, k) for alt in node[1])
        if kind == "group":
            index = node[1]
            if index is None:
                return self.m(node[2], i, back, k)

            def close(j: int) -> bool:
                old = self.caps[index]
                self.caps[index] = (j, i) if back else (i, j)
                if k(j):
                    return True
                self.caps[index] = old
                return False
            return self.m(node[2], i, back, close)
        if kind == "repeat":
            return self._repeat(node, i, back, k, 0)
        if kind == "bol":
            return (i == 0 or (self.multiline and _contains(_LINE_TERMINATORS, s[i - 1]))) and k(i)
        if kind == "eol":
            return (i == len(s) or (self.multiline and _contains(_LINE_TERMINATORS, s[i]))) \
                and k(i)
        if kind == "boundary":
            a = i > 0 and _contains(_WORD, s[i - 1])
            b = i < len(s) and _contains(_WORD, s[i])
            return ((a != b) != node[1]) and k(i)
        if kind == "look":
            _, behind, negated, body = node
            saved = list(self.caps)
            found = self.m(body, i, behind, lambda _j: True)
            if negated:
                self.caps = saved
                return not found and k(i)
            if not found:
                return False
            if k(i):
                return True
            self.caps = saved
            return False
        if kind == "backref":
            ref = node[1]
            index = self.names[ref] if isinstance(ref, str) else ref
            cap = self.caps[index] if index < len(self.caps) else None
            if cap is None:
                return k(i)
            text = s[cap[0]:cap[1]]
            n = len(text)
            if back:
                if i - n < 0 or not self._same(s[i - n:i], text):
                    return False
                return k(i - n)
            if i + n > len(s) or not self._same(s[i:i + n], text):
                return False
            return k(i + n)
        raise AssertionError(kind)

    def _same(self, a: list[int], b: list[int]) -> bool:
        if not self.ignore_case:
            return a == b
        canon = _canon_table()
        return all(canon[x] == canon[y] for x, y in zip(a, b))

    def _seq(self, items: list[Node], j: int, i: int, back: bool, k: Cont) -> bool:
        if j == len(items):
            return k(i)
        return self.m(items[j], i, back, lambda i2: self._seq(items, j + 1, i2, back, k))

    def _repeat(self, node: Node, i: int, back: bool, k: Cont, count: int) -> bool:
        _, lo, hi, body = node
        if hi != INF and count >= hi:
            return k(i)
        inner = _group_indices(body)

        def after(j: int) -> bool:
            if count >= lo and j == i:
                return False  # an iteration that matched nothing ends the loop
            return self._repeat(node, j, back, k, count + 1)

        def one() -> bool:
            saved = [self.caps[g] for g in inner]
            for g in inner:
                self.caps[g] = None
            if self.m(body, i, back, after):
                return True
            for g, v in zip(inner, saved):
                self.caps[g] = v
            return False

        if count < lo:
            return one()
        return one() or k(i)


def _group_indices(node: Node) -> list[int]:
    out: list[int] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n[0] == "group":
            if n[1] is not None:
                out.append(n[1])
            stack.append(n[2])
        elif n[0] in ("seq", "alt"):
            stack.extend(n[1])
        elif n[0] == "repeat":
            stack.append(n[3])
        elif n[0] == "look":
            stack.append(n[3])
    return out


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
        except (_Budget, RecursionError):
            raise UnsafeMatchError(
                self.pattern, len(name),
                f"it needs more than {MATCH_STEP_BUDGET:,} backtracking steps") from None


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
    try:
        tree = parser.parse()
    except RecursionError:
        raise PatternSyntaxError("nested too deeply", 0) from None
    re2_source = _re2_source(tree, "m" in flags)
    fast = _re2_compile(re2_source) if re2_source is not None else None
    compiled = ESPattern(pattern, flags, source, tree, parser.groups, dict(parser.names), fast)
    if len(_CACHE) >= 4096:
        _CACHE.clear()
    _CACHE[pattern] = compiled
    return compiled
