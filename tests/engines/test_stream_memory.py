"""A large single trajectory graded by streaming keeps memory flat in every match mode
(#17 item 3): the Python-side peak of both streamed paths (window by window,
`engines.windowed`, and through monitors, `engines.streamed`) does not grow with the
number of calls, ``observation`` mode included (each call's first result is resolved on
disk), and the results stay those of the in-memory path.

Sizes are small (the threshold is lowered instead of writing 512 MiB); the assertion is
on memory traced by tracemalloc, never on time.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import maxrepeat
from maxrepeat.core.monitor import tracker
from maxrepeat.engines import streamed
from maxrepeat.engines import unitgrader as unit_engine
from maxrepeat.engines.batch import BatchGrader
from maxrepeat.readers import _vally_stream, _windows
from tests.conftest import call, result, turn


def _write(path: Path, turns: int) -> Path:
    """``turns`` turns of one call each, every result different (the worst case for the
    answers a monitor would keep), with a short loop now and then."""
    events: list[dict[str, Any]] = []
    for i in range(turns):
        k = i % 3 if i % 500 < 12 else i
        events += turn(call("bash", f"c{i}", {"cmd": f"run {k}"}), result(f"c{i}", f"out {k}"))
    path.write_text(json.dumps({"id": "big", "events": events}))
    return path


_GRADE_LARGE = unit_engine._grade_large
_GRADE_STREAMED = streamed.grade_streamed


def _not_called(*args: Any) -> Any:
    raise AssertionError("the windowed path refused the document")


def _graded(path: Path, config: maxrepeat.MaxRepeatConfig,
            monkeypatch: pytest.MonkeyPatch, windowed: bool) -> tuple[list[Any], int]:
    """Results, and tracemalloc's peak while the streamed document is graded (above the
    memory in use when grading starts: detection and the reader's checks come before)."""
    peaks: list[int] = []

    def traced(*args: Any) -> Any:
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            return (_GRADE_LARGE if windowed else _GRADE_STREAMED)(*args)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1] - base)
            tracemalloc.stop()

    if not windowed:  # the monitor path: as for a document the windows refuse
        monkeypatch.setattr(_windows, "windowed_document", lambda source: None)
        monkeypatch.setattr(streamed, "grade_streamed", traced)
    else:
        monkeypatch.setattr(unit_engine, "_grade_large", traced)
        monkeypatch.setattr(streamed, "grade_streamed", _not_called)
    with BatchGrader([str(path)], [config], jobs=1) as batch:
        out = [r.to_dict() for r in batch.results()]
    return out, max(peaks, default=0)


@pytest.mark.parametrize("windowed", [True, False], ids=["windows", "monitors"])
@pytest.mark.parametrize("match", ["name", "name-args", "observation"])
def test_streamed_memory_does_not_grow_with_the_trajectory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, match: str, windowed: bool) -> None:
    """Six times the calls, about the same peak: a monitor keeping one entry per
    answered id (~200 B) would add ~2 MB here."""
    config = maxrepeat.MaxRepeatConfig(3, max_cycle_period=3, match=match)
    small = _write(tmp_path / "small.json", 2_000)
    large = _write(tmp_path / "large.json", 12_000)
    monkeypatch.setenv("MAXREPEAT_STREAM_THRESHOLD", "0")
    # ijson's C backend decodes a whole buffer of events before yielding the first, so the
    # peak follows the buffer: a small one here, both files many buffers long.
    monkeypatch.setattr(_vally_stream, "_CHUNK", 64 * 1024)
    monkeypatch.setattr(streamed, "_BATCH", 256)  # rows written to the database at once
    monkeypatch.setattr(tracker, "SHARED_ANSWERS", 256)  # the monitor's table of equal results
    monkeypatch.setattr(_windows, "WINDOW", 32 * 1024)  # events decoded at a time
    _graded(small, config, monkeypatch, windowed)  # warm up: imports, caches
    streamed_small, peak_small = _graded(small, config, monkeypatch, windowed)
    streamed_large, peak_large = _graded(large, config, monkeypatch, windowed)
    print(f"{match} ({'windows' if windowed else 'monitors'}): "
          f"peak {peak_small / 1e6:.2f} MB at 2,000 calls, "
          f"{peak_large / 1e6:.2f} MB at 12,000")
    assert peak_large - peak_small < 400_000, (peak_small, peak_large)
    monkeypatch.setenv("MAXREPEAT_STREAM_THRESHOLD", str(1 << 40))
    in_memory, peak = _graded(large, config, monkeypatch, windowed)
    assert peak == 0  # not streamed
    assert streamed_large == in_memory
    assert streamed_large[0]["passed"] is False
