"""The hook's per-session cache is verified or ignored, never trusted (issue 18, finding
14): damaged cache files give the answer of a fresh read (no traceback), and a transcript
rewritten in its middle (same length, same first and last 4 KiB) is read again."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.claude_code import guard

CONFIGS = [MaxRepeatConfig(max=2, match="observation"), MaxRepeatConfig(max=3, match="name")]


def record(kind: str, uuid: str, blocks: list[dict[str, Any]], mid: str | None = None) -> str:
    msg: dict[str, Any] = {"role": kind, "content": blocks}
    if mid is not None:
        msg["id"] = mid
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "S", "parentUuid": None,
                       "isSidechain": False, "message": msg}) + "\n"


def transcript(outputs: list[str], pad: int = 0) -> str:
    lines = [json.dumps({"type": "file-history-snapshot", "messageId": "m", "snapshot": {},
                         "pad": "p" * pad}) + "\n"]
    for i, out in enumerate(outputs):
        use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "make"}}
        res = {"type": "tool_result", "tool_use_id": f"t{i}", "content": out}
        lines.append(record("assistant", f"a{i}", [use], f"msg_{i}"))
        lines.append(record("user", f"u{i}", [res]))
    return "".join(lines)


def payload(path: Path) -> dict[str, Any]:
    return {"session_id": "S", "transcript_path": str(path), "hook_event_name": "PostToolUse"}


def answer(verdict: Any) -> tuple[Any, ...]:
    return (json.dumps(verdict.output, sort_keys=True),
            tuple((r.status, r.passed, r.metadata.occurrences) for r in verdict.results))


def test_byte_flipped_cache_files_give_the_fresh_answer(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    first = transcript(["Error 1"] * 3)
    log.write_text(first)
    cache = tmp_path / "cache"
    guard(payload(log), CONFIGS, cache_dir=cache)
    (state,) = [p for p in cache.iterdir() if p.suffix == ".state"]
    pristine = state.read_bytes()
    log.write_text(first + transcript(["Error 1", "ok", "Error 1"])[len(
        transcript([])):].replace('"t0"', '"t9"').replace('"a0"', '"a9"'))
    fresh = answer(guard(payload(log), CONFIGS, cache_dir=tmp_path / "fresh"))
    rng = random.Random(18)
    for _ in range(300):
        damaged = bytearray(pristine)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        state.write_bytes(bytes(damaged))
        assert answer(guard(payload(log), CONFIGS, cache_dir=cache)) == fresh
        state.write_bytes(pristine)


def test_a_middle_rewrite_of_the_same_length_is_not_trusted(tmp_path: Path) -> None:
    """Same length, same first and last 4 KiB: only the middle differs. The cached
    answer (a loop of identical outputs) must not survive the rewrite."""
    outputs = ["Error 1"] * 200
    looping = transcript(outputs, pad=5000)
    different = transcript([f"Error {i % 10}" for i in range(200)], pad=5000)
    # keep the first and last 4 KiB identical: only the middle outputs change
    middle = len(looping) // 2
    rewritten = looping[:4096] + different[4096:middle] + looping[middle:]
    assert len(rewritten) == len(looping) and rewritten[-4096:] == looping[-4096:]
    log = tmp_path / "t.jsonl"
    log.write_text(looping)
    cache = tmp_path / "cache"
    hook = [sys.executable, "-c", "from maxrepeat.cli import main; main()", "hook",
            "claude-code", "--max", "2", "--cache-dir", str(cache)]
    before = subprocess.run(hook, input=json.dumps(payload(log)), capture_output=True,
                            text=True, timeout=60)
    assert before.returncode == 0 and "Traceback" not in before.stderr
    assert any(p.suffix == ".state" for p in cache.iterdir())
    log.write_text(rewritten)
    fresh = answer(guard(payload(log), [MaxRepeatConfig(max=2)], cache_dir=tmp_path / "new"))
    cached = answer(guard(payload(log), [MaxRepeatConfig(max=2)], cache_dir=cache))
    assert cached == fresh


def test_the_shared_guard_session_layer_verifies_the_log_and_the_file(
        tmp_path: Path) -> None:
    """The same two checks in guards/session.py, which every other agent hook uses (a
    log under one block is checked whole at every call; larger logs block by block:
    tests/guards/test_hook_incremental.py)."""
    from maxrepeat.guards.session import GuardSession, Snapshot

    log = tmp_path / "log.jsonl"
    text = "".join(f'{{"n": {i}, "pad": "{"x" * 100}"}}\n' for i in range(200))
    log.write_text(text)

    def session() -> GuardSession:
        return GuardSession(tmp_path / "c", agent="test", session="S", log=str(log),
                            signature="sig")

    with session() as gs:
        count = sum(1 for _ in gs.lines())
        gs.store(Snapshot(gs.offset, gs.line_count, b"r", [b"m"]))
    with session() as gs:
        assert gs.restore() is not None and count == 200
    middle = len(text) // 2
    log.write_text(text[:middle] + ("7" if text[middle] != "7" else "8") + text[middle + 1:])
    with session() as gs:
        assert gs.restore() is None
    log.write_text(text)
    (state,) = [p for p in (tmp_path / "c").iterdir() if p.suffix == ".state"]
    raw = bytearray(state.read_bytes())
    raw[-1] ^= 1
    state.write_bytes(bytes(raw))
    with session() as gs:
        assert gs.restore() is None


def _block_hashes() -> list[tuple[bool, str, Callable[[bytes | memoryview], bytes]]]:
    """`block_hash` on each path (native where it is built, and pure Python): whether
    native, the hash's name and its digest function."""
    from maxrepeat.core import accel
    from maxrepeat.guards.session import block_hash

    out = []
    for native in (True, False) if accel.available() else (False,):
        was = accel.use_native(native)
        try:
            out.append((native, *block_hash()))
        finally:
            accel.use_native(was)
    return out


