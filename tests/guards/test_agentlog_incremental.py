"""Codex, Gemini CLI and Copilot CLI guards: resuming the saved monitors decides as
feeding them the whole log again, at every hook call (issue 12 item 4).

Generated sessions (few commands and outputs, so loops come and go; parallel calls;
refusals; for Gemini rewritten messages and ``$rewindTo``; now and then a call id used
again) are driven call by call through `judge` twice: with the state as saved, and with
a state whose monitors are marked not resumable after every call (the escalation memory
kept, so both runs must say the same thing at the same call)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.core.config import unique_names
from maxrepeat.guards import agentlog
from maxrepeat.guards.agentlog import _Extra, judge
from maxrepeat.guards.hookcall import HookCall
from maxrepeat.guards.policy import Action, Decision, Policy
from maxrepeat.guards.session import GuardSession, Snapshot, signature_of

CONFIGS = [
    MaxRepeatConfig(max=2, max_cycle_period=2, match="observation"),
    MaxRepeatConfig(max=3, max_cycle_period=2, match="name-args"),
]
READERS = {"codex": ("id", "exec_command"), "gemini-cli": ("absent", "run_shell_command"),
           "copilot-cli": ("unanswered", "bash")}


def _state(cache: Path, call: HookCall) -> tuple[GuardSession, Snapshot | None]:
    sig = signature_of(CONFIGS, unique_names(CONFIGS), Policy(), call.reader,
                       agentlog.RESUME_FORMAT)
    gs = GuardSession(cache, agent=call.reader, session=call.session, log=call.log,
                      signature=sig, missing_ok=True)
    with gs:
        return gs, gs.restore()


def _forget_monitors(cache: Path, call: HookCall) -> None:
    """Drop the reader state and the monitors of the reference run (the next call reads
    the whole log and feeds new monitors), keeping the escalation memory."""
    gs, snap = _state(cache, call)
    if snap is not None:
        with gs:
            gs.store(msgspec.structs.replace(snap, reader=b"", monitors=[]))


def _same(a: Decision, b: Decision) -> bool:
    def key(d: Decision) -> Any:
        return (d.action, d.message, [json.dumps(r.to_dict(), sort_keys=True)
                                      for r in d.results])
    return bool(key(a) == key(b))


class _Log:
    """Writes one agent's log as that agent does around its hooks."""

    def __init__(self, reader: str, path: Path, rng: random.Random) -> None:
        self.reader, self.path, self.rng = reader, path, rng
        self.n = 0
        self.ids: list[str] = []
        self.messages: list[dict[str, Any]] = []
        if reader == "codex":
            self.write({"type": "session_meta", "payload": {"id": "s"}},
                       {"type": "event_msg", "payload": {"type": "task_started",
                                                         "turn_id": "t0"}})
        elif reader == "gemini-cli":
            self.write({"sessionId": "s", "projectHash": "h", "kind": "main",
                        "startTime": "2026-12-01T00:00:00Z",
                        "lastUpdated": "2026-12-01T00:00:00Z"})
        else:
            self.write({"type": "session.start", "data": {"sessionId": "s"}, "id": "e0"})

    def write(self, *records: dict[str, Any]) -> None:
        with self.path.open("a") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in records))

    def new_id(self) -> str:
        self.n += 1
        # only Gemini's reader keeps a call whose id came back (Codex's and Copilot's
        # drop it as a repeat of a resumed log, and the guard then waits for its result)
        if self.reader == "gemini-cli" and self.ids and self.rng.random() < 0.06:
            return self.rng.choice(self.ids)
        cid = f"call_{self.n}"
        self.ids.append(cid)
        return cid

    def before(self, calls: list[tuple[str, str]]) -> None:
        """The turn's calls as the log has them when the hooks run."""
        if self.reader == "codex":
            if self.rng.random() < 0.1:
                self.write({"type": "event_msg", "payload": {"type": "task_started",
                                                             "turn_id": f"t{self.n}"}})
            self.write(*({"type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": cid,
                "arguments": json.dumps({"cmd": cmd})}} for cid, cmd in calls))
        elif self.reader == "copilot-cli":
            self.write({"type": "assistant.message", "id": f"a{self.n}", "data": {
                "messageId": f"m{self.n}", "content": "", "toolRequests": [
                    {"toolCallId": cid, "name": "bash", "arguments": {"command": cmd}}
                    for cid, cmd in calls]}},
                *({"type": "tool.execution_start", "id": f"s{cid}{self.n}", "data": {
                    "toolCallId": cid, "toolName": "bash", "arguments": {"command": cmd}}}
                  for cid, cmd in calls))

    def after(self, calls: list[tuple[str, str]], outputs: list[str]) -> None:
        """The results, once every hook of the turn ran."""
        if self.reader == "codex":
            self.write(*({"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": cid, "output": out}}
                for (cid, _), out in zip(calls, outputs, strict=True)))
        elif self.reader == "copilot-cli":
            self.write(*({"type": "tool.execution_complete", "id": f"c{cid}{self.n}",
                          "data": {"toolCallId": cid, "success": True,
                                   "result": {"content": out}}}
                         for (cid, _), out in zip(calls, outputs, strict=True)))
        else:
            message = {"id": f"g{self.n}", "type": "gemini", "content": "", "toolCalls": [
                {"id": cid, "name": "run_shell_command", "args": {"command": cmd},
                 "status": "success", "result": [{"functionResponse": {
                     "id": cid, "name": "run_shell_command", "response": {"output": out}}}]}
                for (cid, cmd), out in zip(calls, outputs, strict=True)]}
            self.messages.append(message)
            self.write(message)
            roll = self.rng.random()
            if roll < 0.04 and len(self.messages) > 3:
                # the conversation is rewound to an earlier message
                back = self.rng.randrange(1, len(self.messages) - 1)
                self.write({"$rewindTo": self.messages[back]["id"]})
                del self.messages[back:]
            elif roll < 0.14 and len(self.messages) > 2:
                # an earlier message written again (the last write wins, in place)
                at = self.rng.randrange(max(0, len(self.messages) - 4), len(self.messages))
                old = dict(self.messages[at])
                old["toolCalls"] = [dict(c, result=[{"functionResponse": {
                    "id": c["id"], "name": c["name"], "response": {"output": "rewritten"}}}])
                    for c in old["toolCalls"]]
                self.messages[at] = old
                self.write(old)


