"""Round trip: every registered reader's output, written as native JSON with
`Trajectory.to_dict()` and read back by the native reader, grades identically.

Inputs are every file under ``tests/fixtures/`` and, when present, every file of the shared
corpus (marked `corpus`), so a reader registered later is covered as soon as it has
fixtures or corpus files.
Files that no registered reader recognises yet are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, Trajectory, grade
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.readers import Source, detect, read_source
from maxrepeat.readers.vally import read_bytes_as_trajectories
from tests.conftest import CORPUS, FIXTURES

CONFIGS = (
    MaxRepeatConfig(max=1),
    MaxRepeatConfig(max=1, max_cycle_period=3, match="name-args"),
    MaxRepeatConfig(max=2, max_cycle_period=2, match="name"),
)
SKIP_SUFFIXES = (".md", ".txt", ".yaml", ".yml", ".py")


def _files(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    # (a `hooks/` folder holds an agent's recorded hook inputs, not trajectories)
    return sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")
                  and p.suffix not in SKIP_SUFFIXES and p.name != "provenance.jsonl"
                  and "hooks" not in p.relative_to(base).parts[:-1])


def _label(path: Path) -> str:
    base = FIXTURES if path.is_relative_to(FIXTURES) else CORPUS
    return str(path.relative_to(base))[-70:]


#: the fixtures always; the corpus files marked `corpus` (deselected when it is absent)
INPUTS = [pytest.param(p, id=_label(p)) for p in _files(FIXTURES)] + [
    pytest.param(p, id=_label(p), marks=pytest.mark.corpus) for p in _files(CORPUS)]


def _graded(t: Trajectory) -> list[dict[str, Any]]:
    out = []
    for config in CONFIGS:
        result = grade(t, config).to_dict()
        result["metadata"].pop("format")
        out.append(result)
    return out


@pytest.mark.parametrize("path", INPUTS)
def test_native_rewrite_grades_identically(path: Path) -> None:
    """Each trajectory read from the file and rewritten as native JSON grades the same."""
    source = Source.from_path(str(path))
    try:
        reader = detect(source)
    except TrajectoryFormatError:
        pytest.skip("no registered reader recognises this file yet")
    trajectories = [i for i in read_source(source, reader.name) if isinstance(i, Trajectory)]
    for t in trajectories:
        data = json.dumps(t.to_dict()).encode()
        back = list(read_bytes_as_trajectories(data, t.source or "<roundtrip>"))
        assert len(back) == 1 and isinstance(back[0], Trajectory), back
        assert back[0].format == "vally"
        assert _graded(back[0]) == _graded(t), t.label
