"""Reading only what was appended decides as reading everything (issue 12 item 4).

The Claude Code hook keeps, between calls, how far it read the transcript, the reader's
and the monitors' state (the monitors forget a result once its step is final, and call
ids are kept as short digests); a reused call id makes it read everything again keeping
every result. These tests replay generated sessions call by call and compare each hook
call with a full read of the transcript so far; and they check the block-wise
verification of the saved state in ``guards/session.py``."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import maxrepeat
from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.core import accel
from maxrepeat.core.events import Event, EventData
from maxrepeat.guards.claude_code import guard
from maxrepeat.guards.claude_code_results import Learned, predicted_result
from maxrepeat.guards.policy import Escalation, EscalationState
from maxrepeat.guards.session import BLOCK, GuardSession, Snapshot
from maxrepeat.readers.claude_code import SessionStream

CONFIGS = [
    MaxRepeatConfig(max=2, max_cycle_period=2, match="observation"),
    MaxRepeatConfig(max=3, max_cycle_period=3, match="name-args"),
    MaxRepeatConfig(max=2, match="name"),
]
NAMES = maxrepeat.core.config.unique_names(CONFIGS)


def _line(rec: dict[str, Any]) -> str:
    return json.dumps(rec) + "\n"


def _session(seed: int, calls: int) -> list[tuple[list[str], dict[str, Any], list[str]]]:
    """(lines written before the hook, hook payload, lines written after) per call: few
    commands and outputs (so loops come and go), failures, parallel calls in one
    response, copied records (same uuid) and now and then a call id used again."""
    rng = random.Random(seed)
    out: list[tuple[list[str], dict[str, Any], list[str]]] = []
    written: list[str] = []
    used: list[str] = []
    i = 0
    while len(out) < calls:
        mid = f"msg_{i}"
        width = 2 if rng.random() < 0.15 else 1
        uses = []
        for _ in range(width):
            i += 1
            cid = rng.choice(used) if used and rng.random() < 0.04 else f"toolu_{i}"
            used.append(cid)
            uses.append({"type": "tool_use", "id": cid, "name": "Bash",
                         "input": {"command": rng.choice(["make", "make", "ls", "pytest"])}})
        before = []
        for k, use in enumerate(uses):
            before.append(_line({"type": "assistant", "uuid": f"a{i}-{k}", "sessionId": "S",
                                 "parentUuid": None, "isSidechain": False,
                                 "message": {"id": mid, "role": "assistant",
                                             "content": [use]}}))
        if written and rng.random() < 0.05:
            before.insert(0, rng.choice(written))  # a copied record: skipped by uuid
        for k, use in enumerate(uses):
            failed = rng.random() < 0.3
            text = rng.choice(["Error 1", "Error 2", "ok"])
            response: Any = f"Exit code 1\n{text}" if failed else {"stdout": text,
                                                                   "stderr": ""}
            block = {"type": "tool_result", "tool_use_id": use["id"],
                     "content": f"Exit code 1\n{text}" if failed else text,
                     "is_error": failed}
            after = [_line({"type": "user", "uuid": f"u{i}-{k}", "sessionId": "S",
                            "parentUuid": None, "isSidechain": False,
                            "message": {"role": "user", "content": [block]},
                            "toolUseResult": ("Error: " + response) if failed else response})]
            payload = {"session_id": "S", "hook_event_name":
                       "PostToolUseFailure" if failed else "PostToolUse",
                       "tool_name": "Bash", "tool_input": use["input"],
                       "tool_use_id": use["id"]}
            payload["error" if failed else "tool_response"] = (
                "Error: " + response) if failed else response
            out.append((before if k == 0 else [], payload, after))
            written.extend(before if k == 0 else [])
            written.extend(after)
    return out


def _full_read(path: Path, payload: dict[str, Any], state: EscalationState | None
               ) -> tuple[Any, EscalationState]:
    """The decision from the whole transcript read again, every result kept."""
    stream, learned = SessionStream(), Learned()
    monitors = [Monitor(c, name=n, id="S", format="claude-code") for c, n in zip(CONFIGS, NAMES)]
    for raw in path.read_bytes().splitlines():
        rec = json.loads(raw)
        learned.learn(rec)
        key, events = stream.record(rec)
        if key == stream.primary:
            for m in monitors:
                m.extend(events)
    value, ok = predicted_result(payload, learned)
    for m in monitors:
        m.feed(Event("tool_result", EventData(tool_call_id=payload["tool_use_id"],
                                              result=value, success=ok)))
    esc = Escalation(monitors, None, state)
    return esc.decide(), esc.state


def _strip(result: maxrepeat.GraderResult) -> dict[str, Any]:
    out = result.to_dict()
    del out["trajectory"]
    out["metadata"].pop("source", None)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_every_call_decides_as_a_full_read(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("")
    state: EscalationState | None = None
    spoke = incremental = 0
    with path.open("a") as fh:
        for k, (before, payload, after) in enumerate(_session(seed, 90)):
            fh.write("".join(before))
            fh.flush()
            payload = {**payload, "transcript_path": str(path)}
            verdict = guard(payload, CONFIGS, cache_dir=tmp_path / "c")
            want, state = _full_read(path, payload, state)
            got = verdict.decision
            assert [_strip(r) for r in got.results] == [_strip(r) for r in want.results], k
            assert (got.action, got.message) == (want.action, want.message), k
            spoke += got.speaks
            incremental += verdict.read_from > 0
            fh.write("".join(after))
            fh.flush()
    assert spoke > 0 and incremental > 45  # loops were told; most calls read only new lines
    traj = next(iter(maxrepeat.read_trajectories(path, format="claude-code")))
    final = guard({**payload, "transcript_path": str(path), "hook_event_name": "PreToolUse"},
                  CONFIGS, cache_dir=tmp_path / "c")
    assert [_strip(r) for r in final.results] == [
        _strip(grade(traj, c, name=n)) for c, n in zip(CONFIGS, NAMES)]


@pytest.mark.parametrize("seed", range(3))
def test_a_first_read_decides_as_a_full_read(tmp_path: Path, seed: int) -> None:
    """Without saved state (the monitors built from the batch tables, `Monitor.from_events`)
    every call decides as the full read, reused call ids and copied records included."""
    path = tmp_path / "s.jsonl"
    path.write_text("")
    with path.open("a") as fh:
        for k, (before, payload, after) in enumerate(_session(seed, 60)):
            fh.write("".join(before))
            fh.flush()
            payload = {**payload, "transcript_path": str(path)}
            verdict = guard(payload, CONFIGS, cache_dir=tmp_path / f"fresh-{k}")
            want, _ = _full_read(path, payload, None)
            got = verdict.decision
            assert verdict.read_from == 0
            assert [_strip(r) for r in got.results] == [_strip(r) for r in want.results], k
            assert (got.action, got.message) == (want.action, want.message), k
            fh.write("".join(after))
            fh.flush()


def test_saved_state_stays_small_in_a_long_session(tmp_path: Path) -> None:
    """Results of final steps are forgotten and ids kept as 8-byte digests: the state of
    a 3,000-call session is a few tens of kB, not one entry per answered call."""
    path = tmp_path / "s.jsonl"
    path.write_text("")
    cache = tmp_path / "c"
    sizes = []
    with path.open("a") as fh:
        for i in range(3000):
            use = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                   "input": {"command": f"make {i % 7}"}}
            fh.write(_line({"type": "assistant", "uuid": f"a{i}", "sessionId": "S",
                            "message": {"id": f"m{i}", "content": [use]}}))
            fh.write(_line({"type": "user", "uuid": f"u{i}", "sessionId": "S",
                            "message": {"content": [{"type": "tool_result",
                                                     "tool_use_id": f"toolu_{i}",
                                                     "content": f"out {i}"}]}}))
            if i in (999, 2999):
                fh.flush()
                guard({"session_id": "S", "transcript_path": str(path),
                       "hook_event_name": "PreToolUse"}, CONFIGS, cache_dir=cache)
                (state,) = [p for p in cache.iterdir() if p.suffix == ".state"]
                sizes.append(state.stat().st_size)
    # per call: two uuid digests and one call id digest (24 B), nothing per result
    assert sizes[1] - sizes[0] < 2000 * 40, sizes


@pytest.fixture(params=["hash128", "blake2b"])
def block_hash(request: pytest.FixtureRequest) -> Iterator[str]:
    """The log's blocks checked with the native extension's hash128, or (pure path,
    ``MAXREPEAT_PURE=1``) with BLAKE2b."""
    if request.param == "hash128" and not accel.available():
        pytest.skip("the native extension is not built")
    was = accel.use_native(request.param == "hash128")
    try:
        yield str(request.param)
    finally:
        accel.use_native(was)


def _blocks_session(tmp_path: Path, log: Path) -> GuardSession:
    return GuardSession(tmp_path / "c", agent="test", session="S", log=str(log),
                        signature="sig")


@pytest.mark.parametrize("mode", ["full", "sampled"])
def test_a_rewrite_away_from_the_checked_blocks_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, block_hash: str) -> None:
    """A same-length rewrite of a middle block, with nothing appended. By default every
    block is checked at every call: the next call sees it (issue 18). Sampled
    (``MAXREPEAT_HOOK_CHECK=sampled``), a call checks the first block, the block at the
    offset and the next blocks of a round over the log: it is seen within as many calls
    as the log has blocks."""
    if mode == "sampled":
        monkeypatch.setenv("MAXREPEAT_HOOK_CHECK", "sampled")
    else:
        monkeypatch.delenv("MAXREPEAT_HOOK_CHECK", raising=False)
    log = tmp_path / "log.jsonl"
    line = b'{"pad": "' + b"x" * 1000 + b'"}\n'
    body = line * (6 * BLOCK // len(line) + 3)
    log.write_bytes(body)
    with _blocks_session(tmp_path, log) as gs:
        for _ in gs.lines():
            pass
        gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
    at = 3 * BLOCK + 500
    log.write_bytes(body[:at] + b"y" + body[at + 1:])
    calls = 0
    while True:
        calls += 1
        with _blocks_session(tmp_path, log) as gs:
            snap = gs.restore()
            if snap is None:
                break
            gs.store(snap)
        assert calls <= len(body) // BLOCK, "the rewrite was never seen"
    if mode == "full":
        assert calls == 1


@pytest.mark.parametrize("where", ["head", "at-offset", "appended-only"])
def test_the_first_block_and_the_block_at_the_offset_are_checked_every_call(
        tmp_path: Path, where: str, block_hash: str) -> None:
    log = tmp_path / "log.jsonl"
    line = b'{"pad": "' + b"x" * 1000 + b'"}\n'
    body = line * (4 * BLOCK // len(line) + 7)
    log.write_bytes(body)
    with _blocks_session(tmp_path, log) as gs:
        for _ in gs.lines():
            pass
        gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
    if where == "head":
        log.write_bytes(b"z" + body[1:])
    elif where == "at-offset":
        log.write_bytes(body[:-10] + b"z" + body[-9:] + line)
    else:
        log.write_bytes(body + line * 300)
    with _blocks_session(tmp_path, log) as gs:
        snap = gs.restore()
        assert (snap is not None) == (where == "appended-only")
        if snap is not None:
            assert list(gs.lines(snap.offset, snap.lines))[0][0] == snap.lines + 1
            gs.store(Snapshot(gs.offset, gs.line_count, b"", []))
    with _blocks_session(tmp_path, log) as gs:  # the new blocks' digests were saved
        assert (gs.restore() is not None) == (where == "appended-only")


def test_a_state_checked_with_the_other_hash_is_ignored(tmp_path: Path) -> None:
    """Block digests made by hash128 mean nothing to BLAKE2b and the other way round:
    a state saved on one path is read again from the start on the other (never used)."""
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
                assert gs.restore() is None
    finally:
        accel.use_native(was)


def test_hash128_sees_every_one_bit_change_and_every_length() -> None:
    """The native block hash: every one-bit change of a random 1 KiB buffer, and every
    zero-padded length, gives another digest (a sanity check, not a proof)."""
    if not accel.available():
        pytest.skip("the native extension is not built")
    from maxrepeat.core import _native

    base = bytearray(random.Random(14).randbytes(1024))
    seen = {_native.hash128(bytes(base))}
    for bit in range(len(base) * 8):
        changed = bytearray(base)
        changed[bit // 8] ^= 1 << (bit % 8)
        seen.add(_native.hash128(bytes(changed)))
    assert len(seen) == len(base) * 8 + 1
    assert len({_native.hash128(bytes(n)) for n in range(300)}) == 300
    assert _native.hash128(memoryview(b"abc")) == _native.hash128(b"abc")
