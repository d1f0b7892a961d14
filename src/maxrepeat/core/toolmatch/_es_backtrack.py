"""The backtracking matcher of ECMAScript patterns (`core.toolmatch`), for the patterns
RE2 cannot run (back-references, lookaround), with ECMAScript's semantics over UTF-16 code
units and a budget of steps per name (`_Budget` past it). No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ._es_charsets import _LINE_TERMINATORS, _WORD, _canon_table, _contains
from ._es_parser import INF, Node

#: the backtracking matcher's budget of steps for one name (then `UnsafeMatchError`)
MATCH_STEP_BUDGET: Final = 200_000


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
            for alt in node[1]:  # a loop, not any(): Python calls only, off the C stack
                if self.m(alt, i, back, k):
                    return True
            return False
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
        if kind != "look":  # an anchor or a back-reference: one outcome at most
            j = self._at(node, i, back)
            return j >= 0 and k(j)
        _, behind, negated, body, _caps = node
        saved = list(self.caps)
        found = self.m(body, i, behind, lambda _j: True)
        if negated:  # its captures are not kept
            self.caps = saved
        if found == negated:
            return False
        if k(i):
            return True
        self.caps = saved  # a failed rest of the match leaves the captures as they were
        return False

    def _at(self, node: Node, i: int, back: bool) -> int:
        """Where an anchor or a back-reference leaves the match (at ``i``, or past the
        text referred to), or -1 when it fails; the step is counted by `m`."""
        kind = node[0]
        s = self.s
        if kind == "bol":
            ok = i == 0 or (self.multiline and _contains(_LINE_TERMINATORS, s[i - 1]))
        elif kind == "eol":
            ok = i == len(s) or (self.multiline and _contains(_LINE_TERMINATORS, s[i]))
        elif kind == "boundary":
            a = i > 0 and _contains(_WORD, s[i - 1])
            b = i < len(s) and _contains(_WORD, s[i])
            ok = (a != b) != node[1]
        elif kind == "backref":
            return self._backref(node, i, back)
        else:
            raise AssertionError(kind)
        return i if ok else -1

    def _same(self, a: list[int], b: list[int]) -> bool:
        if not self.ignore_case:
            return a == b
        canon = _canon_table()
        return all(canon[x] == canon[y] for x, y in zip(a, b, strict=True))

    def _seq(self, items: list[Node], j: int, i: int, back: bool, k: Cont) -> bool:
        # Items with one outcome at most (a code unit, a back-reference, an assertion
        # without captures) are stepped over in a loop: no recursion per item.
        while j < len(items) and items[j][0] in _ONE_WAY and \
                (items[j][0] != "look" or not items[j][4]):
            i = self._one_way(items[j], i, back)
            if i < 0:
                return False
            j += 1
        if j == len(items):
            return k(i)
        return self.m(items[j], i, back, lambda i2: self._seq(items, j + 1, i2, back, k))

    def _one_way(self, node: Node, i: int, back: bool) -> int:
        """Where a node with one outcome at most leaves the match, or -1 when it fails."""
        kind = node[0]
        s = self.s
        if kind == "set":
            self._tick()
            if back:
                return i - 1 if i > 0 and _contains(node[1], s[i - 1]) else -1
            return i + 1 if i < len(s) and _contains(node[1], s[i]) else -1
        if kind == "bol" and not self.multiline:
            self._tick()
            return i if i == 0 else -1
        if kind == "eol" and not self.multiline:
            self._tick()
            return i if i == len(s) else -1
        if kind == "backref":
            self._tick()
            return self._backref(node, i, back)
        end = [-1]

        def keep(j: int) -> bool:
            end[0] = j
            return True
        self.m(node, i, back, keep)
        return end[0]

    def _backref(self, node: Node, i: int, back: bool) -> int:
        """Where a back-reference leaves the match, or -1."""
        ref = node[1]
        index = self.names[ref] if isinstance(ref, str) else ref
        cap = self.caps[index] if index < len(self.caps) else None
        if cap is None:
            return i
        s = self.s
        text = s[cap[0]:cap[1]]
        n = len(text)
        if back:
            return i - n if i - n >= 0 and self._same(s[i - n:i], text) else -1
        return i + n if i + n <= len(s) and self._same(s[i:i + n], text) else -1

    def _run(self, node: Node, i: int, back: bool, k: Cont, count: int) -> bool:
        """A repeated body with one outcome at most: its iterations in a loop, then the
        rest of the match from the most iterations to the fewest allowed."""
        _, lo, hi, body, _least, _inner = node
        ends = [i]
        reached = count  # iterations made, ends[-1] where the last one left
        while hi == INF or reached < hi:
            self._tick()
            j = self._one_way(body, ends[-1], back)
            if j < 0:
                break
            if j == ends[-1]:  # an empty iteration: all the others would be too
                reached = max(reached, lo)
                break
            ends.append(j)
            reached += 1
        for t in range(len(ends) - 1, -1, -1):
            made = count + t if t < len(ends) - 1 else reached
            if made < lo:
                return False
            self._tick()
            if k(ends[t]):
                return True
        return False

    def _repeat(self, node: Node, i: int, back: bool, k: Cont, count: int) -> bool:
        _, lo, hi, body, least, inner = node
        if hi != INF and count >= hi:
            return k(i)
        if count < lo and (lo - count) * least > (i if back else len(self.s) - i):
            return False  # the iterations still needed cannot fit
        if body[0] in _ONE_WAY and (body[0] != "look" or not body[4]):
            return self._run(node, i, back, k, count)

        def after(j: int) -> bool:
            if count >= lo and j == i:
                return False  # an iteration that matched nothing ends the loop
            return self._repeat(node, j, back, k, count + 1)

        if inner:
            saved = [self.caps[g] for g in inner]
            for g in inner:
                self.caps[g] = None
            if self.m(body, i, back, after):
                return True
            for g, v in zip(inner, saved, strict=True):
                self.caps[g] = v
        elif self.m(body, i, back, after):
            return True
        return count >= lo and k(i)


_ONE_WAY: Final = ("set", "backref", "bol", "eol", "boundary", "look")
