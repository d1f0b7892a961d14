"""A large trajectory graded window by window (`engines.windowed`, #17 item 3) gives
exactly the in-memory results: random trajectories, every match mode, with windows of a
few events and blocks of a few bytes, so that windows split turns, steps and runs at
every position; and the byte scanner finds the same boundaries natively and in Python.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat.core import accel, windowsearch
from maxrepeat.engines import _firstresults
from maxrepeat.engines.batch import BatchGrader
from maxrepeat.engines.driver import Graders
from maxrepeat.engines.windowed import grade_windowed, segments
from maxrepeat.readers import Source, _windows
from maxrepeat.readers._windows import WindowedDocument, scan_pure
from maxrepeat.readers.vally import read_one

_NAMES = ["bash", "grep", "ls"]
_VALUES: list[Any] = [None, {"cmd": "ls"}, {"cmd": "ls", "n": 1.0}, "x,]}", [1, {"a": "}"}],
                      {"a": [1, 2]}, "line\n\"q\"\\"]


@st.composite
def _events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turns, loose calls and results (ids reused, results before, after or far from
    their calls, some missing), with values that hold brackets, commas and escapes."""
    out: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 60))):
        kind = draw(st.sampled_from(["call", "call", "call", "result", "result", "start",
                                     "end"]))
        cid = draw(st.one_of(st.none(), st.sampled_from([f"c{i}" for i in range(8)])))
        if kind == "call":
            data: dict[str, Any] = {"toolName": draw(st.sampled_from(_NAMES))}
            if cid is not None:
                data["toolCallId"] = cid
            args = draw(st.sampled_from(_VALUES))
            if args is not None:
                data["arguments"] = args
            out.append({"type": "tool_call", "data": data})
        elif kind == "result":
            rdata: dict[str, Any] = {"toolCallId": cid}
            value = draw(st.sampled_from(_VALUES + [""]))
            if value is not None:
                rdata["result"] = value
            out.append({"type": "tool_result", "data": rdata})
        else:
            out.append({"type": "turn_start" if kind == "start" else "turn_end"})
    return out


def _doc(events: list[dict[str, Any]], indent: int | None, id_after: bool) -> str:
    body: dict[str, Any] = {} if id_after else {"id": "r1"}
    body["stimulus"] = {"name": "s"}
    body["events"] = events
    if id_after:
        body["id"] = 7
    return json.dumps(body, indent=indent)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=_events(), window=st.integers(1, 400), block=st.integers(1, 97),
       period=st.integers(1, 4), above=st.integers(1, 3), max_runs=st.integers(0, 3),
       indent=st.sampled_from([None, 1]), id_after=st.booleans(),
       native=st.booleans(), bloom=st.sampled_from([1, 8, None]), prune=st.booleans())
def test_windowed_equals_in_memory(tmp_path: Path, events: list[dict[str, Any]], window: int,
                                   block: int, period: int, above: int, max_runs: int,
                                   indent: int | None, id_after: bool, native: bool,
                                   bloom: int | None, prune: bool) -> None:
    """``bloom``: bytes of the filters that find the call ids spanning segments (one
    byte: nearly every id looks like one, which must change nothing); ``prune``: the
    covered steps' intervals no later run can reach are dropped at every window."""
    text = _doc(events, indent, id_after)
    path = tmp_path / "t.json"
    path.write_text(text)
    traj = read_one(text.encode(), str(path))
    configs = [maxrepeat.MaxRepeatConfig(above, max_cycle_period=period, match=m)
               for m in ("name", "name-args", "observation")]
    was = accel.use_native(native)
    sizes = _firstresults.SEEN_BYTES, _firstresults.SPANS_BYTES
    keep = windowsearch._COVER_KEEP
    if prune:
        windowsearch._COVER_KEEP = 0  # type: ignore[misc]
    if bloom is not None:
        _firstresults.SEEN_BYTES = _firstresults.SPANS_BYTES = bloom  # type: ignore[misc]
    try:
        doc = WindowedDocument(Source.from_path(path), window=window, block=block)
        graded = grade_windowed(doc, Graders(configs, max_runs=max_runs))
    finally:
        accel.use_native(was)
        _firstresults.SEEN_BYTES, _firstresults.SPANS_BYTES = sizes  # type: ignore[misc]
        windowsearch._COVER_KEEP = keep  # type: ignore[misc]
    assert graded is not None
    expected = [maxrepeat.grade(traj, c, max_runs=max_runs).to_dict() for c in configs]
    assert [r.to_dict() for r in graded.results] == expected


@settings(max_examples=100, deadline=None)
@given(events=_events(), window=st.integers(1, 300), block=st.integers(1, 50))
def test_windows_hold_the_documents_events(events: list[dict[str, Any]], window: int,
                                           block: int, tmp_path_factory: Any) -> None:
    """The events of all windows (and of all segments) are the in-memory reader's."""
    path = tmp_path_factory.mktemp("w") / "t.json"
    text = _doc(events, None, False)
    path.write_text(text)
    doc = WindowedDocument(Source.from_path(path), window=window, block=block)
    got: list[Any] = []
    for first, evs in doc.windows():
        assert first == len(got)
        got += evs
    whole = read_one(text.encode(), "t").events
    assert got == list(whole)
    assert doc.id == "r1"
    joined: list[Any] = []
    for first, evs in segments(doc.windows()):
        assert first == len(joined)
        joined += evs
    assert joined == list(whole)


