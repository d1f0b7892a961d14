"""The parse tree of an ECMAScript pattern (`toolmatch._es_parser`) made plain before matching,
without changing which names it matches. Iterative throughout: a tree may nest 10,000
groups deep.

`simplify` flattens groups, sequences and alternatives, and rewrites the repeats whose
count does not matter: a body that only ever matches empty text (``(?:)``, ``()``,
``(?:\\b)``) repeated at least once is that body once, so ``(?:){99999999999}`` matches
every name as in V8; a body that matches empty text everywhere (``a?``, ``(?:a|)``) may
reach its minimum count with empty iterations, so ``(?:a|){1001}`` is ``(?:a|){0,1001}``
(when no back-reference can see its captures). A repeat node gains the fewest code units
its body consumes and the capture groups inside it; a lookaround node, whether its body
captures. Consecutive copies of one assertion without captures are one.

ECMAScript's semantics are the reference: V8 agrees with them except that it overflows
its stack (``RangeError``) when a match needs about 3.3 million empty iterations
(``(?:a?){99999999999}``); maxrepeat answers as ECMAScript specifies (see
docs/design/framework-semantics.md). No I/O here.

>>> from maxrepeat.core.toolmatch._es_parser import _Parser
>>> simplify(_Parser([ord(c) for c in "(?:(?:a))|(?:b|c)"], "").parse())
('alt', [('set', ((97, 97),)), ('set', ((98, 98),)), ('set', ((99, 99),))])
>>> simplify(_Parser([ord(c) for c in "(){2147483647}"], "").parse())
('seq', [])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._es_parser import MAX_COUNT, Node

__all__ = ["simplify", "depth"]

_EMPTY: Final[Node] = ("seq", [])
_ZERO_WIDTH: Final = ("bol", "eol", "boundary", "look")


@dataclass(frozen=True, slots=True)
class _Facts:
    """What `simplify` knows of a simplified node."""

    node: Node
    nullable: bool  # matches empty text at every position
    only_empty: bool  # never consumes a code unit
    least: int  # the fewest code units a match consumes
    captures: tuple[int, ...]  # the capture groups inside


def _children(node: Node) -> list[Node]:
    kind = node[0]
    if kind in ("seq", "alt"):
        return list(node[1])
    if kind == "group":
        return [node[2]]
    if kind in ("repeat", "look"):
        return [node[3]]
    return []


def has_backrefs(node: Node) -> bool:
    """Whether the tree holds a back-reference (numbered or named)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n[0] == "backref":
            return True
        stack.extend(_children(n))
    return False


def depth(node: Node) -> int:
    """How deep the tree nests."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in _children(n))
    return deepest


def simplify(tree: Node) -> Node:
    """The tree with the same matches, flattened and with its repeats rewritten (see the
    module's docstring). Without back-references, capture groups are plain groups."""
    backrefs = has_backrefs(tree)
    done: list[_Facts] = []
    stack: list[tuple[Node, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        children = _children(node)
        if not expanded and children:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(children))
            continue
        parts = done[len(done) - len(children):] if children else []
        del done[len(done) - len(children):]
        done.append(_rebuild(node, parts, backrefs))
    return done[0].node


def _rebuild(node: Node, parts: list[_Facts], backrefs: bool) -> _Facts:
    kind = node[0]
    if kind in ("seq", "alt"):
        return _sequence(kind, parts)
    if kind == "group":
        body = parts[0]
        if not backrefs or node[1] is None:
            return body
        return _Facts(("group", node[1], body.node), body.nullable, body.only_empty,
                      body.least, (node[1], *body.captures))
    if kind == "look":
        body = parts[0]
        return _Facts(("look", node[1], node[2], body.node, bool(body.captures)), False, True,
                      0, body.captures)
    if kind == "repeat":
        return _repeat(node[1], node[2], parts[0], backrefs)
    if kind == "set":
        return _Facts(node, False, False, 1, ())
    if kind == "backref":
        return _Facts(node, False, False, 0, ())
    return _Facts(node, False, True, 0, ())  # bol, eol, boundary


def _sequence(kind: str, parts: list[_Facts]) -> _Facts:
    items: list[Node] = []
    for part in parts:
        if part.node[0] == kind:
            items.extend(part.node[1])
        elif kind == "seq" and items and part.node == items[-1] and \
                part.node[0] in _ZERO_WIDTH and not part.captures:
            continue  # an assertion twice in a row holds once
        else:
            items.append(part.node)
    captures = tuple(g for part in parts for g in part.captures)
    if kind == "seq":
        facts = (all(p.nullable for p in parts), all(p.only_empty for p in parts),
                 sum(p.least for p in parts))
    else:
        facts = (any(p.nullable for p in parts), all(p.only_empty for p in parts),
                 min((p.least for p in parts), default=0))
    node = items[0] if len(items) == 1 else (kind, items)
    return _Facts(node, *facts, captures)


def _repeat(lo: int, hi: int, body: _Facts, backrefs: bool) -> _Facts:
    if hi == 0:
        return _Facts(_EMPTY, True, True, 0, ())
    if body.only_empty:  # each iteration stands where the first did
        return body if lo else _Facts(_EMPTY, True, True, 0, ())
    if lo and body.nullable and not (backrefs and body.captures):
        lo = 0  # the minimum is reached with empty iterations
    if lo >= MAX_COUNT and body.least:
        return _Facts(("set", ()), False, False, 1, ())  # longer than any name
    if lo == hi == 1:
        return body
    node = ("repeat", lo, hi, body.node, body.least, body.captures)
    return _Facts(node, lo == 0 or body.nullable, False, lo * body.least, body.captures)
