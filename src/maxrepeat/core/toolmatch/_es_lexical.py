"""The lexical parts of the ECMAScript pattern grammar (Annex B, without the ``u`` flag) as
V8 reads them: character escapes, character classes and group names, for `toolmatch._es_parser`.
No I/O here.
"""

from __future__ import annotations

from typing import Any

from ..errors import PatternSyntaxError
from ._es_charsets import _CLASS_ESCAPES, _case_closure, _negate, _normalize

# Nodes of the tree are tuples (see toolmatch._es_parser)
Node = tuple[Any, ...]


class _Lexical:
    """The cursor over a pattern's code units and the grammar's lexical productions."""

    s: list[int]
    n: int
    i: int
    ignore_case: bool
    has_names: bool

    def cur(self, k: int = 0) -> int:
        j = self.i + k
        return self.s[j] if j < self.n else -1

    def err(self, reason: str, at: int | None = None) -> PatternSyntaxError:
        return PatternSyntaxError(reason, self.i if at is None else at)

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
