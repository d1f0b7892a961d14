"""The streaming path for one large JSON document gives exactly the in-memory results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat.engines.batch import BatchGrader
from maxrepeat.readers import Source
from maxrepeat.readers._vally_stream import stream_trajectories
from tests.conftest import call, result, turn

CONFIGS = [
    maxrepeat.MaxRepeatConfig(2, max_cycle_period=3, match=m)
    for m in ("name", "name-args", "observation")
]
VALUES: list[Any] = ["ok", "", None, 1, 1.0, 2.5, -0.0, True, [1, 2.0], {"b": 1, "a": [True]}, {},
                     "caf\u00e9 \u2603", {"n": 1e300}]


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool) -> list[Any]:
    monkeypatch.setenv("MAXREPEAT_STREAM_THRESHOLD", "0" if stream else str(1 << 40))
    return list(maxrepeat.read_trajectories(path, format="vally", errors="yield"))


def _view(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, maxrepeat.TrajectoryFormatError):
            out.append(("error", str(item)))
            continue
        out.append((item.to_dict(), item.source, item.lenient,
                    [maxrepeat.grade(item, c).to_dict() for c in CONFIGS]))
    return out


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    whole = _view(_read(path, monkeypatch, stream=False))
    streamed = _view(_read(path, monkeypatch, stream=True))
    assert streamed == whole
    return whole


def _write(tmp_path: Path, doc: Any, name: str = "t.json", prefix: bytes = b"") -> Path:
    path = tmp_path / name
    path.write_bytes(prefix + json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    return path


@st.composite
def trajectories(draw: st.DrawFn) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 12))):
        calls = []
        for k in range(draw(st.integers(1, 2))):
            cid = draw(st.sampled_from([f"c{n}-{k}", "dup"]))
            calls.append(call(draw(st.sampled_from(["bash", "read"])), cid,
                              draw(st.sampled_from(VALUES))))
            where = draw(st.sampled_from(["after", "after", "late", "before", "none"]))
            answer = result(cid, draw(st.sampled_from(VALUES)))
            if where == "after":
                calls.append(answer)
            elif where == "before":
                calls.insert(0, answer)
            elif where == "late":
                late.append(answer)
        events.extend(turn(*calls) if draw(st.booleans()) else calls)
    events.extend(late)
    doc: dict[str, Any] = {"events": events}
    if draw(st.booleans()):
        doc["id"] = draw(st.sampled_from(["run-1", 7, 2.5, True, None]))
    if draw(st.booleans()):
        doc["stimulus"] = draw(st.sampled_from([{"name": "s"}, {"name": 3}, "plain"]))
    return doc


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=trajectories(), wrap=st.sampled_from(["plain", "record", "array"]))
def test_stream_equals_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              doc: dict[str, Any], wrap: str) -> None:
    """Random trajectories read by streaming give the in-memory events and results."""
    shaped: Any = ({"trajectory": doc} if wrap == "record" else [doc, doc] if wrap == "array"
                   else doc)
    _same(_write(tmp_path, shaped), monkeypatch)


def test_stream_path_is_taken(tmp_path: Path) -> None:
    """A plain trajectory document is read by the streaming parser, not loaded whole."""
    path = _write(tmp_path, {"id": "r", "events": [call("bash", "c1", {"a": 1})]})
    items = list(stream_trajectories(Source.from_path(path)) or [])
    assert [t.label for t in items] == ["r"]


@pytest.mark.parametrize("raw", [
    b'{"events": [{"type": "tool_call", "data": {"toolName": "bash", "arguments": NaN}}]}',
    b'{"events": [{"type": "tool_call", "data": {"toolName": "b\\ud800"}}]}',
    b'{"events": [{"type": "tool_call", "data": {"toolName": "bash", "arguments": 1e999}}]}',
    b'{"events": [{"type": "tool_call", "data": {"toolName": "bash"}}',
    b'{"events": [{"type": "tool_call", "data": {"toolName": 5}}]}',
    b'{"events": [], "trajectory": {"events": '
    b'[{"type": "tool_call", "data": {"toolName": "x"}}]}}',
    b'{"events": null, "trajectory": {"events": '
    b'[{"type": "tool_call", "data": {"toolName": "x"}}]}}',
    b'{"events": "no"}',
    b'[{"events": []}, 3, {"events": [{"type": 1}]}]',
])
def test_unusual_documents_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes
                                 ) -> None:
    """Lenient, malformed and oddly shaped documents read the same either way."""
    path = tmp_path / "odd.json"
    path.write_bytes(raw)
    _same(path, monkeypatch)


def test_bom_document_matches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A byte order mark before the document does not change what is read."""
    path = _write(tmp_path, {"id": "b", "events": [call("bash", "c", 1)]}, prefix=b"\xef\xbb\xbf")
    assert _same(path, monkeypatch)[0][0]["id"] == "b"


GRADERS = [maxrepeat.MaxRepeatConfig(m, max_cycle_period=p, match=k)
           for m, p, k in ((1, 1, "observation"), (2, 3, "observation"), (1, 2, "name-args"),
                           (2, 10, "name"))] + [
    # a call the grader does not watch may hold the id another call's result answers
    maxrepeat.MaxRepeatConfig(1, max_cycle_period=2, match="observation", tools=["^bash$"]),
    maxrepeat.MaxRepeatConfig(1, match="observation", tools=["rea"]),
]


def _batch(path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool) -> list[Any]:
    monkeypatch.setenv("MAXREPEAT_STREAM_THRESHOLD", "0" if stream else str(1 << 40))
    errors: list[str] = []
    with BatchGrader([str(path)], GRADERS, jobs=1, on_error=errors.append) as batch:
        return [r.to_dict() for r in batch.results()] + errors


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=trajectories(), wrap=st.sampled_from(["plain", "record"]))
def test_bounded_grading_equals_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       doc: dict[str, Any], wrap: str) -> None:
    """A large single trajectory graded event by event (bounded memory) gives the results
    of grading it loaded whole, for every match mode and period."""
    path = _write(tmp_path, {"trajectory": doc} if wrap == "record" else doc)
    assert _batch(path, monkeypatch, stream=True) == _batch(path, monkeypatch, stream=False)


@pytest.mark.parametrize("raw", [
    b'{"id": "x", "events": [{"type": "tool_call", "data": {"toolName": 5}}]}',
    b'{"events": [{"type": "tool_call", "data": {"toolName": "a", "arguments": NaN}}]}',
    b'{"events": [{"type": "tool_call"',
])
def test_bounded_grading_reports_like_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             raw: bytes) -> None:
    """Malformed and lenient documents give the same results and messages either way."""
    path = tmp_path / "odd.json"
    path.write_bytes(raw)
    assert _batch(path, monkeypatch, stream=True) == _batch(path, monkeypatch, stream=False)
