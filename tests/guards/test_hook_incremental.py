"""Reading only what was appended decides as reading everything (issue 12 item 4).

The Claude Code hook keeps, between calls, how far it read the transcript, the reader's
and the monitors' state (the monitors forget a result once its step is final, and call
ids are kept as short digests); a reused call id makes it read everything again keeping
every result. These tests replay generated sessions call by call and compare each hook
call with a full read of the transcript so far. How the saved state is checked against
the log: ``tests/guards/test_hook_log_check.py``."""

from __future__ import annotations

import json
import random
from hashlib import blake2b as _blake2b
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
from maxrepeat.readers import _marks
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
    monitors = [Monitor(c, name=n, id="S", format="claude-code")
                for c, n in zip(CONFIGS, NAMES, strict=True)]
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
    _decides_as_a_full_read(tmp_path, seed)


class _EightByteCollision:
    """BLAKE2b as an attacker with ~2^32 work sees it: every id's digest agrees in its
    first 8 bytes (a birthday collision of 8-byte marks, for every id at once)."""

    def __init__(self, data: bytes, digest_size: int) -> None:
        rest = _blake2b(data, digest_size=max(digest_size - 8, 1)).digest()
        self._digest = (bytes(8) + rest)[:digest_size]

    def digest(self) -> bytes:
        return self._digest


@pytest.mark.parametrize("seed", range(2))
def test_ids_whose_8_byte_digests_collide_still_decide_as_a_full_read(
        tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30: a log's author chooses call ids; with 8-byte marks two ids with one mark
    made a new call look already logged (a call the monitors never saw)."""
    monkeypatch.setattr(_marks, "blake2b", _EightByteCollision)
    _decides_as_a_full_read(tmp_path, seed)


def _decides_as_a_full_read(tmp_path: Path, seed: int) -> None:
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
        _strip(grade(traj, c, name=n)) for c, n in zip(CONFIGS, NAMES, strict=True)]


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
    """Results of final steps are forgotten and ids kept as 16-byte digests: the state of
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
    # per call: two uuid digests and one call id digest (48 B), nothing per result
    assert sizes[1] - sizes[0] < 2000 * 64, sizes


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
