"""Streaming stays linear in the length of one string (issue 30, row 7).

A large single-trajectory document is read in blocks (`readers/_windows.py`); a value
longer than a block keeps everything from its start in the buffer. Each read used to
copy that buffer again (a 16 / 32 / 64 MiB string took 3.2 / 9.6 / 29.9 s, against
1.55 s in memory for 64 MiB). Now each read at least doubles it: the reads, and so the
copies, grow with the logarithm of the value's length. Counted, not timed (a loaded
machine would make a timing flaky); bench figures are in the commit message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.readers import Source, _windows, read_source
from maxrepeat.readers._windows import WindowedDocument


def _document(path: Path, size: int) -> Path:
    doc = {"id": "r", "events": [
        {"type": "tool_call", "data": {"toolName": "bash", "toolCallId": "c1",
                                       "arguments": {"command": "a" * size}}},
        {"type": "tool_result", "data": {"toolCallId": "c1", "result": "ok"}}]}
    path.write_text(json.dumps(doc))
    return path


def test_one_long_string_is_read_in_a_logarithmic_number_of_copies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copied: list[int] = []
    more = _windows._Blocks.more

    def counting(self: _windows._Blocks) -> bool:
        copied.append(len(self.buf) - self.pos)  # the bytes kept, copied with the block
        return more(self)

    monkeypatch.setattr(_windows._Blocks, "more", counting)
    size = 4 << 20
    path = _document(tmp_path / "long.json", size)
    doc = WindowedDocument(Source.from_path(str(path)), block=4096)
    events = [e for _, window in doc.windows() for e in window]
    assert len(events) == 2
    assert len(copied) < 40, len(copied)  # 1,024 reads of one block each before
    assert sum(copied) < 4 * size, sum(copied)  # ~2,000 x the string before


def test_the_streamed_result_is_the_in_memory_one(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = _document(tmp_path / "long.json", 3 << 20)
    cfg = MaxRepeatConfig(1)
    [whole] = list(read_source(Source.from_path(str(path)), "vally"))
    monkeypatch.setenv("MAXREPEAT_STREAM_THRESHOLD", "1000")
    from maxrepeat.cli import main

    out = tmp_path / "out.json"
    try:
        main(["grade", str(path), "--max", "1", "-q", "--output-file", str(out)])
    except SystemExit:
        pass
    streamed = json.loads(out.read_text())["results"][0]
    assert streamed["passed"] == grade(whole, cfg).passed
