"""How a hook call checks the agent's log against the state a previous call saved
(``guards/session.py``, issue 12 item 4 and issue 18 item 14).

Every call hashes again the first block and the block at the saved offset. By default a
log that grew since (an agent appended) has a round of further blocks checked, in turn;
a log that did not grow is checked whole, unless its identity, size and times are the
saved ones and were not too recent to vouch for it. ``MAXREPEAT_HOOK_CHECK=full`` checks
every block at every call."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from maxrepeat.core import accel
from maxrepeat.guards.logcheck import BLOCK, RACY, check_mode, file_stat
from maxrepeat.guards.session import GuardSession, Snapshot

LINE = b'{"pad": "' + b"x" * 1000 + b'"}\n'


@pytest.fixture(params=["hash128", "blake2b"])
def block_hash(request: pytest.FixtureRequest) -> Iterator[str]:
    """The native path (``hash128``: its name before issue 30; the blocks are BLAKE2b's
    there too now) or the pure path (``MAXREPEAT_PURE=1``)."""
    if request.param == "hash128" and not accel.available():
        pytest.skip("the native extension is not built")
    was = accel.use_native(request.param == "hash128")
    try:
        yield str(request.param)
    finally:
        accel.use_native(was)


@pytest.fixture(params=["appended", "full"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The default check (the variable unset) or ``MAXREPEAT_HOOK_CHECK=full``."""
    if request.param == "full":
        monkeypatch.setenv("MAXREPEAT_HOOK_CHECK", "full")
    else:
        monkeypatch.delenv("MAXREPEAT_HOOK_CHECK", raising=False)
    return str(request.param)


def _blocks_session(tmp_path: Path, log: Path) -> GuardSession:
    return GuardSession(tmp_path / "c", agent="test", session="S", log=str(log),
                        signature="sig")


def _read_and_store(tmp_path: Path, log: Path) -> None:
    with _blocks_session(tmp_path, log) as gs:
        snap = gs.restore()
        for _ in gs.lines(snap.offset if snap else 0, snap.lines if snap else 0):
            pass
        gs.store(Snapshot(gs.offset, gs.line_count, b"", []))


def _fresh(log: Path) -> None:
    """Make the log's times too recent to vouch for it, as they are right after a write,
    however long the machine then takes to get to the next call (a loaded machine can
    take more than `RACY` between two statements): its modification time an hour ahead."""
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(log, ns=(ahead, ahead))


def _settle(log: Path) -> None:
    """Wait until the log's times no longer are too recent to vouch for it."""
    past = time.time_ns() - 3600 * 10**9
    os.utime(log, ns=(past, past))  # undoes `_fresh`; the change time ages by itself
    deadline = time.monotonic() + 10
    while True:
        with log.open("rb") as fh:
            if not file_stat(fh.fileno())[1]:
                return
        assert time.monotonic() < deadline, "the log's times stay recent"
        time.sleep(2 * RACY / 1e9)


def _counting(gs: GuardSession) -> list[int]:
    """Count the whole blocks ``gs`` hashes from now on."""
    seen = [0]
    digest: Callable[[bytes | memoryview], bytes] = gs._hash

    def hashing(data: bytes | memoryview) -> bytes:
        seen[0] += len(data) == BLOCK
        return digest(data)

    gs._hash = hashing
    return seen


def test_check_mode_reads_the_variable() -> None:
    assert check_mode({}) == "appended"
    assert check_mode({"MAXREPEAT_HOOK_CHECK": ""}) == "appended"
    assert check_mode({"MAXREPEAT_HOOK_CHECK": "appended"}) == "appended"
    assert check_mode({"MAXREPEAT_HOOK_CHECK": "sampled"}) == "appended"  # former name
    for safe in ("full", "FULL", "ful", "sampeld", " full"):
        assert check_mode({"MAXREPEAT_HOOK_CHECK": safe}) == "full", safe


