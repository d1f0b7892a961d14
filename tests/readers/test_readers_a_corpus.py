"""The shared corpus through the atif, codex, gemini-cli and copilot-cli readers: every file
is detected as its format, read without error, and graded to a pinned figure; truncated
copies give an error naming the file and line, never a traceback.

The pinned figures are in ``tests/golden/corpus_<format>.json``. After a deliberate
change of a reader, rewrite them with ``MAXREPEAT_UPDATE_GOLDEN=1 pytest
tests/readers/test_readers_a_corpus.py`` (those runs fail), review the diff and run again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.core.events import Trajectory
from maxrepeat.readers import Source, detect, get_reader, read_source
from tests.conftest import CORPUS, ROOT, UPDATE_GOLDEN, rewrite_golden

pytestmark = pytest.mark.corpus

GOLDEN = ROOT / "tests" / "golden"
CONFIG = MaxRepeatConfig(max=1, max_cycle_period=2, match="name-args")
SYNTHETIC = "_synthetic_schema_fixtures"

#: format -> corpus folders (relative to the corpus) holding files of that format
FOLDERS: dict[str, tuple[str, ...]] = {
    "atif": ("atif",),
    "codex": (f"{SYNTHETIC}/codex",),
    "gemini-cli": ("gemini-cli", f"{SYNTHETIC}/gemini-cli"),
    "copilot-cli": (f"{SYNTHETIC}/copilot-cli",),
}


def corpus_files(fmt: str) -> list[Path]:
    """The corpus files of one format (empty when the corpus is absent)."""
    found: list[Path] = []
    for folder in FOLDERS[fmt]:
        base = CORPUS / folder
        if base.is_dir():
            found += sorted(p for p in base.iterdir() if p.is_file())
    return found


def rel(path: str) -> str:
    """A corpus path (possibly with a #run suffix) relative to the corpus folder."""
    return Path(path).relative_to(CORPUS).as_posix() if path.startswith(str(CORPUS)) else path


def figures(path: Path) -> list[dict[str, Any]]:
    """The grader's figure for each trajectory of one file."""
    out = []
    for item in read_source(Source.from_path(str(path))):
        assert isinstance(item, Trajectory), str(item)
        meta = grade(item, CONFIG).metadata
        out.append({"trajectory": rel(item.label), "occurrences": meta.occurrences,
                    "watchedCalls": meta.watched_calls})
    return out


CASES = [(fmt, p) for fmt in FOLDERS for p in corpus_files(fmt)]


@pytest.mark.parametrize("fmt,path", CASES, ids=[rel(str(p)) for _, p in CASES])
def test_corpus_file_is_detected_as_its_format(fmt: str, path: Path) -> None:
    """Auto-detection names the file's format."""
    assert detect(Source.from_path(str(path))).name == fmt


@pytest.mark.parametrize("fmt", list(FOLDERS))
def test_corpus_figures_match_the_golden_file(fmt: str) -> None:
    """Every file reads without error and grades to its pinned figure."""
    files = corpus_files(fmt)
    if not files:
        pytest.skip(f"no corpus files for {fmt}")
    got = {rel(str(p)): figures(p) for p in files}
    golden = GOLDEN / f"corpus_{fmt}.json"
    if UPDATE_GOLDEN:
        doc = {"config": {"max": 1, "max_cycle_period": 2, "match": "name-args"}, "files": got}
        rewrite_golden(golden, json.dumps(doc, indent=1) + "\n")
    assert got == json.loads(golden.read_text(encoding="utf-8"))["files"]


def _cut_mid_line(data: bytes) -> bytes:
    """The bytes up to the middle of the line that holds the file's midpoint."""
    mid = len(data) // 2
    start = data.rfind(b"\n", 0, mid) + 1
    end = data.find(b"\n", mid)
    end = len(data) if end < 0 else end
    return data[: start + max(1, (end - start) // 2)]


@pytest.mark.parametrize("fmt,path", CASES, ids=[rel(str(p)) for _, p in CASES])
def test_truncated_corpus_file_is_an_error_naming_file_and_line(
    fmt: str, path: Path, tmp_path: Path
) -> None:
    """A copy cut mid-line yields an error with the file and line, and no traceback."""
    cut = tmp_path / path.name
    cut.write_bytes(_cut_mid_line(path.read_bytes()))
    items = list(read_source(Source.from_path(str(cut)), fmt))
    errors = [i for i in items if isinstance(i, TrajectoryFormatError)]
    assert errors, items
    assert errors[0].source == str(cut) and errors[0].line is not None
    assert str(errors[0]).startswith(f"{cut}:{errors[0].line}:")


OTHER_FOLDERS = ("claude-code", "openai-chat", "swe-agent", "mini-swe-agent", "openhands",
                 "inspect-ai")


def test_sniffers_leave_other_formats_alone() -> None:
    """atif, codex, gemini-cli, copilot-cli and otel score 0 on the corpus's other formats."""
    for folder in OTHER_FOLDERS:
        for path in sorted((CORPUS / folder).glob("*")):
            source = Source.from_path(str(path))
            head = source.head
            for fmt in (*FOLDERS, "otel"):
                assert get_reader(fmt).sniff(head, source) == 0, (fmt, path.name)