def _hook(reader: str, log: Path, phase: str, cid: str, cmd: str, out: str) -> HookCall:
    placement, name = READERS[reader]
    args: Any = {"cmd": cmd} if reader == "codex" else {"command": cmd}
    return HookCall(phase=phase, session="s", log=str(log), reader=reader,
                    placement=placement, name=name, arguments=args,
                    call_id=cid if reader == "codex" else None,
                    result=out if phase == "post" else None)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_call_decides_as_a_full_feed(tmp_path: Path, reader: str, seed: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # A Gemini rewind drops results the guard counted, and the guard would then wait for
    # them at every call (the wait for a lagging log is not what is tested here)
    monkeypatch.setattr(agentlog, "LAG_WAIT", 0.0)
    rng = random.Random(seed * 7 + len(reader))
    path = tmp_path / "log.jsonl"
    log = _Log(reader, path, rng)
    resumed_cache, full_cache = tmp_path / "resumed", tmp_path / "full"
    spoke = 0
    last = ("make", "Error 1")

    def run(call: HookCall, cache: Path) -> Decision:
        return judge(call, CONFIGS, cache_dir=cache)

    for _ in range(45):
        # Gemini writes a message's results once all its calls ran, so a later call's
        # hooks would wait for the earlier one's: one call per message there
        width = 2 if reader != "gemini-cli" and rng.random() < 0.15 else 1
        if rng.random() < 0.5:  # stuck: the same command and output again
            calls = [(log.new_id(), last[0]) for _ in range(width)]
            outputs = [last[1] for _ in calls]
        else:
            calls = [(log.new_id(), rng.choice(["make", "ls", "pytest"]))
                     for _ in range(width)]
            outputs = [rng.choice(["Error 1", "Error 2", "ok"]) for _ in calls]
        last = (calls[-1][1], outputs[-1])
        log.before(calls)
        for (cid, cmd), out in zip(calls, outputs, strict=True):
            for phase in ("pre", "post"):
                call = _hook(reader, path, phase, cid, cmd, out)
                got = run(call, resumed_cache)
                want = run(call, full_cache)
                _forget_monitors(full_cache, call)
                assert _same(got, want), (phase, log.n)
                spoke += got.action > Action.NONE
                if phase == "pre" and got.action >= Action.BLOCK:
                    break  # refused: it does not run (its refusal is its result)
            if reader != "gemini-cli":
                log.after([(cid, cmd)], [out])
        if reader == "gemini-cli":
            log.after(calls, outputs)
    assert spoke > 0


def test_a_call_id_that_comes_back_decides_as_a_full_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Gemini message whose call id came back from a settled message (the reader
    joins it to the first one's turn) decides as a read of the whole log at every call."""
    # the joined call's result is not counted again: the hooks would wait for it
    monkeypatch.setattr(agentlog, "LAG_WAIT", 0.0)
    path = tmp_path / "log.jsonl"
    log = _Log("gemini-cli", path, random.Random(1))
    resumed_cache, full_cache = tmp_path / "resumed", tmp_path / "full"
    steps = [("a", "Error 1"), ("b", "Error 1"), ("c", "Error 1"), ("d", "Error 1"),
             ("a", "Error 2"), ("e", "Error 1"), ("f", "Error 1"), ("b", "Error 1")]
    for i, (cid, out) in enumerate(steps):
        call = _hook("gemini-cli", path, "post", cid, "make", out)
        got = judge(call, CONFIGS, cache_dir=resumed_cache)
        want = judge(call, CONFIGS, cache_dir=full_cache)
        _forget_monitors(full_cache, call)
        assert _same(got, want), i
        log.n = i + 1
        log.after([(cid, "make")], [out])
    _, snap = _state(resumed_cache, call)
    assert snap is not None and msgspec.msgpack.decode(snap.extra, type=_Extra).events > 0


def _session(reader: str, path: Path, cache: Path, calls: int) -> HookCall:
    """A session of ``calls`` calls looping on one failing command, judged call by call
    with ``cache``; the hook call that comes next (its call written as the agent does)."""
    log = _Log(reader, path, random.Random(5))
    for i in range(calls):
        cid = log.new_id()
        cmd, out = ("make", "Error 1") if i % 3 else ("ls", "ok")
        log.before([(cid, cmd)])
        judge(_hook(reader, path, "post", cid, cmd, out), CONFIGS, cache_dir=cache)
        log.after([(cid, cmd)], [out])
    cid = log.new_id()
    log.before([(cid, "make")])
    return _hook(reader, path, "post", cid, "make", "Error 1")


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_damaged_or_forged_state_gives_the_fresh_answer(
        tmp_path: Path, reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte flips in the state file, and states sealed as valid whose reader state or
    monitors are garbage, another reader's, or cut short: the decision of a fresh read,
    never a traceback (issue 18 item 14)."""
    monkeypatch.setattr(agentlog, "LAG_WAIT", 0.0)
    path, cache = tmp_path / "log.jsonl", tmp_path / "cache"
    call = _session(reader, path, cache, 12)
    (state,) = [p for p in cache.iterdir() if p.suffix == ".state"]
    pristine = state.read_bytes()
    fresh = judge(call, CONFIGS, cache_dir=tmp_path / "fresh")
    assert _same(judge(call, CONFIGS, cache_dir=cache), fresh)
    rng = random.Random(18)
    for _ in range(60):
        damaged = bytearray(pristine)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        state.write_bytes(bytes(damaged))
        assert _same(judge(call, CONFIGS, cache_dir=cache), fresh)
    state.write_bytes(pristine)
    gs, snap = _state(cache, call)
    assert snap is not None and snap.reader and snap.offset > 0
    other = {"codex": "copilot-cli", "copilot-cli": "gemini-cli", "gemini-cli": "codex"}
    from maxrepeat.readers._resume import resume
    foreign = resume(other[reader], "x", None)
    foreign.settle()
    forged = [msgspec.structs.replace(snap, reader=r) for r in (
        b"\xc1", snap.reader[:-5], msgspec.msgpack.encode([1, 2, 3]), foreign.save())]
    forged.append(msgspec.structs.replace(snap, monitors=[b"x"] * len(CONFIGS)))
    for i, bad in enumerate(forged):
        with gs:
            gs.store(bad)
        assert _same(judge(call, CONFIGS, cache_dir=cache), fresh), i
    # sealed as valid but rewritten so that it still decodes (only a forger does that:
    # the seal is a checksum, not a signature): an answer, never a traceback
    for bad in (msgspec.structs.replace(snap, reader=snap.reader[:1] + bytes(8)
                                        + snap.reader[9:]),
                msgspec.structs.replace(snap, monitors=list(reversed(snap.monitors)))):
        with gs:
            gs.store(bad)
        judge(call, CONFIGS, cache_dir=cache)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_log_changed_before_the_saved_point_is_read_again(
        tmp_path: Path, reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The middle of the log rewritten (same length) after the state was saved: the
    decision of a fresh read of the rewritten log."""
    monkeypatch.setattr(agentlog, "LAG_WAIT", 0.0)
    path, cache = tmp_path / "log.jsonl", tmp_path / "cache"
    call = _session(reader, path, cache, 12)
    text = path.read_text()
    assert text.count("Error 1") > 4
    at = text.index("Error 1", len(text) // 3)
    path.write_text(text[:at] + "Error 7" + text[at + 7:])
    fresh = judge(call, CONFIGS, cache_dir=tmp_path / "fresh")
    assert _same(judge(call, CONFIGS, cache_dir=cache), fresh)


@pytest.mark.parametrize("size", [1, 3, 7, 64, 8 << 20])
def test_line_chunks_reads_as_lines(tmp_path: Path, size: int) -> None:
    """The chunked read the agent-log hooks use gives the lines, offsets and unfinished
    last line of the line-by-line read, whatever the chunk size."""
    rng = random.Random(size)
    for trial in range(30):
        text = b"".join(rng.choice([b"\n", b"\r\n", b"ab", b"{}", b"\r", b" ", b"\xef\xbb\xbf"])
                        for _ in range(rng.randrange(0, 40)))
        log = tmp_path / f"log{trial}.jsonl"
        log.write_bytes(text)
        start = rng.randrange(0, len(text) + 1)
        gs = GuardSession(tmp_path / "c", agent="t", session="s", log=str(log), signature="")
        with gs:
            want = [(n, raw[:-1]) for n, raw in gs.lines(start, 5)]
            where = (gs.offset, gs.line_count, gs.partial)
            got = [(n, raw) for first, part in gs.line_chunks(start, 5, size)
                   for n, raw in enumerate(part, first)]
            assert got == want and (gs.offset, gs.line_count, gs.partial) == where
