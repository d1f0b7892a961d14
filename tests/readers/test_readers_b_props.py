"""Properties of the chat-shaped readers: turns and result joins on generated
conversations, and no crash when any value of a fixture is replaced by another JSON value."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig, Trajectory, grade
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.readers import Source, get_reader, read_source
from tests.readers.test_readers_b import FIXTURES, MY_FORMATS
from tests.strategies import json_values

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: one response: the (tool name, arguments, result) of each parallel call
Response = list[tuple[str, dict[str, int], str]]
responses = st.lists(
    st.lists(st.tuples(st.sampled_from(["ls", "cat", "grep"]),
                       st.dictionaries(st.sampled_from("ab"), st.integers(0, 2), max_size=2),
                       st.sampled_from(["", "ok", "fail"])), min_size=0, max_size=3),
    max_size=6)


def _openai(conv: list[Response], order: list[int]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for r, calls in enumerate(conv):
        msgs.append({"role": "assistant", "content": None if calls else "thinking",
                     **({"tool_calls": [
                         {"id": f"c{r}.{n}", "type": "function",
                          "function": {"name": name, "arguments": json.dumps(args)}}
                         for n, (name, args, _) in enumerate(calls)]} if calls else {})})
        ns = sorted(range(len(calls)), key=lambda n: order[n % len(order)] if order else n)
        msgs += [{"role": "tool", "tool_call_id": f"c{r}.{n}", "content": calls[n][2]}
                 for n in ns]
    return msgs


def _anthropic(conv: list[Response]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for r, calls in enumerate(conv):
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "t"}] + [
            {"type": "tool_use", "id": f"c{r}.{n}", "name": name, "input": args}
            for n, (name, args, _) in enumerate(calls)]})
        if calls:
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"c{r}.{n}",
                 "content": [{"type": "text", "text": res}], "is_error": res == "fail"}
                for n, (_, _, res) in enumerate(calls)]})
    return msgs


def _turns(t: Trajectory) -> list[list[tuple[str, Any, Any, Any]]]:
    """Per turn, (name, arguments, result, success) of each call."""
    results = {e.data.tool_call_id: (e.data.result, e.data.success)
               for e in t.events if e.type == "tool_result"}
    turns: list[list[tuple[str, Any, Any, Any]]] = []
    for e in t.events:
        if e.type == "turn_start":
            turns.append([])
        elif e.type == "tool_call":
            res, ok = results.get(e.data.tool_call_id, (None, None))
            turns[-1].append((e.data.tool_name, e.data.arguments, res, ok))
    return turns


def _one(data: Any, fmt: str) -> Trajectory:
    (t,) = read_source(Source.from_bytes(json.dumps(data).encode(), "g.json"), fmt)
    assert isinstance(t, Trajectory), t
    return t


@SETTINGS
@given(responses, st.lists(st.integers(0, 5), max_size=3))
def test_openai_one_turn_per_response_with_joined_results(
        conv: list[Response], order: list[int]) -> None:
    """Each assistant message with calls is one turn holding exactly its calls, each joined
    to its own result whatever order the tool messages come in."""
    t = _one(_openai(conv, order), "openai-messages")
    assert _turns(t) == [[(n, a, r, True) for n, a, r in calls] for calls in conv if calls]


@SETTINGS
@given(responses)
def test_anthropic_one_turn_per_response_with_error_flags(conv: list[Response]) -> None:
    """Each assistant message with tool_use blocks is one turn; is_error sets success."""
    t = _one(_anthropic(conv), "anthropic-messages")
    assert _turns(t) == [[(n, a, r, r != "fail") for n, a, r in calls]
                         for calls in conv if calls]


JSON_VALUES = json_values(max_leaves=6)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return copy


JSON_FIXTURES = sorted(p for fmt in MY_FORMATS for p in (FIXTURES / fmt).iterdir()
                       if p.suffix in (".json", ".traj"))
DOCUMENTS = [(p.parent.name, json.loads(p.read_text())) for p in JSON_FIXTURES]


@SETTINGS
@given(st.data())
def test_any_value_replaced_reads_or_errors(data: st.DataObject) -> None:
    """A fixture with any one value swapped for another JSON value gives trajectories that
    grade, or errors that name the input; never an exception."""
    fmt, doc = data.draw(st.sampled_from(DOCUMENTS))
    path = data.draw(st.sampled_from(_paths(doc)))
    mutated = _replace(doc, path, data.draw(JSON_VALUES))
    raw = json.dumps(mutated).encode()
    source = Source.from_bytes(raw, "m.json")
    for name in MY_FORMATS:
        assert 0 <= get_reader(name).sniff(raw, source) <= 100
    for item in read_source(source, fmt):
        if isinstance(item, TrajectoryFormatError):
            assert item.source is not None and item.source.startswith("m.json")
        else:
            grade(item, MaxRepeatConfig(1, max_cycle_period=2, match="name-args"))
