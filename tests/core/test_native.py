"""The native fast path (core._native, optional C extension) equals the pure-Python
reference: the same step tables, fingerprints and results on random trajectories in all
three match modes, with periods and tools filters, read from JSON bytes (values as
msgspec.Raw slices) and given as dicts; the same canonical bytes for random JSON text;
the same BLAKE2b digests as hashlib. The golden cases run on both paths in
tests/core/test_golden_cases.py (the ``grading_path`` fixture)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat.core import accel
from maxrepeat.core.canonical import canonical_bytes, observation_bytes
from maxrepeat.core.fingerprints import build_step_table, build_step_table_pure, make_steps
from maxrepeat.core.grade import as_trajectory
from maxrepeat.readers.vally import read_bytes_as_trajectories
from tests.strategies import configs, json_values, trajectories

#: MAXREPEAT_NATIVE_EXAMPLES=5000 runs a longer campaign of the trajectory comparisons
EXAMPLES = int(os.environ.get("MAXREPEAT_NATIVE_EXAMPLES", "300"))

native = pytest.mark.skipif(not accel.available(),
                            reason="the native extension is not built (no C compiler)")


def test_the_extension_is_built_where_a_compiler_exists() -> None:
    """`pip install .` (scripts/test.sh) builds it wherever a C compiler exists, so the
    comparisons below run in CI and are never skipped there."""
    if shutil.which("cc") or shutil.which("gcc"):
        assert accel.available(), ("maxrepeat.core._native is not built: run "
                                   "`pip install -e .` again (scripts/test.sh does)")


def test_version_names_the_active_path() -> None:
    """`maxrepeat --version` says which path grades; MAXREPEAT_PURE=1 selects pure Python."""
    def version(**env: str) -> str:
        run = subprocess.run([sys.executable, "-m", "maxrepeat", "--version"],
                             capture_output=True, text=True, timeout=60, check=True,
                             env={**os.environ, **env})
        return run.stdout.strip()

    active = "native fast path" if accel.available() else "pure Python"
    assert version(MAXREPEAT_PURE="") == f"maxrepeat {maxrepeat.__version__} ({active})"
    assert version(MAXREPEAT_PURE="1") == f"maxrepeat {maxrepeat.__version__} (pure Python)"


@pytest.fixture
def both() -> Iterator[None]:
    was = accel.use_native(True)
    yield
    accel.use_native(was)


def _on(enabled: bool, fn: Any, *args: Any) -> Any:
    was = accel.use_native(enabled)
    try:
        return fn(*args)
    finally:
        accel.use_native(was)


def _table(table: Any) -> tuple[Any, ...]:
    return (list(map(list, table.steps)), type(table.steps).__name__, list(table.keys),
            list(table.ids), table.calls, dict(table.results), table.empty_steps,
            sum(1 for i in table.ids if i < 0))


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return ("ok", fn(*args))
    except Exception as err:  # both paths must fail alike too
        return ("raised", type(err).__name__, str(err))


def _compare(trajectory: Any, cfg: maxrepeat.MaxRepeatConfig) -> None:
    events = trajectory.events
    nat = _outcome(lambda: _table(build_step_table(events, cfg)))
    pure = _outcome(lambda: _table(build_step_table_pure(events, cfg)))
    assert nat == pure
    if nat[0] == "ok":
        assert make_steps(events, build_step_table(events, cfg), decode=True) == make_steps(
            events, build_step_table_pure(events, cfg), decode=True)
    got = _on(True, maxrepeat.grade, trajectory, cfg).to_dict()
    ref = _on(False, maxrepeat.grade, trajectory, cfg).to_dict()
    assert json.dumps(got, sort_keys=True) == json.dumps(ref, sort_keys=True)


def _spell(value: Any, style: int) -> str:
    """One JSON spelling of a trajectory: compact, spaced, or ASCII-escaped."""
    if style == 0:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if style == 1:
        return json.dumps(value, ensure_ascii=False, indent=1)
    return json.dumps(value, ensure_ascii=True)


@native
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(trajectories, configs(), st.integers(0, 2))
def test_native_equals_pure_on_random_trajectories(both: None, trajectory: dict[str, Any],
                                                   config: dict[str, Any], style: int) -> None:
    """Grading a random trajectory read from JSON bytes, and given as a dict, gives the
    same step table, steps and result on both paths (all modes, periods, tools filters)."""
    cfg = maxrepeat.MaxRepeatConfig.from_mapping(config)
    [read] = read_bytes_as_trajectories(_spell(trajectory, style).encode(), "t.json")
    _compare(read, cfg)
    _compare(as_trajectory(trajectory), cfg)


#: values whose canonical bytes are easy to get wrong (each also nested in an object)
AWKWARD = [1.0, -0.0, 0.5, 1e300, 1e16, 2**53, 2**53 + 1, 2**64, -(2**63), 12345678901234567,
           "é", "\u2028", "\ufeff", "\x7f", "\x00\x1f", "a\"b\\c/", "\U0001F600", " \t\n",
           "\u3000", "", [], {}, None, True, False, {"b": 1, "a": 2, "é": 3, "": 4},
           [[[]]], {"a": {"b": {}}}]
#: JSON texts that only raw input can spell (duplicate keys, escapes, exponents, lone
#: surrogates, whitespace, long integers)
TEXTS = [b'{"a":1,"a":2}', b'"\\ud800"', b'"\\udc00x"', b'["\\ud83d\\ude00"]', b'1E2', b'1e400',
         b'-1e400', b'[1.5e1, 2.50, -0.0e0]', b'{ "b" : [ 1 , 2 ] , "a" : null }', b'"\\/"',
         b'99999999999999999999', b'-0', b'9007199254740993', b'{"\\u00e9":1,"\xc3\xa9":2}',
         b'"\\u0009\\u000a "', b'"\\u00a0"', b'" "', b'"  x "', b'[ ]', b'{ }', b'0.1',
         b'123456789012345', b'1234567890123456', b'1.0000000000000001', b'[1e15,1e16]']


def _texts(value: Any) -> list[bytes]:
    out = [json.dumps(value, ensure_ascii=a, separators=s).encode()
           for a in (True, False) for s in ((",", ":"), (", ", ": "))]
    return out


def _check_text(raw: bytes) -> bool:
    """Native canonical bytes equal the reference's (or the native code defers to it);
    True when the native code answered itself."""
    from maxrepeat.core import _native

    answered = False
    for observe in (False, True):
        got = _native.canonical(raw, observe)
        ref = _outcome((observation_bytes if observe else canonical_bytes), msgspec.Raw(raw))
        if got is not False:
            answered = True
            assert ref == ("ok", got), (raw, observe)
    return answered


@native
def test_native_canonical_bytes_of_awkward_values() -> None:
    """Every awkward value and text: the native bytes equal the reference's, and most are
    answered natively (the comparison is not vacuous)."""
    answered = [_check_text(raw) for v in AWKWARD for raw in _texts(v) + _texts({"k": v})]
    answered += [_check_text(raw) for raw in TEXTS]
    assert sum(answered) > len(answered) // 2


@native
@settings(max_examples=5 * EXAMPLES, deadline=None)
@given(json_values(floats=True, max_leaves=12), st.booleans(), st.booleans())
def test_native_canonical_bytes_of_random_json(value: Any, ascii_only: bool,
                                               spaced: bool) -> None:
    """Random JSON text (floats, any text, nesting): native bytes equal the reference's."""
    raw = json.dumps(value, ensure_ascii=ascii_only,
                     separators=(", ", ": ") if spaced else (",", ":")).encode()
    _check_text(raw)


