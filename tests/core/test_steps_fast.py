"""The C-level grouping and cached fingerprints equal their one-event-at-a-time definitions."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig
from maxrepeat.core.canonical import canonical_bytes, is_empty
from maxrepeat.core.events import Event, EventData
from maxrepeat.core.fingerprints import digest, fingerprint_keys, name_bytes, step_key
from maxrepeat.core.steps import MISSING, group_steps, group_steps_loop, watcher
from tests.strategies import json_values

VALUES: list[Any] = [None, "ok", " ", "", 1, 1.0, [], {}, {"a": 1}, {"a": 1.0}, [True],
                     msgspec.Raw(b'{"a":1.0}'), msgspec.Raw(b'{"a":1}'), msgspec.Raw(b'"ok"'),
                     msgspec.Raw(b'"  "'), msgspec.Raw(b"null"), msgspec.Raw(b"[1e400]"),
                     msgspec.Raw(b"[]")]


@st.composite
def events(draw: st.DrawFn) -> list[Event]:
    out: list[Event] = []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["call", "call", "result", "start", "end", "message"]))
        cid = draw(st.sampled_from(["a", "b", "c", "d", None]))
        if kind == "call":
            out.append(Event("tool_call", EventData(
                tool_name=draw(st.sampled_from(["bash", "read", "run_bash"])), tool_call_id=cid,
                arguments=draw(st.sampled_from(VALUES)))))
        elif kind == "result":
            out.append(Event("tool_result", EventData(tool_call_id=cid,
                                                      result=draw(st.sampled_from(VALUES)))))
        else:
            out.append(Event({"start": "turn_start", "end": "turn_end"}.get(kind, "message")))
    return out


def _reference_keys(evs: list[Event], steps: list[list[int]], results: dict[str, Any],
                    cfg: MaxRepeatConfig) -> list[bytes | None]:
    keys: list[bytes | None] = []
    for step in steps:
        digests, empties = [], 0
        for i in step:
            data = evs[i].data
            nb = name_bytes(data.tool_name or "")
            if cfg.match == "name":
                digests.append(nb)
            elif cfg.match == "name-args":
                digests.append(digest(nb + canonical_bytes(data.arguments)))
            else:
                obs = results.get(data.tool_call_id, MISSING) if data.tool_call_id else MISSING
                if obs is MISSING or is_empty(obs):
                    empties += 1
                    digests.append(digest(nb + b"\x00no-observation"))
                else:
                    digests.append(digest(nb + canonical_bytes(obs)))
        empty = cfg.match == "observation" and empties and (
            empties == len(step) or cfg.max_cycle_period > 1)
        keys.append(None if empty else step_key(digests))
    return keys


@settings(max_examples=300, deadline=None)
@given(evs=events(), tools=st.sampled_from([None, ["bash"], ["^read$"]]))
def test_grouping_equals_loop(evs: list[Event], tools: list[str] | None) -> None:
    """Steps and first results match the event-by-event definition."""
    watches = watcher(MaxRepeatConfig(1, tools=tools))
    assert group_steps(evs, watches) == group_steps_loop(evs, watches)


@settings(max_examples=300, deadline=None)
@given(evs=events(), match=st.sampled_from(["name", "name-args", "observation"]),
       period=st.sampled_from([1, 3]))
def test_keys_equal_definition(evs: list[Event], match: str, period: int) -> None:
    """Cached per-call digests give exactly the keys of the plain definition."""
    cfg = MaxRepeatConfig(1, max_cycle_period=period, match=match)
    steps, results = group_steps_loop(evs, watcher(cfg))
    assert fingerprint_keys(evs, steps, results, cfg) == _reference_keys(evs, steps, results, cfg)


def test_call_without_name_is_reported() -> None:
    """A call whose tool name is not a string still raises the positioned error."""
    evs = [Event("tool_call", EventData(tool_name="a")), Event("tool_call", EventData())]
    try:
        group_steps(evs, lambda name: True)
    except ValueError as err:
        assert "events[1].data.toolName must be a string" in str(err)
    else:
        raise AssertionError("no error")


JSON_VALUES = json_values(floats=True, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, ascii_only=st.booleans())
def test_raw_values_compare_like_decoded_values(value: Any, ascii_only: bool) -> None:
    """A raw JSON slice has the canonical bytes (and emptiness) of the value it spells."""
    import json

    from maxrepeat.core.canonical import observation_bytes

    raw = msgspec.Raw(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))
    assert canonical_bytes(raw) == canonical_bytes(value)
    assert observation_bytes(raw) == (None if is_empty(value) else canonical_bytes(value))


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_inert_fast_path_matches_per_character(text: str) -> None:
    """Printable text is returned as is exactly when no character needs escaping."""
    import unicodedata

    from maxrepeat.core.preview import inert

    unsafe = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
    expected = "".join(
        (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
        if c != " " and unicodedata.category(c) in unsafe else c for c in text)
    assert inert(text) == expected
