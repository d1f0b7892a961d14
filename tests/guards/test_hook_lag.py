"""`maxrepeat hook claude-code` when the transcript lags behind the hooks.

Claude Code 2.1 runs a tool and its hooks as soon as the model's response has streamed
that tool's block, but writes the response's records once the whole response has
streamed, through a write queue drained every 100 ms (``docs/design/agent-guards.md``).
So a hook may run before the transcript holds its own call, or the previous call's
result. These tests replay sessions hook by hook with the transcript held back that way
and require every decision to be the one the guard makes when the transcript is up to
date (itself `maxrepeat grade` of the finished session at that call: ``test_hook.py``).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.claude_code import guard
from maxrepeat.guards.claude_code_backlog import refusal_result

EXE = str(Path(sys.executable).parent / "maxrepeat")


def _line(kind: str, uuid: str, blocks: list[dict[str, Any]], mid: str | None = None,
          extra: dict[str, Any] | None = None) -> str:
    msg: dict[str, Any] = {"role": kind, "content": blocks}
    if mid is not None:
        msg["id"] = mid
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "S", "isSidechain": False,
                       "message": msg, **(extra or {})}) + "\n"


@dataclass
class Session:
    """A Claude Code session as the transcript records it, grown hook by hook: the
    lines written so far (``lines``), and where the transcript stands at the least
    (``floor``: the records of the responses before the current one)."""

    path: Path
    lines: list[str] = field(default_factory=list)
    floor: int = 0
    shown: int = 0  # lines the file holds (it only grows)

    def response(self, mid: str, calls: list[tuple[str, str]]) -> None:
        """A response has streamed: its records (one per call) are due."""
        self.floor = len(self.lines)
        for cid, command in calls:
            self.lines.append(_line("assistant", f"a-{cid}", [{
                "type": "tool_use", "id": cid, "name": "Bash",
                "input": {"command": command}}], mid=mid))

    def result(self, cid: str, content: str, failed: bool) -> None:
        block = {"type": "tool_result", "tool_use_id": cid, "content": content,
                 "is_error": failed}
        response = ("Error: " + content) if failed else {"stdout": content, "stderr": ""}
        self.lines.append(_line("user", f"u-{cid}", [block], extra={"toolUseResult": response}))

    def show(self, upto: int) -> None:
        """Let the file hold the first ``upto`` lines (never fewer than it held)."""
        self.shown = max(self.shown, min(upto, len(self.lines)))
        self.path.write_text("".join(self.lines[:self.shown]), encoding="utf-8")


def _payload(s: Session, event: str, cid: str, command: str,
             result: tuple[str, bool] | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"session_id": "S", "transcript_path": str(s.path), "cwd": "/tmp",
                         "hook_event_name": event, "tool_name": "Bash", "tool_use_id": cid,
                         "tool_input": {"command": command}}
    if result is not None:
        content, failed = result
        if failed:
            p.update(hook_event_name="PostToolUseFailure", error="Error: " + content)
        else:
            p["tool_response"] = {"stdout": content, "stderr": ""}
    return p


def _cli(payload: dict[str, Any], flags: list[str], cache: Path) -> dict[str, Any] | None:
    proc = subprocess.run([EXE, "hook", "claude-code", *flags, "--cache-dir", str(cache)],
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def _denied(out: dict[str, Any] | None) -> str | None:
    spec = (out or {}).get("hookSpecificOutput", {})
    return spec.get("permissionDecisionReason") if spec.get(
        "permissionDecision") == "deny" else None


@pytest.mark.parametrize("lag", ["call", "call-and-previous-result"])
def test_the_repeat_is_refused_before_it_runs_when_the_transcript_lags(
        tmp_path: Path, lag: str) -> None:
    """The race of the end-to-end test, made deterministic: each call's hooks run
    while the transcript lacks the call (and, in the second case, the previous call's
    result too). The command (a separate process) warns after the 3rd call, refuses
    the 4th before it runs and stops at the 5th, as with an up-to-date transcript."""
    flags = ["--max", "2", "--match", "name-args"]
    said: dict[str, list[Any]] = {}
    for mode in ("up-to-date", lag):
        s = Session(tmp_path / f"{mode}.jsonl")
        outs: list[Any] = []
        for i in range(6):
            cid, command = f"toolu_{i}", "echo x >> runs.txt"
            s.response(f"msg_{i}", [(cid, command)])
            held = s.floor - (1 if mode == "call-and-previous-result" and i else 0)
            s.show(len(s.lines) if mode == "up-to-date" else held)
            pre = _cli(_payload(s, "PreToolUse", cid, command), flags, tmp_path / mode)
            outs.append(("pre", pre))
            if (pre or {}).get("continue") is False:
                break
            reason = _denied(pre)
            if reason is not None:
                s.result(cid, refusal_result("Bash", reason), True)
                continue
            post = _cli(_payload(s, "PostToolUse", cid, command, ("", False)), flags,
                        tmp_path / mode)
            outs.append(("post", post))
            s.result(cid, "", False)
        said[mode] = outs
    assert said[lag] == said["up-to-date"]
    kinds = [(when, None if o is None else sorted(o.get("hookSpecificOutput", o)))
             for when, o in said[lag]]
    assert kinds[5] == ("post", ["additionalContext", "hookEventName"])  # 3rd call: warn
    assert kinds[6] == ("pre", ["hookEventName", "permissionDecision",
                                "permissionDecisionReason"])  # 4th: refused
    assert "did not run" in said[lag][6][1]["hookSpecificOutput"]["permissionDecisionReason"]
    assert said[lag][7][1]["continue"] is False and len(said[lag]) == 8  # 5th: stopped


CONFIGS = [
    MaxRepeatConfig(max=1, max_cycle_period=3, match="name"),
    MaxRepeatConfig(max=1, max_cycle_period=2, match="observation"),
    MaxRepeatConfig(max=2, match="name-args"),
]


def _strip(results: tuple[Any, ...]) -> list[dict[str, Any]]:
    out = []
    for r in results:
        d = r.to_dict()
        del d["trajectory"]
        d["metadata"].pop("source", None)
        out.append(d)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_random_lag_decides_as_an_up_to_date_transcript(tmp_path: Path, seed: int) -> None:
    """Random sessions (parallel calls, failures, refusals, cycles) replayed hook by
    hook twice: once with the transcript up to date, once held back at each hook by a
    random amount, from nothing of the current response (and none of the previous
    response's results) to all of it, once the hooks have named every call of the
    response. Every decision, and every grader's result, is the same."""
    rng = random.Random(seed)
    up = Session(tmp_path / "up.jsonl")
    lagging = Session(tmp_path / "lag.jsonl")
    commands = ["make", "make test", "ls"]
    stopped = False
    lagged = spoke = 0
    for m in range(14):
        calls = [(f"toolu_{m}_{k}", rng.choice(commands))
                 for k in range(rng.choice([1, 1, 1, 2, 3]))]
        for s in (up, lagging):
            s.response(f"msg_{m}", calls)
        # the results of the previous response may still be queued too
        low = lagging.floor
        if rng.random() < 0.3:
            while low and '"type": "user"' in lagging.lines[low - 1]:
                low -= 1
        order = [("pre", c) for c in calls] + [("post", c) for c in calls]
        if rng.random() < 0.5:  # one call after the other instead
            order = [h for c in calls for h in (("pre", c), ("post", c))]
        refused: set[str] = set()
        hooked: set[str] = set()
        for when, (cid, command) in order:
            if cid in refused:
                continue
            hooked.add(cid)
            up.show(len(up.lines))
            # Until every call of the response has had a hook, a later call is known
            # only from the transcript: no guard can judge the whole step before then
            # (see docs/design/agent-guards.md), so the response is written by then.
            lowest = low if len(hooked) == len(calls) else lagging.floor + len(calls)
            lagging.show(rng.randint(lowest, len(lagging.lines)))
            failed = command != "ls"
            result = None if when == "pre" else (
                "Error 2" if failed else "a b c", failed)
            event = "PreToolUse" if when == "pre" else "PostToolUse"
            got = [guard(_payload(s, event, cid, command, result), CONFIGS,
                         cache_dir=tmp_path / s.path.stem) for s in (up, lagging)]
            lagged += f'"{cid}"' not in lagging.path.read_text(encoding="utf-8")
            spoke += got[0].output is not None
            assert got[1].output == got[0].output, (seed, m, when, cid)
            assert _strip(got[1].results) == _strip(got[0].results), (seed, m, when, cid)
            out = got[0].output or {}
            reason = _denied(out)
            if reason is not None:
                refused.add(cid)
                for s in (up, lagging):
                    s.result(cid, refusal_result("Bash", reason), True)
            elif result is not None:
                for s in (up, lagging):
                    s.result(cid, *result)
            if out.get("continue") is False:
                stopped = True
                break
        if stopped:
            break
    assert lagged and spoke, "the replay did not test a lagging transcript that matters"


def test_a_call_the_transcript_never_gets_stops_counting(tmp_path: Path) -> None:
    """A response cut off before it was written (its call's hook ran): once the
    transcript holds two more turns, the guard decides from the transcript alone."""
    s = Session(tmp_path / "s.jsonl")
    cfg = [MaxRepeatConfig(max=1, match="name-args")]
    s.response("msg_x", [("toolu_x", "make")])
    s.lines.clear()  # never written
    s.show(0)
    v = guard(_payload(s, "PreToolUse", "toolu_x", "make"), cfg, cache_dir=tmp_path)
    assert v.results[0].metadata.watched_steps == 1
    for i in range(3):
        s.response(f"msg_{i}", [(f"toolu_{i}", f"step {i}")])
        s.result(f"toolu_{i}", "ok", False)
        s.show(len(s.lines))
        v = guard(_payload(s, "PostToolUse", f"toolu_{i}", f"step {i}", ("ok", False)), cfg,
                  cache_dir=tmp_path)
    assert v.results[0].metadata.watched_steps == 3  # the lost call no longer counts