def _check_fast_object(raw: bytes) -> bool:
    """build_ids' own canonicalizer of plain-keyed objects equals the reference (or leaves
    the value to canon_raw); True when it answered."""
    from maxrepeat.core import _native

    got = _native.fast_canonical(raw)
    if got is False:
        return False
    assert _outcome(canonical_bytes, msgspec.Raw(raw)) == ("ok", got), raw
    return True


@native
def test_fast_object_canonical_bytes_of_awkward_values() -> None:
    """Objects holding every awkward value and text, keys in any order, duplicated keys,
    escaped and non-ASCII keys: the bytes equal the reference's, and plain ones are
    answered (the comparison is not vacuous)."""
    answered = [_check_fast_object(raw) for v in AWKWARD
                for raw in _texts({"z": v, "k": v, "a": [v]}) + _texts({"k": {"b": v, "a": 1}})]
    assert sum(answered) > len(answered) // 2  # the rest hold values canon_raw decides
    for text in TEXTS:
        for raw in (b'{"b":' + text + b',"a":' + text + b"}", b'{"k":' + text + b"}"):
            _check_fast_object(raw)
    for raw in (b'{"a":1,"a":2}', b'{"\\u00e9":1}', b'{"\xc3\xa9":1}', b'{"a\\"b":1}', b"{}",
                b'{"a":1} x', b'{"a":1,}', b'{"a" 1}', b'{"a":}', b'{"' + b"k" * 40 + b'":1}'):
        _check_fast_object(raw)
    assert _check_fast_object(b'{"' + b"k" * 40 + b'":1}')
    assert not _check_fast_object(b'{"a":1,"a":2}') and not _check_fast_object(b"{}")
    wide = b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(40)) + b"}"
    assert not _check_fast_object(wide)  # more members than it sorts in place


