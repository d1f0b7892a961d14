"""Model turns from a trace tree: what the span-based scorers (Phoenix, LangSmith) share.

A platform that records a run as a tree of nodes (spans, runs) marks model calls and tool
calls by a kind. Read in start order, the tool nodes after one model node, up to the next,
form its turn, wherever they hang (LangGraph runs each parallel call in a node of its
own): the rule the OpenTelemetry reader applies to GenAI spans. Tool nodes before any
model node form one turn per parent (a trace with per-step spans and no model spans). A
tool node inside another tool node is that tool's own work, not a call of the model: it
is left out.

>>> nodes = [Node("a", "", "agent"), Node("m1", "a", "model"),
...          Node("t1", "a", "tool", "ls"), Node("t2", "a", "tool", "pwd"),
...          Node("m2", "a", "model"), Node("t3", "a", "tool", "ls"),
...          Node("t4", "t3", "tool", "inner")]
>>> model_turns(nodes)
[['ls', 'pwd'], ['ls']]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

__all__ = ["Node", "model_turns"]


class Node(NamedTuple):
    """One span or run, in start order: its id, its parent's id (``""`` for a root), its
    kind, and for a tool node the call it stands for."""

    id: str
    parent: str
    kind: Literal["model", "tool", "agent"] | str
    call: Any = None


def model_turns(nodes: Sequence[Node]) -> list[list[Any]]:
    """The calls of the tool nodes, grouped by model turn (``nodes`` in start order)."""
    kinds = {n.id: n.kind for n in nodes}
    parents = {n.id: n.parent for n in nodes}
    turns: list[list[Any]] = []
    key: tuple[str, str] | None = None
    model = ""
    for node in nodes:
        if node.kind == "model":
            model = node.id
        if node.kind != "tool" or _inside_tool(node.id, kinds, parents):
            continue
        here = (model, "") if model else ("", node.parent)
        if here != key:
            turns.append([])
            key = here
        turns[-1].append(node.call)
    return turns


def _inside_tool(node_id: str, kinds: dict[str, str], parents: dict[str, str]) -> bool:
    parent, seen = parents.get(node_id, ""), 0
    while parent and seen < 10_000:
        if kinds.get(parent) == "tool":
            return True
        parent, seen = parents.get(parent, ""), seen + 1
    return False
