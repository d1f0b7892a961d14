"""A fuzz target per reader (issue 30, row 4): a bad byte is the input's fault.

tests/readers/test_fuzz_readers.py mutates every seed and reads it with every reader; this file
keeps one target for each registered reader, seeded with that reader's own fixture, and
puts a lone surrogate (``\\ud800``, which JSON may spell and UTF-8 cannot hold) inside
its strings: in an ``arguments`` string that is JSON text, an ``input``, a result, a
name. Every reader must read it (or say where the file is wrong) and grade it as the
native ``vally`` reader does: never an internal error, the same result on the native and
the pure path. A reader registered later gets its target here at once; one without a
fixture folder fails the check below until it has one.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.core import accel
from maxrepeat.readers import reader_names
from tests.conftest import EXAMPLES, FIXTURES
from tests.readers.test_fuzz_readers import (
    SEED_SUFFIXES,
    _dump,
    _load_seed,
    _parse,
    _slots,
    read_everything,
)

_LONE = ("\ud800", "\udfff", "\\ud800")
#: examples per reader (scripts/sanitize.sh runs fewer, under ASan + UBSan)
FUZZ_EXAMPLES = int(os.environ.get("MAXREPEAT_READER_FUZZ_EXAMPLES", "25"))


def _seed(reader: str) -> bytes | None:
    folder = EXAMPLES if reader == "vally" else FIXTURES / reader
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix.lower() in SEED_SUFFIXES:
            data = _load_seed(path)
            if data and _parse(data) is not None:
                return data
    return None


SEEDS = {name: _seed(name) for name in reader_names()}
#: readers of an agent's SQLite database (OpenCode, OpenClaw): their fixture database
DB_SUFFIXES = (".db", ".sqlite")
DB_SEEDS = {name: dbs[0] for name in reader_names() if SEEDS[name] is None
            for dbs in [sorted(p for p in FIXTURES.joinpath(name).glob("*")
                               if p.suffix.lower() in DB_SUFFIXES)] if dbs}


def test_every_reader_has_a_seed() -> None:
    assert not [name for name, data in SEEDS.items() if data is None and name not in DB_SEEDS]


def _grade_on_both_paths(data: bytes, path: Path) -> None:
    cfg = MaxRepeatConfig(1, match="name-args")
    for traj in read_everything(data, path):
        was = accel.use_native(True)
        try:
            native = grade(traj, cfg)
            accel.use_native(False)
            pure = grade(traj, cfg)
        finally:
            accel.use_native(was)
        assert native.status in ("ok", "error") and "internal error" not in native.evidence
        assert native.to_dict() == pure.to_dict()
        json.dumps(native.to_dict(), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("reader", sorted(r for r in SEEDS if r not in DB_SEEDS))
@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_lone_surrogates_in_any_string(reader: str, data: st.DataObject,
                                       tmp_path: Path) -> None:
    seed = SEEDS[reader]
    if seed is None:
        pytest.skip("no seed (test_every_reader_has_a_seed fails)")
    parsed = _parse(seed)
    assert parsed is not None
    slots = [s for s in _slots(parsed[1]) if isinstance(s[0][s[1]], str)]
    for container, key in data.draw(st.lists(st.sampled_from(slots), min_size=1,
                                             max_size=4)) if slots else []:
        text = container[key]
        at = data.draw(st.integers(0, len(text)))
        container[key] = text[:at] + data.draw(st.sampled_from(_LONE)) + text[at:]
    _grade_on_both_paths(_dump(*parsed), tmp_path / f"seed-{reader}.json")


def _json_cells(db: sqlite3.Connection) -> list[tuple[str, str, str, Any]]:
    """(table, column, text, parsed text) of every text cell of ``db`` holding JSON."""
    cells = []
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        columns = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
        for column in columns:
            for (text,) in db.execute(f'SELECT "{column}" FROM "{table}"'):
                if isinstance(text, str) and text[:1] in "[{":
                    try:
                        cells.append((table, column, text, json.loads(text)))
                    except ValueError:
                        pass
    return cells


@pytest.mark.parametrize("reader", sorted(DB_SEEDS))
@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_lone_surrogates_in_database_strings(reader: str, data: st.DataObject,
                                             tmp_path: Path) -> None:
    """The SQLite readers: lone surrogates (JSON-escaped, as SQLite text can hold them)
    in the JSON of the database's rows are read and graded like any other text."""
    path = tmp_path / f"seed-{reader}{DB_SEEDS[reader].suffix}"
    shutil.copyfile(DB_SEEDS[reader], path)
    with closing(sqlite3.connect(path)) as db:
        cells = _json_cells(db)
        slots = [(cell, container, key) for cell in cells for container, key in _slots(cell[3])
                 if isinstance(container[key], str)]
        assert slots, reader
        for _cell, container, key in data.draw(st.lists(st.sampled_from(slots), min_size=1,
                                                       max_size=4)):
            text = container[key]
            at = data.draw(st.integers(0, len(text)))
            container[key] = text[:at] + data.draw(st.sampled_from(_LONE[:2])) + text[at:]
        for table, column, text, value in {id(c): c for c, _, _ in slots}.values():
            db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE "{column}" = ?',
                       (json.dumps(value), text))
        db.commit()
    _grade_on_both_paths(path.read_bytes(), path)


@pytest.mark.parametrize("reader,document", [
    ("openai-messages", [{"role": "assistant", "tool_calls": [{
        "id": f"c{i}", "type": "function",
        "function": {"name": "ls", "arguments": '{"d": "\ud800"}'}}]}
        for i in range(2)]),
    ("anthropic-messages", [{"role": "assistant", "content": [{
        "type": "tool_use", "id": f"c{i}", "name": "ls", "input": '{"d": "\ud800"}'}]}
        for i in range(2)]),
])
def test_a_lone_surrogate_in_arguments_is_graded(reader: str, document: object,
                                                 tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    data = json.dumps(document).encode()
    _grade_on_both_paths(data, path)
    from maxrepeat.readers import Source, read_source

    [traj] = list(read_source(Source.from_path(str(path)), reader))
    assert not isinstance(traj, Exception), traj
    result = grade(traj, MaxRepeatConfig(1, match="name-args"))
    assert (result.status, result.passed) == ("ok", False)