@pytest.mark.parametrize("settled", [False, True])
def test_a_rewrite_with_nothing_appended_is_seen_at_the_next_call(
        tmp_path: Path, mode: str, settled: bool, block_hash: str) -> None:
    """A same-length rewrite of a middle block, nothing appended (issue 18 item 14): in
    both modes the next call refuses the saved state. ``settled``: the state was saved
    when the log's times could vouch for it (the rewrite changes them); otherwise right
    after the log was written (the state says its times cannot vouch)."""
    log = tmp_path / "log.jsonl"
    body = LINE * (6 * BLOCK // len(LINE) + 3)
    log.write_bytes(body)
    (_settle if settled else _fresh)(log)
    _read_and_store(tmp_path, log)
    at = 3 * BLOCK + 500
    with log.open("r+b") as fh:  # in place: same file, same length
        fh.seek(at)
        fh.write(b"y")
    with _blocks_session(tmp_path, log) as gs:
        assert gs.restore() is None


def test_a_rewrite_made_together_with_an_append_is_seen_within_a_round(
        tmp_path: Path, mode: str, block_hash: str) -> None:
    """The one change the default check sees late: a same-length rewrite in the middle
    made while the log also grew. Each later call (the agent appending a line each
    time) checks the next blocks of the round, so it is seen within as many calls as
    the log has blocks; ``full`` sees it at once."""
    log = tmp_path / "log.jsonl"
    body = LINE * (6 * BLOCK // len(LINE) + 3)
    log.write_bytes(body)
    _read_and_store(tmp_path, log)
    at = 3 * BLOCK + 500
    log.write_bytes(body[:at] + b"y" + body[at + 1:] + LINE)
    calls = 0
    while True:
        calls += 1
        with _blocks_session(tmp_path, log) as gs:
            snap = gs.restore()
            if snap is None:
                break
            for _ in gs.lines(snap.offset, snap.lines):
                pass
            gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
        with log.open("ab") as fh:
            fh.write(LINE)
        assert calls <= len(body) // BLOCK, "the rewrite was never seen"
    if mode == "full":
        assert calls == 1


def test_an_untouched_log_is_not_hashed_again(tmp_path: Path, mode: str,
                                              block_hash: str) -> None:
    """Parallel calls of one turn, or the call before and the call after one tool run,
    often find the log as the previous call left it: by default only the first block and
    the block at the offset are hashed then; ``full`` hashes every block. A log whose
    times were too recent when the state was saved is hashed whole."""
    log = tmp_path / "log.jsonl"
    body = LINE * (6 * BLOCK // len(LINE) + 3)
    count = len(body) // BLOCK
    log.write_bytes(body)
    _fresh(log)
    _read_and_store(tmp_path, log)  # as right after the write: the times cannot vouch
    with _blocks_session(tmp_path, log) as gs:
        hashed = _counting(gs)
        assert gs.restore() is not None
        assert hashed[0] == count
    _settle(log)
    _read_and_store(tmp_path, log)  # now they can
    for _ in range(3):
        with _blocks_session(tmp_path, log) as gs:
            hashed = _counting(gs)
            snap = gs.restore()
            assert snap is not None
            assert hashed[0] == (count if mode == "full" else 1)
            gs.store(snap)
    os.utime(log)  # touched: the times changed, the bytes did not
    with _blocks_session(tmp_path, log) as gs:
        hashed = _counting(gs)
        assert gs.restore() is not None
        assert hashed[0] == count


def test_a_grown_log_costs_what_was_appended(tmp_path: Path, block_hash: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """By default a call on a log that grew hashes the first block, the block at the
    offset and ``1 + appended // BLOCK`` blocks of the round, whatever the log's
    length."""
    monkeypatch.delenv("MAXREPEAT_HOOK_CHECK", raising=False)
    log = tmp_path / "log.jsonl"
    log.write_bytes(LINE * (40 * BLOCK // len(LINE)))
    _read_and_store(tmp_path, log)
    for appended in (1, 300, 700):
        with log.open("ab") as fh:
            fh.write(LINE * appended)
        with _blocks_session(tmp_path, log) as gs:
            hashed = _counting(gs)
            snap = gs.restore()
            assert snap is not None
            assert hashed[0] == 1 + 1 + len(LINE) * appended // BLOCK
            for _ in gs.lines(snap.offset, snap.lines):
                pass
            gs.store(Snapshot(gs.offset, gs.line_count, b"", []))


@pytest.mark.parametrize("where", ["head", "at-offset", "appended-only"])
def test_the_first_block_and_the_block_at_the_offset_are_checked_every_call(
        tmp_path: Path, where: str, block_hash: str) -> None:
    log = tmp_path / "log.jsonl"
    body = LINE * (4 * BLOCK // len(LINE) + 7)
    log.write_bytes(body)
    with _blocks_session(tmp_path, log) as gs:
        for _ in gs.lines():
            pass
        gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
    if where == "head":
        log.write_bytes(b"z" + body[1:])
    elif where == "at-offset":
        log.write_bytes(body[:-10] + b"z" + body[-9:] + LINE)
    else:
        log.write_bytes(body + LINE * 300)
    with _blocks_session(tmp_path, log) as gs:
        snap = gs.restore()
        assert (snap is not None) == (where == "appended-only")
        if snap is not None:
            assert list(gs.lines(snap.offset, snap.lines))[0][0] == snap.lines + 1
            gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
    with _blocks_session(tmp_path, log) as gs:  # the new blocks' digests were saved
        assert (gs.restore() is not None) == (where == "appended-only")


def test_a_state_saved_on_one_path_is_used_on_the_other(tmp_path: Path) -> None:
    """The blocks are hashed with BLAKE2b on both paths (issue 30: the native hash128 was
    not collision-resistant), so a state saved on one path verifies on the other."""
    if not accel.available():
        pytest.skip("the native extension is not built")
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"pad": "' + b"x" * 1000 + b'"}\n' * 300)
    was = accel.use_native(True)
    try:
        for first, second in ((True, False), (False, True)):
            accel.use_native(first)
            with _blocks_session(tmp_path, log) as gs:
                for _ in gs.lines():
                    pass
                gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
            with _blocks_session(tmp_path, log) as gs:
                assert gs.restore() is not None
            accel.use_native(second)
            with _blocks_session(tmp_path, log) as gs:
                assert gs.restore() is not None
    finally:
        accel.use_native(was)