@native
@settings(max_examples=5 * EXAMPLES, deadline=None)
@given(st.dictionaries(st.text(st.characters(codec="ascii"), max_size=6),
                       json_values(floats=True, max_leaves=8), max_size=8),
       st.booleans())
def test_fast_object_canonical_bytes_of_random_objects(value: dict[str, Any],
                                                       spaced: bool) -> None:
    """Random objects (ASCII keys of any character, values of every JSON kind): the
    native bytes equal the reference's."""
    raw = json.dumps(value, separators=(", ", ": ") if spaced else (",", ":")).encode()
    _check_fast_object(raw)


@native
@given(st.binary(max_size=600))
def test_native_digest_is_blake2b(data: bytes) -> None:
    """The native BLAKE2b (16-byte digest) equals hashlib's, across block boundaries."""
    from maxrepeat.core import _native

    assert _native.digest(data) == hashlib.blake2b(data, digest_size=16).digest()


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-3, 3), max_size=60), st.integers(1, 6), st.integers(0, 12))
def test_native_stretches_equal_the_regex(ids: list[int], p: int, least: int) -> None:
    """The native stretch scan gives the regex scan's stretches."""
    from array import array

    from maxrepeat.core import search

    assert _on(True, search._stretches, ids, p, least, array("q", ids)) == \
        _on(False, search._stretches, ids, p, least)


@native
def test_unusual_trajectories_fall_back_to_the_reference(both: None) -> None:
    """A call without a string tool name is reported by the pure path (the native one
    hands it back), with the same error result."""
    bad = {"events": [{"type": "tool_call", "data": {"toolName": "a"}},
                      {"type": "tool_call", "data": {"toolName": 3}}]}
    text = json.dumps(bad).encode()
    for cfg in (maxrepeat.MaxRepeatConfig(1, match=m) for m in ("name", "observation")):
        # each lambda is called at once, in its own iteration: `cfg` is this one
        got = _on(True, lambda: [maxrepeat.grade(t, cfg).to_dict()  # noqa: B023
                                 for t in read_bytes_as_trajectories(text, "b.json")])
        ref = _on(False, lambda: [maxrepeat.grade(t, cfg).to_dict()  # noqa: B023
                                  for t in read_bytes_as_trajectories(text, "b.json")])
        assert got == ref


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["tool_call", "tool_result", "turn_start", "x"]),
                          st.sampled_from(["data", "no data", "no name"])), max_size=8))
def test_native_events_readable_equals_pure(shape: list[tuple[str, str]]) -> None:
    """The reader's check (every call has data with a tool name, every result has data)
    answers alike on both paths, for the reader's structs and the public events."""
    from maxrepeat.core.events import Event, EventData
    from maxrepeat.core.steps import events_readable, events_readable_pure
    from maxrepeat.readers.vally import _Data, _Event

    for event_type, data_type in ((_Event, _Data), (Event, EventData)):
        events = [event_type(type=t, data=None if d == "no data" else data_type(
            tool_name=None if d == "no name" else "bash")) for t, d in shape]
        assert _on(True, events_readable, events) is events_readable_pure(events)


@st.composite
def _valued_trajectories(draw: st.DrawFn) -> dict[str, Any]:
    """Turns of calls whose arguments and results are any JSON values (floats, any text,
    nesting), some of them repeated, so equal and unequal values both meet."""
    pool = draw(st.lists(json_values(floats=True, max_leaves=6), min_size=1, max_size=4))
    events: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 14))):
        if draw(st.booleans()):
            events.append({"type": "turn_start", "data": {}})
        for j in range(draw(st.integers(1, 2))):
            cid = f"c{i}.{j}" if draw(st.integers(0, 5)) else "dup"
            data: dict[str, Any] = {"toolName": draw(st.sampled_from(["bash", "read"])),
                                    "toolCallId": cid}
            if draw(st.integers(0, 4)):
                data["arguments"] = draw(st.sampled_from(pool))
            events.append({"type": "tool_call", "data": data})
            if draw(st.integers(0, 4)):
                events.append({"type": "tool_result",
                               "data": {"toolCallId": cid, "result": draw(st.sampled_from(pool))}})
    return {"events": events}


