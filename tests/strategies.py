"""Hypothesis strategies for random trajectories in the spec's JSON shape.

They aim at the corners of spec §3–4: turns and bare calls, parallel and duplicate calls,
stray turn boundaries, missing, empty, late, early and duplicated results, calls without
ids, deep-equal-but-differently-spelled values, repeated blocks of every period 1–10, and
words of overlapping runs of different periods (`loop_words`).
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

TOOLS = ["bash", "read", "edit", "run_bash"]
ARGS: list[Any] = [None, {"command": "ls"}, {"command": "ls", "n": 1}, {"n": 1.0, "command": "ls"},
                   {"x": True}, {"x": 1}, [1, 2], [2, 1], {}, "text"]
RESULTS: list[Any] = ["ok", "ok", "fail", "", "  \n", None, [], {}, {"rows": [1]}, 0, False, [0]]


@st.composite
def call_specs(draw: st.DrawFn) -> dict[str, Any]:
    """One call: tool, arguments, and what happens to its result."""
    return {
        "tool": draw(st.sampled_from(TOOLS)),
        "args": draw(st.sampled_from(ARGS)),
        "has_args": draw(st.booleans()),
        "result": draw(st.sampled_from(RESULTS)),
        # where the result goes: right after, at the end, before the call, nowhere, twice
        "placement": draw(st.sampled_from(["after", "after", "after", "end", "before",
                                           "missing", "twice"])),
        "has_id": draw(st.integers(0, 15)) > 0,
    }


@st.composite
def units(draw: st.DrawFn) -> dict[str, Any]:
    """A turn with calls, a bare call, or a stray boundary."""
    kind = draw(st.sampled_from(["turn", "turn", "turn", "bare", "stray_end", "stray_start",
                                 "open_turn", "message"]))
    calls = draw(st.lists(call_specs(), min_size=1, max_size=3)) if kind in (
        "turn", "bare", "open_turn") else []
    if kind == "bare":
        calls = calls[:1]
    return {"kind": kind, "calls": calls}


@st.composite
def unit_sequences(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Random units with repeated blocks mixed in (so long patterns actually occur)."""
    out: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            block = draw(st.lists(units(), min_size=1, max_size=10))
            out.extend(block * draw(st.integers(2, 4)))
        else:
            out.extend(draw(st.lists(units(), max_size=6)))
    return out


def build(units_: list[dict[str, Any]], tid: str = "t") -> dict[str, Any]:
    """A trajectory dict from units (fresh call ids each time, same content)."""
    counter = itertools.count()
    events: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []

    def emit_call(spec: dict[str, Any]) -> None:
        cid = f"c{next(counter)}"
        data: dict[str, Any] = {"toolName": spec["tool"]}
        if spec["has_id"]:
            data["toolCallId"] = cid
        if spec["args"] is not None or spec["has_args"]:
            data["arguments"] = spec["args"]
        res = {"type": "tool_result", "data": {"toolCallId": cid, "result": spec["result"],
                                               "success": True}}
        if spec["placement"] == "before":
            events.append(res)
        events.append({"type": "tool_call", "data": data})
        if spec["placement"] in ("after", "twice"):
            events.append(res)
        if spec["placement"] == "twice":
            events.append({"type": "tool_result", "data": {"toolCallId": cid, "result": "other"}})
        if spec["placement"] == "end":
            late.append(res)

    for unit in units_:
        kind = unit["kind"]
        if kind in ("turn", "open_turn"):
            events.append({"type": "turn_start", "data": {}})
            for spec in unit["calls"]:
                emit_call(spec)
            if kind == "turn":
                events.append({"type": "turn_end", "data": {}})
        elif kind == "bare":
            emit_call(unit["calls"][0])
        elif kind == "stray_end":
            events.append({"type": "turn_end", "data": {}})
        elif kind == "stray_start":
            events.append({"type": "turn_start", "data": {}})
        else:
            events.append({"type": "assistant_message", "data": {"content": "hm"}})
    events.extend(late)
    return {"id": tid, "events": events}


#: The actions of `loop_words`: letter -> (tool, arguments, result). Every match mode sees
#: the same word (tool, arguments and result all follow the letter).
LETTERS: dict[str, tuple[str, Any, Any]] = {
    "a": ("bash", {"command": "ls"}, "a.txt"),
    "b": ("read", {"path": "a.txt"}, "hello"),
    "c": ("bash", {"command": "make"}, "error 1"),
    "d": ("edit", {"path": "a.txt"}, "ok"),
}


@st.composite
def loop_words(draw: st.DrawFn) -> str:
    """Words made of repeated blocks of different periods put side by side, so that runs
    overlap: ``aaa`` + ``babab`` gives ``a a a b a b a b``, where ``a`` (period 1, steps 0-2)
    and ``a b`` (period 2, steps 2-7) share step 2. Runs of several periods sharing steps
    are what `loopSteps` and the reported run's tie-breaks must get right."""
    word = ""
    for _ in range(draw(st.integers(1, 5))):
        block = draw(st.text(alphabet="abcd", min_size=1, max_size=4))
        times = draw(st.integers(1, 5))
        # Start the block mid-way sometimes, so a copy overlaps the previous run's end.
        cut = draw(st.integers(0, len(block) - 1))
        word += (block * times)[cut:] if times > 1 else block
    return word


def word_units(word: str) -> list[dict[str, Any]]:
    """Units (see `build`) for a word: one turn per letter, result right after."""
    out = []
    for letter in word:
        tool, args, res = LETTERS[letter]
        out.append({"kind": "turn", "calls": [{"tool": tool, "args": args, "has_args": True,
                                                "result": res, "placement": "after",
                                                "has_id": True}]})
    return out


@st.composite
def mixed_sequences(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Random units, or an overlapping-runs word, or a word with random units around it."""
    kind = draw(st.sampled_from(["random", "word", "word+random"]))
    if kind == "random":
        return draw(unit_sequences())
    body = word_units(draw(loop_words()))
    if kind == "word":
        return body
    return draw(st.lists(units(), max_size=3)) + body + draw(st.lists(units(), max_size=3))


trajectories = mixed_sequences().map(build)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid grader config dict."""
    cfg: dict[str, Any] = {"max": draw(st.integers(1, 4))}
    cfg["max_cycle_period"] = draw(st.integers(1, 10))
    cfg["match"] = draw(st.sampled_from(["observation", "name", "name-args"]))
    if draw(st.integers(0, 3)) == 0:
        cfg["tools"] = draw(st.lists(st.sampled_from(["^bash$", "bash", "^re", "edit$"]),
                                     min_size=1, max_size=2))
    return cfg


def json_values(*, floats: bool = False, max_leaves: int = 10) -> st.SearchStrategy[Any]:
    """Any JSON value: null, booleans, integers and short strings, in lists and objects.
    ``floats`` adds finite floats, strings of whitespace and backslashes and any text but
    lone surrogates: the values whose canonical bytes are easiest to get wrong.

    The one strategy of plain JSON values for every test that needs one.
    """
    leaves = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8)
    if floats:
        leaves = (leaves | st.floats(allow_nan=False, allow_infinity=False)
                  | st.sampled_from(["", " ", "a\\b", "\n"])
                  | st.text(st.characters(blacklist_categories=["Cs"])))
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                     max_size=3),
        max_leaves=max_leaves,
    )
