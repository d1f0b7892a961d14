"""A large JSON array of trajectories is read a range of items at a time (issue 18
item 11): the same items and results as loading it whole, memory that does not grow with
the number of runs, and with ``-j N`` units of at most `RANGE_ITEMS` results.

Sizes are small: the split threshold, block and range sizes are lowered in-process.
"""

from __future__ import annotations

import hashlib
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat.engines.batch import BatchGrader
from maxrepeat.engines.units import plan_units
from maxrepeat.readers import _array
from tests.readers.test_streaming import trajectories

CONFIGS = [maxrepeat.MaxRepeatConfig(2, max_cycle_period=2, match=m)
           for m in ("name", "name-args", "observation")]


def _items(raw: bytes, **sizes: int) -> list[bytes] | None:
    ranges = _array.array_ranges(io.BytesIO(raw), len(raw), **sizes)
    if ranges is None:
        return None
    fh = io.BytesIO(raw)
    out: list[bytes] = []
    for rng in ranges:
        assert rng.first == len(out)
        out += _array.read_range_items(fh, rng)
    return out


def _whole(raw: bytes) -> list[bytes] | None:
    try:
        body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
        return [bytes(r) for r in msgspec.json.decode(body, type=list[msgspec.Raw])]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(trajectories(), max_size=6),
       spaces=st.sampled_from(["", " ", "\n  ", "\t\r\n"]),
       block=st.integers(8, 300), items=st.integers(1, 4), bom=st.booleans())
def test_ranges_hold_exactly_the_items(docs: list[Any], spaces: str, block: int, items: int,
                                       bom: bool) -> None:
    """Whatever the formatting and however small the blocks, the ranges give the items
    msgspec slices from the whole array, or None (read whole); never others."""
    text = spaces + "[" + spaces + ("," + spaces).join(
        json.dumps(d, ensure_ascii=False) for d in docs) + spaces + "]" + spaces
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    got = _items(raw, block=block, items=items)
    if got is not None:
        assert got == _whole(raw)
    elif docs:
        pytest.fail("a valid non-empty array must be split")


@pytest.mark.parametrize("raw", [
    b'[{"a": "],[", "b": "\\"]"}, {"c": [1, {"d": "}, {"}]}, 12345, "x\\\\", 1e5]',
    b'[{"events": []}, {"events": [NaN]}]',  # msgspec refuses: the lenient whole read
    b'[{"events": []}, {"events": []}] trailing',
    b'[{"events": []}, {"events": []}',  # cut short
    b'[{"events": []},, {"events": []}]',
    b'[{"events": []} {"events": []}]',
    b'[]',
    b'{"events": []}',
    b'[{"n": 123456789012345678901234567890}, "caf\xc3\xa9 \xe2\x98\x83"]',
    b'[{"bad": "\xe9"}]',  # not UTF-8
    b'[' + b'[' * 5000 + b']' * 5000 + b']',
])
def test_odd_arrays(raw: bytes) -> None:
    """Odd and broken arrays are split exactly or left to the whole-file read."""
    got = _items(raw, block=16, items=2)
    if got is not None:
        assert got == _whole(raw)
    assert _items(b"[1, 2, 3]", block=2, items=1) == [b"1", b"2", b"3"]


def _write(path: Path, runs: int) -> Path:
    run = ('{"id":"r%d","events":[{"type":"turn_start"},{"type":"tool_call","data":'
           '{"toolName":"t","toolCallId":"c","arguments":{"i":%d}}},{"type":"tool_result",'
           '"data":{"toolCallId":"c","result":"ok"}},{"type":"turn_end"}]}')
    path.write_text("[" + ",\n".join(run % (i, i % 3) for i in range(runs)) + "]")
    return path


def _small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_array, "SPLIT_BYTES", 1024)
    monkeypatch.setattr(_array, "BLOCK_BYTES", 64 * 1024)
    monkeypatch.setattr(_array, "RANGE_ITEMS", 100)


def _graded(path: Path, trace: bool = True) -> tuple[str, int]:
    """A digest of the results (not the results: holding them would be what grows), and
    tracemalloc's peak while grading."""
    digest = hashlib.sha256()
    if not trace:
        with BatchGrader([str(path)], CONFIGS, jobs=1) as batch:
            for r in batch.results():
                digest.update(json.dumps(r.to_dict()).encode() + b"\n")
        return digest.hexdigest(), 0
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with BatchGrader([str(path)], CONFIGS, jobs=1) as batch:
            for r in batch.results():
                digest.update(json.dumps(r.to_dict()).encode() + b"\n")
        return digest.hexdigest(), tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _results(path: Path) -> list[Any]:
    with BatchGrader([str(path)], CONFIGS, jobs=1) as batch:
        return [r.to_dict() for r in batch.results()]


@pytest.mark.slow  # ~15 CPU-seconds: a large array graded twice, its memory measured
def test_large_array_memory_does_not_grow_with_the_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight times the runs, the same peak (loaded whole, the bytes and one slice per run
    were held: ~1 MB more here), and the results of the whole-file read."""
    small = _write(tmp_path / "small.json", 500)
    large = _write(tmp_path / "large.json", 4_000)
    whole = _graded(large, trace=False)[0]  # the default threshold: read whole
    _small_sizes(monkeypatch)
    assert len(list(plan_units([str(large)]))) == 40  # ranges of 100 runs
    _graded(small, trace=False)  # warm up
    split_small, peak_small = _graded(small)
    split_large, peak_large = _graded(large)
    print(f"peak {peak_small / 1e6:.2f} MB at 500 runs, {peak_large / 1e6:.2f} MB at 4,000")
    assert peak_large - peak_small < 300_000, (peak_small, peak_large)
    assert split_large == whole
    assert [r["trajectory"] for r in _results(large)[::3]] == [f"r{i}" for i in range(4_000)]


def test_workers_grade_ranges_of_an_array(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """With ``-j 2`` one array is graded by both workers, a range of runs per unit (a
    worker never returns the whole file's results at once), in input order."""
    path = _write(tmp_path / "runs.json", 2_000)  # above the size of files grouped in a unit
    whole = _results(path)
    _small_sizes(monkeypatch)
    with BatchGrader([str(path)], CONFIGS, jobs=2) as batch:
        assert batch.parallel
        outcomes = list(batch.outcomes())
        assert batch.used_pool
    assert len(outcomes) == 20
    assert all(len(o.graded) == 100 for o in outcomes)
    assert [r.to_dict() for o in outcomes for g in o.graded for r in g.results] == whole