def test_the_block_hash_is_pinned_to_its_name() -> None:
    """A state's version names the hash its block digests were made with, so the name
    must change whenever the digests do: digests of the earlier hash would otherwise be
    checked against the new ones (a needless full read at best). Where this fails after a
    change of the hash, give it a new name in `block_hash`, put the old one in
    `RETIRED_BLOCK_HASHES` and the new digests here."""
    from maxrepeat.guards.session import RETIRED_BLOCK_HASHES

    for _, name, digest in _block_hashes():
        assert name not in RETIRED_BLOCK_HASHES
        got = [digest(data).hex() for data in (b"", b"maxrepeat", bytes(range(256)) * 1000)]
        assert (name, got) == ("blake2b", ["cae66941d9efbd404e4d88758ea67670",
                                           "f47695b442938ec41fb296a74aea6c48",
                                           "53b77b188c91a7d66c490e9489b2fc73"])


def test_the_log_check_is_a_cryptographic_hash_on_both_paths() -> None:
    """Issue 30, row 8: the native ``hash128`` let two different 64-byte printable
    blocks be built with equal digests in under a second; the check must be one a
    crafted log cannot satisfy cheaply: BLAKE2b, native path included."""
    import hashlib

    data = bytes(range(256)) * 1000
    for native, _, digest in _block_hashes():
        assert digest(data) == hashlib.blake2b(data, digest_size=16).digest(), native


def test_a_state_saved_under_a_retired_block_hash_is_ignored(tmp_path: Path) -> None:
    """The same state, its version naming a hash the native path no longer uses (and
    sealed so that only the name differs), is not restored: the log is read again."""
    import msgspec

    from maxrepeat.guards.session import (
        RETIRED_BLOCK_HASHES,
        GuardSession,
        Snapshot,
        block_hash,
        seal,
        unseal,
    )

    log = tmp_path / "log.jsonl"
    log.write_text("".join(f'{{"n": {i}, "pad": "{"x" * 3000}"}}\n' for i in range(200)))

    def session() -> GuardSession:
        return GuardSession(tmp_path / "c", agent="test", session="S", log=str(log),
                            signature="sig")

    with session() as gs:
        for _ in gs.lines():
            pass
        gs.store(Snapshot(gs.offset, gs.line_count, b"r", [b"m"]))
    with session() as gs:
        assert gs.restore() is not None
    digest = block_hash()[1]
    (state,) = [p for p in (tmp_path / "c").iterdir() if p.suffix == ".state"]
    payload = unseal(state.read_bytes(), digest)
    assert payload is not None
    saved = msgspec.msgpack.decode(payload)
    for retired in RETIRED_BLOCK_HASHES:
        saved["version"] = saved["version"].rsplit("/", 1)[0] + "/" + retired
        state.write_bytes(seal(msgspec.msgpack.encode(saved), digest))
        with session() as gs:
            assert gs.restore() is None
