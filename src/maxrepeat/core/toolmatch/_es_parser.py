"""The ECMAScript pattern grammar (Annex B, without the ``u`` flag), as V8 reads it:
a ``tools`` pattern's code units to the tree `core.toolmatch` matches with (RE2, or
`core.es_backtrack`). Raises `PatternSyntaxError` where ``new RegExp`` throws. No I/O.

>>> _Parser([ord(c) for c in "a|b"], "").parse()[0]
'alt'
"""

from __future__ import annotations

from typing import Final

from ._es_charsets import _ALL, _CLASS_ESCAPES, _DOT, Ranges, _case_closure
from ._es_lexical import Node, _Lexical

__all__ = ["Node", "INF", "MAX_COUNT", "MAX_NESTING"]

INF: Final = -1  # an unbounded quantifier's maximum
#: V8's largest repeat count (``kInfinity``): larger counts are read as it, and a maximum
#: of it means no maximum
MAX_COUNT: Final = 2**31 - 1
#: how many groups may be open inside one another: V8 compiles 10,000 nested capturing
#: groups and overflows its stack ("Stack overflow") at about 12,000 (Node 20, V8 11.3)
MAX_NESTING: Final = 10_000


# ---------------------------------------------------------------------------------------
# The tree. Nodes are tuples: ("set", ranges) ("seq", [..]) ("alt", [..])
# ("group", index|None, node) ("repeat", min, max, node) ("bol",) ("eol",)
# ("boundary", negated) ("look", behind, negated, node) ("backref", index|name);
# core.es_tree adds to repeats the fewest units their body consumes and the captures
# inside it, and to lookarounds whether their body captures. The lexical productions
# (escapes, classes, group names) are in core.es_lexical.


class _Parser(_Lexical):
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
        """The whole pattern, groups read with a stack of open ones (never recursion)."""
        open_groups: list[_Open] = []
        alts: list[Node] = []
        terms: list[Node] = []
        while True:
            c = self.cur()
            if c == 0x7C:  # |
                self.i += 1
                alts.append(_sequence(terms))
                terms = []
            elif c == 0x28:  # (
                if len(open_groups) >= MAX_NESTING:
                    raise self.err(f"nested too deeply (more than {MAX_NESTING:,} groups "
                                   "inside one another)")
                open_groups.append(self._open_group(alts, terms))
                alts, terms = [], []
            elif c >= 0 and c != 0x29:
                term = self.term()
                if term is not None:
                    terms.append(term)
            elif not open_groups:
                if c == 0x29:
                    raise self.err("unmatched ')'")
                break
            else:
                if c != 0x29:
                    raise self.err("unterminated group", open_groups[-1].at)
                self.i += 1
                group = open_groups.pop()
                atom, quantifiable = _close(group, _alternation(alts, terms))
                alts, terms = group.alts, group.terms
                terms.append(self.quantified(atom, quantifiable))
        for name, at in self.named_refs:
            if name not in self.names:
                raise self.err("invalid named capture referenced", at)
        return _alternation(alts, terms)

    def term(self) -> Node | None:
        """One term other than a group (the cursor is on it), with its quantifier."""
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
        if c == 0x2E:  # .
            self.i += 1
            atom = ("set", _ALL if self.dot_all else _DOT)
        elif c == 0x5B:  # [
            atom = self.char_class()
        elif c == 0x5C:
            atom = self.atom_escape()
        else:  # any other unit, ] { } included, stands for itself
            self.i += 1
            atom = self._set(((c, c),))
        return self.quantified(atom, True)

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
        return ("repeat", lo, hi, atom)

    def _interval(self) -> tuple[int, int] | None:
        """``{n}``, ``{n,}`` or ``{n,m}`` at the cursor (consumed), else None (untouched).
        A count above 2**31 - 1 is read as 2**31 - 1, and a maximum of 2**31 - 1 as no
        maximum, as V8 reads them."""
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
            hi = MAX_COUNT if upper is None else upper
        if self.cur() != 0x7D:
            self.i = start
            return None
        self.i += 1
        return lo, INF if hi >= MAX_COUNT else hi

    def _digits(self) -> int | None:
        start = self.i
        while 0x30 <= self.cur() <= 0x39:
            self.i += 1
        if self.i == start:
            return None
        digits = "".join(chr(u) for u in self.s[start:self.i]).lstrip("0")
        return MAX_COUNT if len(digits) > 10 else min(int(digits or "0"), MAX_COUNT)

    def _open_group(self, alts: list[Node], terms: list[Node]) -> _Open:
        """Past a group's opening (``(``, ``(?:``, ``(?=`` …, ``(?<name>``)."""
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
        return _Open(kind, index, open_at, alts, terms)

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
            if number <= self.total_groups:
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

class _Open:
    """A group being read: its kind, capture index, where it opened, and the alternatives
    and terms of the group around it (resumed when it closes)."""

    __slots__ = ("kind", "index", "at", "alts", "terms")

    def __init__(self, kind: str, index: int | None, at: int, alts: list[Node],
                 terms: list[Node]) -> None:
        self.kind, self.index, self.at, self.alts, self.terms = kind, index, at, alts, terms


def _sequence(terms: list[Node]) -> Node:
    return terms[0] if len(terms) == 1 else ("seq", terms)


def _alternation(alts: list[Node], terms: list[Node]) -> Node:
    if not alts:
        return _sequence(terms)
    return ("alt", [*alts, _sequence(terms)])


def _close(group: _Open, body: Node) -> tuple[Node, bool]:
    """The node of a closed group, and whether a quantifier may follow it."""
    if group.kind in ("capture", "group"):
        return ("group", group.index, body), True
    behind = group.kind.startswith("behind")
    return ("look", behind, group.kind.endswith("!"), body), not behind
