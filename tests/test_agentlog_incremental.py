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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.core.config import unique_names
from maxrepeat.guards import agentlog
from maxrepeat.guards.agentlog import HookCall, _Extra, judge
from maxrepeat.guards.policy import Action, Decision, Policy
from maxrepeat.guards.session import GuardSession, signature_of

CONFIGS = [
    MaxRepeatConfig(max=2, max_cycle_period=2, match="observation"),
    MaxRepeatConfig(max=3, max_cycle_period=2, match="name-args"),
]
READERS = {"codex": ("id", "exec_command"), "gemini-cli": ("absent", "run_shell_command"),
           "copilot-cli": ("unanswered", "bash")}


def _forget_monitors(cache: Path, call: HookCall) -> None:
    """Make the saved monitors of the reference run unusable (a full feed next call)."""
    sig = signature_of(CONFIGS, unique_names(CONFIGS), Policy(), call.reader)
    with GuardSession(cache, agent=call.reader, session=call.session, log=call.log,
                      signature=sig, missing_ok=True) as gs:
        snap = gs.restore()
        if snap is not None:
            extra = msgspec.msgpack.decode(snap.extra, type=_Extra)
            extra.fed_digest = b""
            gs.store(msgspec.structs.replace(snap, extra=msgspec.msgpack.encode(extra)))


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
                for (cid, _), out in zip(calls, outputs)))
        elif self.reader == "copilot-cli":
            self.write(*({"type": "tool.execution_complete", "id": f"c{cid}{self.n}",
                          "data": {"toolCallId": cid, "success": True,
                                   "result": {"content": out}}}
                         for (cid, _), out in zip(calls, outputs)))
        else:
            message = {"id": f"g{self.n}", "type": "gemini", "content": "", "toolCalls": [
                {"id": cid, "name": "run_shell_command", "args": {"command": cmd},
                 "status": "success", "result": [{"functionResponse": {
                     "id": cid, "name": "run_shell_command", "response": {"output": out}}}]}
                for (cid, cmd), out in zip(calls, outputs)]}
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
    run: Callable[[HookCall, Path], Decision] = lambda call, cache: judge(
        call, CONFIGS, cache_dir=cache)
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
        for (cid, cmd), out in zip(calls, outputs):
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


def test_a_call_id_that_comes_back_is_fed_again_with_every_result() -> None:
    """The readers drop a call whose id was seen (a resumed log repeats them), so this
    safety net is checked on events directly: monitors resumed after a history whose
    call ids were forgotten, then given a history reusing one, answer as monitors fed
    the whole history keeping every result."""
    from maxrepeat import Monitor
    from maxrepeat.core.events import tool_call, tool_result, turn_end, turn_start
    from maxrepeat.guards.agentlog import _fed_monitors
    from maxrepeat.guards.session import Snapshot

    def turn(i: int, cid: str, out: str) -> list[Any]:
        return [turn_start(f"t{i}"), tool_call("bash", cid, {"command": "make"}),
                tool_result(cid, out), turn_end(f"t{i}")]

    first = turn(0, "a", "Error 1") + turn(1, "b", "Error 1")
    second = first + turn(2, "a", "Error 2") + turn(3, "c", "Error 1")
    names = unique_names(CONFIGS)
    call = HookCall(phase="post", session="s", log=None, reader="codex", placement="id",
                    name="bash")
    extra = _Extra()
    mons = _fed_monitors(CONFIGS, names, call, None, False, None, extra, first, [])
    assert not extra.exact and extra.fed == len(first)
    snap = Snapshot(0, 0, b"", [m.to_bytes() for m in mons])
    mons = _fed_monitors(CONFIGS, names, call, None, False, snap, extra, second, [])
    assert extra.exact
    want = [Monitor(c, name=n, format="codex").feed_all(second) for c, n in zip(CONFIGS, names)]
    got = [m.result() for m in mons]
    assert [r.passed for r in got] == [r.passed for r in want]
    assert [r.metadata.occurrences for r in got] == [r.metadata.occurrences for r in want]