@pytest.mark.skipif(not accel.available(), reason="the native extension is not built")
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
                    lambda inner: st.one_of(st.lists(inner, max_size=4),
                                            st.dictionaries(st.text(max_size=4), inner,
                                                            max_size=4)), max_leaves=12),
       st.integers(1, 9), st.booleans())
def test_native_scanner_equals_the_pure_one(value: Any, cut: int, first: bool) -> None:
    """Scanning the items of an array in blocks of ``cut`` bytes, resumed with the state
    each block leaves: the native scanner's answers are the pure one's."""
    from maxrepeat.core import _native

    data = msgspec.json.encode([value, value]) + b"]"
    data = data[1:]  # inside the array
    state_p = state_n = (0, 0, 0)
    for a in range(0, len(data), cut):
        part = data[:a + cut]
        got_p = scan_pure(part, a, *state_p, int(first))
        got_n = _native.scan_json(part, a, *state_n, int(first))
        assert got_p == got_n
        if got_p[0] < len(part):
            break
        state_p = state_n = got_p[1:4]


@pytest.mark.skipif(not accel.available(), reason="the native extension is not built")
@given(st.lists(st.text(max_size=3), max_size=30), st.lists(st.text(max_size=3), max_size=30),
       st.sampled_from([1, 2, 64]))
def test_native_bloom_equals_the_pure_one(first: list[str], second: list[str], size: int
                                          ) -> None:
    from maxrepeat.core import _native

    bits_p, bits_n = bytearray(size), bytearray(size)
    assert _firstresults.bloom_pure(bits_p, first, True) == _native.bloom(bits_n, first, 1)
    assert bits_p == bits_n
    hits = _firstresults.bloom_pure(bits_p, second, False)
    assert hits == _native.bloom(bits_n, second, 0)
    events = [maxrepeat.tool_call("x", k) for k in second] + [maxrepeat.turn_start()]
    assert _native.bloom_events(bits_n, events, 0) == hits
    assert set(range(len(second))) - set(hits) <= {i for i, k in enumerate(second)
                                                   if k not in first}  # never a false no


@pytest.mark.parametrize("text", [
    '{"events": [], "events": []}',  # a repeated key
    '{"trajectory": {"events": []}}',  # events not at the top level
    '{"events": [{"type": 1}]}',  # another shape: the checked path reports it
    '{"events": [{"type": "tool_call", "data": {}}]}',  # refused by events_readable
    '{"events": [{"type": "tool_call"}] } x',  # trailing bytes
    '{"events": [NaN]}',  # not msgspec's JSON
    '{"events": [{"type": "turn_start"}], "id": 1e999999}',  # a member msgspec refuses
    '{"\\u0065vents": []}',  # an escaped key
])
def test_documents_read_another_way(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    doc = WindowedDocument(Source.from_path(path), window=1, block=3)
    with pytest.raises(_windows._NotWindowed):
        for _ in doc.windows():
            pass


def test_batch_grades_a_large_document_by_windows(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``maxrepeat grade``'s engine takes the windowed path above the threshold (not the
    monitors), and a document it refuses still gets the in-memory results."""
    from maxrepeat.engines import streamed

    def refuse(*args: Any) -> Any:
        raise AssertionError("the monitor path was taken")

    events = []
    for i in range(40):
        events += [{"type": "turn_start"},
                   {"type": "tool_call", "data": {"toolName": "ls", "toolCallId": f"c{i}"}},
                   {"type": "tool_result", "data": {"toolCallId": f"c{i}", "result": "x"}},
                   {"type": "turn_end"}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"id": "w", "events": events}))
    config = maxrepeat.MaxRepeatConfig(3)
    monkeypatch.setenv("MAXREPEAT_STREAM_THRESHOLD", "0")
    monkeypatch.setattr(streamed, "grade_streamed", refuse)
    monkeypatch.setattr(_windows, "WINDOW", 64)
    with BatchGrader([str(path)], [config], jobs=1) as batch:
        out = [r.to_dict() for r in batch.results()]
    assert out == [maxrepeat.grade(read_one(path.read_bytes(), str(path)), config).to_dict()]
    assert out[0]["metadata"]["occurrences"] == 40


@pytest.mark.parametrize("names", ["aaababab", "abababaaab", "aabbaabbaab"])
def test_overlapping_runs_counted_once_across_windows(tmp_path: Path, names: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of different periods that overlap (``a a a b a b a b``: ``a`` at 0-2, ``a b``
    at 2-7) finish in different windows; the steps they share count once, even with the
    cover's unreachable intervals dropped at every window."""
    events = [{"type": "tool_call", "data": {"toolName": n}} for n in names]
    path = tmp_path / "t.json"
    path.write_text(_doc(events, None, False))
    monkeypatch.setattr(windowsearch, "_COVER_KEEP", 0)
    configs = [maxrepeat.MaxRepeatConfig(1, max_cycle_period=p, match="name") for p in (2, 3)]
    doc = WindowedDocument(Source.from_path(path), window=1, block=5)
    graded = grade_windowed(doc, Graders(configs, max_runs=0))
    assert graded is not None
    traj = read_one(path.read_bytes(), str(path))
    assert [r.to_dict() for r in graded.results] == [
        maxrepeat.grade(traj, c, max_runs=0).to_dict() for c in configs]