@native
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(_valued_trajectories(), st.sampled_from(["name", "name-args", "observation"]),
       st.integers(1, 3), st.integers(0, 2))
def test_native_equals_pure_with_any_json_values(both: None, trajectory: dict[str, Any],
                                                 match: str, period: int, style: int) -> None:
    """Arguments and results of every JSON kind (what the native code writes itself and
    what it hands back) give the same tables and results on both paths."""
    cfg = maxrepeat.MaxRepeatConfig(2, max_cycle_period=period, match=match)
    [read] = read_bytes_as_trajectories(_spell(trajectory, style).encode(), "t.json")
    _compare(read, cfg)
    _compare(as_trajectory(trajectory), cfg)


@native
def test_first_results_table_is_the_reference_mapping(both: None) -> None:
    """In observation mode the native table of first results (a C hash table) answers as
    the reference's dict: the first result of an id stays, a result before its call
    counts, ids without a result are absent, lookups of other objects miss."""
    events = [{"type": "tool_result", "data": {"toolCallId": "early", "result": "r0"}},
              {"type": "tool_call", "data": {"toolName": "a", "toolCallId": "early"}},
              {"type": "tool_call", "data": {"toolName": "a", "toolCallId": "c1"}},
              {"type": "tool_result", "data": {"toolCallId": "c1", "result": "first"}},
              {"type": "tool_result", "data": {"toolCallId": "c1", "result": "second"}},
              {"type": "tool_call", "data": {"toolName": "a", "toolCallId": "none"}},
              {"type": "tool_call", "data": {"toolName": "b", "toolCallId": "é\u2028"}},
              {"type": "tool_result", "data": {"toolCallId": "é\u2028", "result": [1]}}]
    events += [{"type": "tool_call", "data": {"toolName": "x", "toolCallId": f"k{i}"}}
               for i in range(3000)]  # the index grows
    events += [{"type": "tool_result", "data": {"toolCallId": f"k{i}", "result": i}}
               for i in range(0, 3000, 2)]
    text = json.dumps({"events": events}).encode()
    [read] = read_bytes_as_trajectories(text, "t.json")
    cfg = maxrepeat.MaxRepeatConfig(2, match="observation")
    nat = build_step_table(read.events, cfg).results
    ref = build_step_table_pure(read.events, cfg).results
    assert type(nat).__name__ == "FirstResults"
    assert len(nat) == len(ref) == 1503
    assert sorted(nat) == sorted(ref) and dict(nat) == dict(ref)
    assert bytes(nat["c1"]) == b'"first"' and bytes(nat["early"]) == b'"r0"'
    assert bytes(nat.get("é\u2028")) == b"[1]"
    for missing in ("none", "k1", "zz", 3, None, b"c1"):
        assert missing not in nat and nat.get(missing, "dflt") == "dflt"
    with pytest.raises(KeyError):
        nat["none"]


@native
@given(st.binary(max_size=40), st.binary(max_size=40))
def test_fast_hash_tells_parts_apart(a: bytes, b: bytes) -> None:
    """build_ids' 128-bit hash of one part: different bytes (trailing zero bytes and
    block boundaries included) give different hashes."""
    from maxrepeat.core import _native

    assert (_native.fast_hash(a) == _native.fast_hash(b)) == (a == b)
    assert _native.fast_hash(a) != _native.fast_hash(a + b"\x00")


@native
def test_grading_makes_no_blake2b_keys(both: None) -> None:
    """Grading compares step ids only: on the native path the BLAKE2b keys (published as
    Step.fingerprint) are made only when read, and then equal the reference's."""
    from maxrepeat.core.fingerprints import NativeKeys
    from maxrepeat.core.grade import _graded

    t = {"events": [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i),
                                                    "arguments": {"n": i % 2}}}
                    for i in range(8)]}
    cfg = maxrepeat.MaxRepeatConfig(2, match="name-args", max_cycle_period=2)
    result, _, table = _graded(t, cfg, None, 10)
    assert table is not None and isinstance(table.keys, NativeKeys)
    assert table.keys._keys is None and not result.passed
    assert list(table.keys) == build_step_table_pure(as_trajectory(t).events, cfg).keys
