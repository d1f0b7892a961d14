"""The Codex CLI, Gemini CLI and Copilot CLI guards' cost (issue 12 item 4):
``python bench/agent_log_hooks.py [--session 10000] [--first 20000]``.

These guards read the agent's own session log. For each agent a synthetic session grows
one call at a time, written as the agent writes it around its hooks (Codex: the call
before the hooks, its output after; Copilot: the request and its start before, the
completion after; Gemini: the whole message after); after each call the post-call hook
runs in-process (`judge`, the work a hook process does after its imports), and its CPU
time is recorded. Reported: median and p99 over the session, the median of the first and
last 100 calls (what grows with the session), and the first call (no saved state) on a
log of ``--first`` calls against `maxrepeat grade`'s reader and grader of the same log,
in-process (the floor measured in the same run). CPU seconds (``time.process_time``);
the machine load is printed. ``--whole`` also times that first call as the agent runs it,
a ``maxrepeat hook AGENT`` process given the hook's JSON on standard input, against a
``maxrepeat grade`` process of the same log (children's user + system CPU, best and
median of 5), as issue 12 item 4 compares them. ``--later`` times later calls as the agent
runs them: the session grows to ``--session`` calls and at ``--sample`` calls spread over
it a ``maxrepeat hook AGENT`` process is given the post-call hook's JSON (the other calls
are judged in-process, so the saved state is always the previous call's), each followed
by ``python -c pass``, the floor (children's user + system CPU; median and p99).

The processes run this tree's ``src`` (``PYTHONPATH``) with their bytecode written, as
the agent runs the hook: the ``maxrepeat`` script beside the interpreter (what ``maxrepeat
hook install`` writes), ``python -m maxrepeat`` when there is none.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))
#: the children run this tree, with their bytecode cached as an installed package has it
ENV = {**os.environ, "PYTHONPATH": str(SRC)}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)

import maxrepeat  # noqa: E402
from maxrepeat import MaxRepeatConfig  # noqa: E402
from maxrepeat.guards import agentlog  # noqa: E402
from maxrepeat.guards.agentlog import judge  # noqa: E402
from maxrepeat.guards.hookcall import HookCall  # noqa: E402

CONFIGS = [MaxRepeatConfig(max=3, max_cycle_period=2)]
OUTPUT = "line of build output that the tool printed, " * 10  # ~450 bytes


def _cmd(i: int) -> str:
    return f"make target-{i % 97}"


def _out(i: int) -> str:
    return f"{i % 89} {OUTPUT}"


def _before(reader: str, i: int) -> list[dict[str, Any]]:
    cid = f"call_{i}"
    if reader == "codex":
        return [{"type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": cid,
            "arguments": json.dumps({"cmd": _cmd(i)})}}]
    if reader == "copilot-cli":
        return [{"type": "assistant.message", "id": f"a{i}", "data": {
            "messageId": f"m{i}", "content": "", "toolRequests": [
                {"toolCallId": cid, "name": "bash", "arguments": {"command": _cmd(i)}}]}},
            {"type": "tool.execution_start", "id": f"s{i}", "data": {
                "toolCallId": cid, "toolName": "bash", "arguments": {"command": _cmd(i)}}}]
    return []


def _after(reader: str, i: int) -> list[dict[str, Any]]:
    cid = f"call_{i}"
    if reader == "codex":
        return [{"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": cid, "output": _out(i)}}]
    if reader == "copilot-cli":
        return [{"type": "tool.execution_complete", "id": f"c{i}", "data": {
            "toolCallId": cid, "success": True, "result": {"content": _out(i)}}}]
    return [{"id": f"g{i}", "type": "gemini", "content": "", "toolCalls": [
        {"id": cid, "name": "run_shell_command", "args": {"command": _cmd(i)},
         "status": "success", "result": [{"functionResponse": {
             "id": cid, "name": "run_shell_command", "response": {"output": _out(i)}}}]}]}]


def _start(reader: str) -> list[dict[str, Any]]:
    if reader == "codex":
        return [{"type": "session_meta", "payload": {"id": "s"}},
                {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t"}}]
    if reader == "copilot-cli":
        return [{"type": "session.start", "data": {"sessionId": "s"}, "id": "e0"}]
    return [{"sessionId": "s", "projectHash": "h", "kind": "main",
             "startTime": "2026-12-01T00:00:00Z", "lastUpdated": "2026-12-01T00:00:00Z"}]


def _call(reader: str, log: Path, i: int) -> HookCall:
    placement, name = {"codex": ("id", "exec_command"), "copilot-cli": ("unanswered", "bash"),
                       "gemini-cli": ("absent", "run_shell_command")}[reader]
    args = {"cmd": _cmd(i)} if reader == "codex" else {"command": _cmd(i)}
    return HookCall(phase="post", session="s", log=str(log), reader=reader,
                    placement=placement, name=name, arguments=args,
                    call_id=f"call_{i}" if reader == "codex" else None, result=_out(i))


def _lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def session(reader: str, tmp: Path, calls: int) -> dict[str, Any]:
    log = tmp / f"{reader}-grow.jsonl"
    cache = tmp / f"{reader}-cache"
    times: list[float] = []
    with log.open("w") as fh:
        fh.write(_lines(_start(reader)))
        for i in range(calls):
            fh.write(_lines(_before(reader, i)))
            fh.flush()
            t = time.process_time()
            judge(_call(reader, log, i), CONFIGS, cache_dir=cache)
            times.append(time.process_time() - t)
            fh.write(_lines(_after(reader, i)))
            fh.flush()
    p99 = sorted(times)[min(len(times) - 1, int(0.99 * len(times)))]
    return {"calls": calls, "mb": round(log.stat().st_size / 1e6, 1),
            "median_ms": round(statistics.median(times) * 1e3, 2),
            "p99_ms": round(p99 * 1e3, 2),
            "first_100_ms": round(statistics.median(times[:100]) * 1e3, 2),
            "last_100_ms": round(statistics.median(times[-100:]) * 1e3, 2),
            # the curve: the median of each tenth of the session
            "tenths_ms": [round(statistics.median(times[k * len(times) // 10:
                                                         (k + 1) * len(times) // 10]) * 1e3, 2)
                          for k in range(10)]}


def first(reader: str, tmp: Path, calls: int) -> dict[str, Any]:
    log = tmp / f"{reader}-long.jsonl"
    with log.open("w") as fh:
        fh.write(_lines(_start(reader)))
        for i in range(calls):
            fh.write(_lines(_before(reader, i) + _after(reader, i)))
        fh.write(_lines(_before(reader, calls)))
    hook, grade = [], []
    for k in range(3):
        t = time.process_time()
        judge(_call(reader, log, calls), CONFIGS, cache_dir=tmp / f"{reader}-first-{k}")
        hook.append(time.process_time() - t)
        t = time.process_time()
        for traj in maxrepeat.read_trajectories(log, format=reader):
            maxrepeat.grade(traj, CONFIGS[0])
        grade.append(time.process_time() - t)
    return {"calls": calls, "mb": round(log.stat().st_size / 1e6, 1),
            "hook_s": round(min(hook), 3), "grade_s": round(min(grade), 3),
            "ratio": round(min(hook) / min(grade), 2)}


def _payload(reader: str, log: Path, i: int) -> dict[str, Any]:
    """The post-call hook input the agent sends for call ``i`` (its documented fields)."""
    if reader == "codex":
        return {"session_id": "s", "turn_id": "t", "transcript_path": str(log),
                "cwd": str(log.parent), "hook_event_name": "PostToolUse", "model": "m",
                "permission_mode": "default", "tool_name": "Bash",
                "tool_input": {"command": _cmd(i)}, "tool_use_id": f"call_{i}",
                "tool_response": _out(i)}
    if reader == "gemini-cli":
        return {"session_id": "s", "transcript_path": str(log), "cwd": str(log.parent),
                "hook_event_name": "AfterTool", "timestamp": "2026-12-01T00:00:00Z",
                "tool_name": "run_shell_command", "tool_input": {"command": _cmd(i)},
                "tool_response": {"llmContent": _out(i), "returnDisplay": _out(i)}}
    return {"sessionId": "s", "timestamp": 0, "cwd": str(log.parent), "toolName": "bash",
            "toolArgs": json.dumps({"command": _cmd(i)}),
            "toolResult": {"resultType": "success", "textResultForLlm": _out(i)}}


def _child_cpu(cmd: list[str], stdin: str | None, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env,
                          check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed: {done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _exe() -> list[str]:
    script = Path(sys.executable).parent / "maxrepeat"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "maxrepeat"]


def later(reader: str, tmp: Path, calls: int, sample: int) -> dict[str, Any]:
    """Later calls as processes, over a session of ``calls`` calls (``sample`` of them)."""
    home = tmp / f"{reader}-later-home"
    log = home / "session-state" / "s" / "events.jsonl" if reader == "copilot-cli" \
        else tmp / f"{reader}-later.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    cache = tmp / f"{reader}-later-cache"
    env = {**ENV, "COPILOT_HOME": str(home)}
    cmd = [*_exe(), "hook", reader, "--max", "3", "--max-cycle-period", "2",
           "--cache-dir", str(cache)]
    every = max(1, calls // sample)
    hook: list[float] = []
    floor: list[float] = []
    with log.open("w") as fh:
        fh.write(_lines(_start(reader)))
        for i in range(calls):
            fh.write(_lines(_before(reader, i)))
            fh.flush()
            if i % every == every - 1:  # never the first call: a saved state exists
                hook.append(_child_cpu(cmd, json.dumps(_payload(reader, log, i)), env))
                floor.append(_child_cpu([sys.executable, "-c", "pass"], None, env))
            else:
                judge(_call(reader, log, i), CONFIGS, cache_dir=cache)
            fh.write(_lines(_after(reader, i)))
            fh.flush()

    def p99(xs: list[float]) -> float:
        return sorted(xs)[min(len(xs) - 1, int(0.99 * len(xs)))]

    return {"calls": calls, "mb": round(log.stat().st_size / 1e6, 1), "samples": len(hook),
            "hook_ms": [round(statistics.median(hook) * 1e3, 1), round(p99(hook) * 1e3, 1)],
            "floor_ms": [round(statistics.median(floor) * 1e3, 1), round(p99(floor) * 1e3, 1)],
            "ratio_median": round(statistics.median(hook) / statistics.median(floor), 2)}


def whole(reader: str, tmp: Path, calls: int) -> dict[str, Any]:
    """The first call as processes: ``maxrepeat hook READER`` against ``maxrepeat grade``."""
    home = tmp / f"{reader}-home"
    log = home / "session-state" / "s" / "events.jsonl" if reader == "copilot-cli" \
        else tmp / f"{reader}-whole.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as fh:
        fh.write(_lines(_start(reader)))
        for i in range(calls):
            fh.write(_lines(_before(reader, i) + _after(reader, i)))
        fh.write(_lines(_before(reader, calls)))
    env = {**ENV, "COPILOT_HOME": str(home)}
    cli = _exe()
    flags = ["--max", "3", "--max-cycle-period", "2"]
    stdin = json.dumps(_payload(reader, log, calls))
    hook, grade = [], []
    for k in range(5):
        hook.append(_child_cpu([*cli, "hook", reader, *flags, "--cache-dir",
                                str(tmp / f"{reader}-whole-{k}")], stdin, env))
        grade.append(_child_cpu([*cli, "grade", str(log), "--format", reader, *flags,
                                 "-o", "jsonl", "-q"], None, env))
    hook.sort()
    grade.sort()
    return {"mb": round(log.stat().st_size / 1e6, 1), "hook_s": [round(hook[0], 3),
            round(hook[2], 3)], "grade_s": [round(grade[0], 3), round(grade[2], 3)],
            "ratio_best": round(hook[0] / grade[0], 2),
            "ratio_median": round(hook[2] / grade[2], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--session", type=int, default=10000)
    ap.add_argument("--first", type=int, default=20000)
    ap.add_argument("--only", default="codex,gemini-cli,copilot-cli")
    ap.add_argument("--whole", action="store_true",
                    help="only the first call, whole process, against maxrepeat grade")
    ap.add_argument("--later", action="store_true",
                    help="only later calls, whole process, against python -c pass")
    ap.add_argument("--sample", type=int, default=200)
    args = ap.parse_args()
    agentlog.LAG_WAIT = 0.0  # every result is on disk before the next hook: never waits
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], env=ENV,
                   stdout=subprocess.DEVNULL, check=True)
    with tempfile.TemporaryDirectory() as d:
        for reader in args.only.split(","):
            print("load", os.getloadavg()[0], reader, _exe())
            if args.later:
                print(json.dumps({"later": later(reader, Path(d), args.session,
                                                 args.sample)}), flush=True)
                continue
            if args.whole:
                print(json.dumps({"whole": whole(reader, Path(d), args.first)}), flush=True)
                continue
            print(json.dumps({"first": first(reader, Path(d), args.first),
                              "session": session(reader, Path(d), args.session)}), flush=True)
    print("load after", os.getloadavg()[0])


if __name__ == "__main__":
    main()
