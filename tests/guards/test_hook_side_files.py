"""The id digests a hook keeps per session live in side files that a call appends to
(``guards/statefile.py``): they are verified with the state or the state is ignored, and
the bytes a call writes do not grow with the session (issue 12 item 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.agentlog import judge
from maxrepeat.guards.claude_code import guard
from maxrepeat.guards.hookcall import HookCall

CONFIGS = [MaxRepeatConfig(max=2, max_cycle_period=2, match="observation"),
           MaxRepeatConfig(max=3, match="name-args")]


def _calls(start: int, stop: int, session: str = "S") -> str:
    """Claude Code records of calls ``start`` to ``stop`` (a few commands and outputs, so
    loops come and go)."""
    out = []
    for i in range(start, stop):
        use = {"type": "tool_use", "id": f"toolu_{session}{i}", "name": "Bash",
               "input": {"command": f"make t{i % 5}"}}
        res = {"type": "tool_result", "tool_use_id": use["id"], "content": f"out {i % 3}"}
        out.append(json.dumps({"type": "assistant", "uuid": f"a{session}{i}",
                               "sessionId": session, "parentUuid": None,
                               "message": {"id": f"m{i}", "role": "assistant",
                                           "content": [use]}}) + "\n")
        out.append(json.dumps({"type": "user", "uuid": f"u{session}{i}", "sessionId": session,
                               "parentUuid": None,
                               "message": {"role": "user", "content": [res]}}) + "\n")
    return "".join(out)


def _payload(log: Path, session: str = "S") -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(log),
            "hook_event_name": "PostToolUse"}


def _answer(verdict: Any) -> Any:
    return [json.dumps(r.to_dict(), sort_keys=True) for r in verdict.results]


def _sides(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.marks"))


@pytest.mark.parametrize("damage", ["flip", "truncate", "append", "swap", "missing"])
def test_a_damaged_side_file_is_never_trusted(tmp_path: Path, damage: str) -> None:
    """Flipped, cut, grown by garbage, another session's, gone: the answer is the one a
    fresh read gives. Only the garbage after the state's length leaves the state usable
    (those bytes are not part of it), and the next call cuts them off."""
    log, other = tmp_path / "s.jsonl", tmp_path / "o.jsonl"
    log.write_text(_calls(0, 700))
    other.write_text(_calls(0, 700, "O"))
    cache = tmp_path / "cache"
    guard(_payload(log), CONFIGS, cache_dir=cache)
    mine = _sides(cache)
    assert [p.name.split(".", 1)[1] for p in mine] == ["extra.0.marks", "reader.0.marks"]
    guard(_payload(other, "O"), CONFIGS, cache_dir=cache)
    theirs = [p for p in _sides(cache) if p not in mine]
    with log.open("a") as fh:
        fh.write(_calls(700, 703))
    for target, foreign in zip(mine, theirs, strict=True):
        size = target.stat().st_size
        if damage == "flip":
            raw = bytearray(target.read_bytes())
            raw[size // 2] ^= 4
            target.write_bytes(bytes(raw))
        elif damage == "truncate":
            target.write_bytes(target.read_bytes()[:-8])
        elif damage == "append":
            with target.open("ab") as fh:
                fh.write(b"garbage!" * 3)
        elif damage == "swap":
            shutil.copyfile(foreign, target)
        else:
            target.unlink()
    fresh = guard(_payload(log), CONFIGS, cache_dir=tmp_path / "fresh")
    got = guard(_payload(log), CONFIGS, cache_dir=cache)
    assert _answer(got) == _answer(fresh)
    assert got.cache_used is (damage == "append")
    if damage == "append":
        # the garbage was cut before the call's digests were appended
        assert all(p.stat().st_size % 8 == 0 for p in mine)
    with log.open("a") as fh:
        fh.write(_calls(703, 705))
    again = guard(_payload(log), CONFIGS, cache_dir=cache)
    assert again.cache_used
    assert _answer(again) == _answer(guard(_payload(log), CONFIGS,
                                           cache_dir=tmp_path / "fresh2"))


def _written(cache: Path, before: dict[str, int]) -> int:
    """Bytes the last call wrote: the state file whole, the side files what they grew by
    (all of a side file that is new or was started again)."""
    total = 0
    for p in cache.iterdir():
        size = p.stat().st_size
        if p.suffix == ".state":
            total += size
        elif p.suffix == ".marks":
            total += size - before.get(p.name, 0) if size >= before.get(p.name, 0) else size
        before[p.name] = size
    return total


def test_a_claude_code_call_writes_what_it_added_not_the_session(tmp_path: Path) -> None:
    """Call 2,000 writes about what call 100 writes (the state file's size stays put; the
    side files grow by the call's digests), where the digests kept inside the state made
    call 2,000 write ~48 kB more."""
    log, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    log.write_text("")
    seen: dict[str, int] = {}
    written = {}
    states = {}
    for i in range(2000):
        with log.open("a") as fh:
            fh.write(_calls(i, i + 1))
        guard(_payload(log), CONFIGS, cache_dir=cache)
        written[i] = _written(cache, seen)
        states[i] = next(cache.glob("*.state")).stat().st_size
    assert written[1999] <= written[100] + 512, (written[100], written[1999])
    assert states[1999] <= states[100] + 512, (states[100], states[1999])
    assert sum(p.stat().st_size for p in _sides(cache)) >= 2000 * 24


@pytest.mark.parametrize("reader", ["codex", "gemini-cli", "copilot-cli"])
def test_an_agent_log_call_writes_what_it_added_not_the_session(tmp_path: Path,
                                                                reader: str) -> None:
    """The same for the Codex, Gemini CLI and Copilot CLI guards (their settled call ids),
    each answer checked against a fresh read at the end and after a flipped side file."""
    log, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    head = {"codex": [{"type": "session_meta", "payload": {"id": "s"}}],
            "gemini-cli": [{"sessionId": "s", "projectHash": "h", "kind": "main",
                            "startTime": "2026-12-01T00:00:00Z",
                            "lastUpdated": "2026-12-01T00:00:00Z"}],
            "copilot-cli": [{"type": "session.start", "data": {"sessionId": "s"},
                             "id": "e0"}]}[reader]
    log.write_text("".join(json.dumps(r) + "\n" for r in head))
    seen: dict[str, int] = {}
    written = {}

    def call(i: int) -> HookCall:
        placement, name = {"codex": ("id", "exec_command"),
                           "copilot-cli": ("unanswered", "bash"),
                           "gemini-cli": ("absent", "run_shell_command")}[reader]
        args = {"cmd": f"make t{i % 5}"} if reader == "codex" else {"command": f"make t{i % 5}"}
        return HookCall(phase="post", session="s", log=str(log), reader=reader,
                        placement=placement, name=name, arguments=args,
                        call_id=f"c{i}" if reader == "codex" else None, result=f"out {i % 3}")

    def before(i: int) -> list[dict[str, Any]]:
        cid, cmd = f"c{i}", f"make t{i % 5}"
        if reader == "codex":
            return [{"type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": cid,
                "arguments": json.dumps({"cmd": cmd})}}]
        if reader == "copilot-cli":
            return [{"type": "assistant.message", "id": f"a{i}", "data": {
                "messageId": f"m{i}", "content": "", "toolRequests": [
                    {"toolCallId": cid, "name": "bash", "arguments": {"command": cmd}}]}},
                {"type": "tool.execution_start", "id": f"s{i}", "data": {
                    "toolCallId": cid, "toolName": "bash", "arguments": {"command": cmd}}}]
        return []

    def after(i: int) -> list[dict[str, Any]]:
        cid, out = f"c{i}", f"out {i % 3}"
        if reader == "codex":
            return [{"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": cid, "output": out}}]
        if reader == "copilot-cli":
            return [{"type": "tool.execution_complete", "id": f"x{i}", "data": {
                "toolCallId": cid, "success": True, "result": {"content": out}}}]
        return [{"id": f"g{i}", "type": "gemini", "content": "", "toolCalls": [
            {"id": cid, "name": "run_shell_command", "args": {"command": f"make t{i % 5}"},
             "status": "success", "result": [{"functionResponse": {
                 "id": cid, "name": "run_shell_command", "response": {"output": out}}}]}]}]

    def key(d: Any) -> Any:
        return (d.action, d.message, [json.dumps(r.to_dict(), sort_keys=True)
                                      for r in d.results])

    n = 1500
    with log.open("a") as fh:
        for i in range(n):
            fh.write("".join(json.dumps(r) + "\n" for r in before(i)))
            fh.flush()
            judge(call(i), CONFIGS, cache_dir=cache)
            written[i] = _written(cache, seen)
            fh.write("".join(json.dumps(r) + "\n" for r in after(i)))
            fh.flush()
        fh.write("".join(json.dumps(r) + "\n" for r in before(n)))
    assert _sides(cache), "no side file: the test would not test them"
    assert written[n - 1] <= written[200] + 512, (written[200], written[n - 1])
    fresh = judge(call(n), CONFIGS, cache_dir=tmp_path / "fresh")
    (side, *_) = _sides(cache)
    raw = bytearray(side.read_bytes())
    raw[len(raw) // 3] ^= 1
    side.write_bytes(bytes(raw))
    assert key(judge(call(n), CONFIGS, cache_dir=cache)) == key(fresh)
