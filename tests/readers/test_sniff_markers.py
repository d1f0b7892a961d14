"""Detection's import shortcut (each `Reader`'s ``markers`` and ``top``, read from its
module's source) never changes what is detected.

Detection skips, without importing it, a reader none of whose marker byte strings is in
the head (its sniffer would score 0) or whose highest score cannot beat the best so far.
Both facts are checked here against the sniffers themselves: the highest score against
the integer literals their ``return`` statements give, the markers against every sample
file of every format (the committed fixtures here; the real corpus beside the repository
in the marked test), and detection against an exhaustive scoring of every reader.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest

from maxrepeat.readers import (
    HEAD_BYTES,
    Reader,
    Source,
    detect,
    get_reader,
)
from maxrepeat.readers.registry import reader_modules
from tests.conftest import CORPUS, EXAMPLES, FIXTURES, ROOT


def _scores(expr: ast.expr | None) -> set[int]:
    """The scores a returned expression can give: literals, or ``a if … else b``."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return _scores(expr.body) | _scores(expr.orelse)
    raise AssertionError(f"a sniffer returns {ast.dump(expr) if expr else None}: "
                         "not a literal score, so its highest score cannot be checked")


def _returned_ints(reader: Reader) -> set[int]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(reader.sniff)))
    return {v for ret in ast.walk(tree) if isinstance(ret, ast.Return)
            for v in _scores(ret.value)}


def _samples(*roots: Path) -> list[Path]:
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                  if p.is_file() and p.suffix.lower() in (".json", ".jsonl", ".traj", ".eval",
                                                          ".ndjson"))


#: format name -> module, in registry order (ties go to the earlier reader)
_MODULES = reader_modules()


def _exhaustive(head: bytes, source: Source) -> tuple[int, str] | None:
    """Detection's choice as it was before the shortcut: every reader scores."""
    best: tuple[int, str] | None = None
    for name in _MODULES:
        score = get_reader(name).sniff(head, source)
        if score > 0 and (best is None or score > best[0]):
            best = (score, name)
    return best


def _check(paths: list[Path]) -> int:
    checked = 0
    for path in paths:
        source = Source.from_path(path)
        for size in (HEAD_BYTES, HEAD_BYTES * 8):
            head = source.prefix(size)
            for name in _MODULES:
                score = get_reader(name).sniff(head, source)
                if score > 0:
                    markers = get_reader(name).markers
                    assert any(m in head for m in markers), (
                        f"{path}: {name} scores {score} but none of its markers is in the head")
                    assert score <= get_reader(name).top, (path, name, score)
            checked += 1
        want = _exhaustive(source.head, source)
        try:
            got = detect(source).name
        except Exception:
            got = None
        if want is not None and want[0] >= 80:  # decided on the head: the same choice
            assert got == want[1], path
    return checked


def test_every_format_has_hints_with_its_highest_score() -> None:
    for name in _MODULES:
        reader = get_reader(name)
        assert reader.markers, name
        assert max(_returned_ints(reader)) == reader.top, name


def test_markers_hold_on_every_committed_sample() -> None:
    paths = _samples(FIXTURES, ROOT / "tests" / "golden", ROOT / "tests" / "data", EXAMPLES)
    assert len(paths) > 20
    assert _check(paths) >= len(paths)


@pytest.mark.corpus
def test_markers_hold_on_the_corpus() -> None:
    paths = _samples(CORPUS)
    assert len(paths) > 20
    _check(paths)


def test_ambiguous_heads_pick_what_every_reader_scoring_picks() -> None:
    """Heads that several formats claim (markers of many readers in one head)."""
    heads = [
        b'{"id": "x", "events": [{"type": "tool_call"}], "schema_version": "ATIF-v1.4"}',
        b'{"events": [], "sessionId": "s", "type": "assistant", "message": {}}',
        b'[{"role": "user", "content": "```mswea_bash_command\\nls\\n```"}]',
        b'{"messages": [{"role": "assistant", "content": [{"type": "tool_use"}]}]}',
        b'{"traj": [{"role": "user"}], "task_id": 3, "info": {}}',
        b'{"instance_id": "a", "history": [{"source": "agent", "action": "run"}]}',
        b'{"trajectory": [{"action": "ls", "observation": "x"}], "history": []}',
        b'{"eval": {"task": "t", "run_id": "r"}, "samples": [{"role": "user"}]}',
        b'{"events": [{"type": "tool_result"}], "info": {}, "mini_version": "1"}',
        b"",
        b"not json at all",
    ]
    for head in heads:
        source = Source.from_bytes(head, "ambiguous.json")
        want = _exhaustive(head, source)
        try:
            got: str | None = detect(source).name
        except Exception:
            got = None
        assert got == (want[1] if want else None), head

