"""End to end, with the real agents: Codex CLI, Gemini CLI and Copilot CLI (their npm
packages, installed by scripts/test.sh into .npm-agents/) run against a scripted model on
127.0.0.1, with the guard registered by ``maxrepeat hook install AGENT --user`` (the command the
docs give).

For each agent, from the agent's OWN session log after the run:

* a loop (the same failing command again and again): ``maxrepeat grade`` of the log fails,
  and the guard's message reached the model first at exactly the call where grading the
  log first fails (no call before it carries it); the scripted model received that text
  in the very next request; later repeats are refused (and Gemini CLI and Copilot CLI
  stop);
* a clean session (different commands): grading passes and the guard never speaks;
* a cycle of period 2 (two commands alternating): the same as the loop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, Trajectory
from maxrepeat.core.monitor import Monitor
from maxrepeat.readers import Source, get_reader
from tests.agent_harness import (
    AgentRun,
    ScriptedModel,
    binary,
    run_agent,
    shell_turns,
)

AGENTS = ("codex", "gemini-cli", "copilot-cli")
GUARD = "maxrepeat loop guard"
READER = {"codex": "codex", "gemini-cli": "gemini-cli", "copilot-cli": "copilot-cli"}


def _require(agent: str) -> None:
    if not binary(agent).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{binary(agent)} is missing: scripts/test.sh installs it")
        pytest.skip(f"{binary(agent)} is missing (run scripts/test.sh)")


def _trajectory(agent: str, log: Path) -> Trajectory:
    items = list(get_reader(READER[agent]).read(Source.from_path(str(log))))
    trajs = [t for t in items if isinstance(t, Trajectory)]
    assert len(trajs) == 1, items
    return trajs[0]


def _codex_texts(log: Path) -> list[str]:
    """What the model read after each call, from a Codex rollout: the call's output and
    any developer message (a hook's additional context) written before the next call."""
    texts: list[str] = []
    for line in log.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") != "response_item":
            continue
        item = rec["payload"]
        if item.get("type") == "function_call":
            texts.append("")
        elif texts and (item.get("type") == "function_call_output"
                        or (item.get("type") == "message" and item.get("role") == "developer")):
            texts[-1] += json.dumps(item)
    return texts


def _copilot_texts(log: Path, traj: Trajectory) -> dict[str, str]:
    """Copilot's log keeps a hook's additional context only in its ``hook.end`` record
    (the model reads it appended to the result, or as a message after a failed call):
    per call id, those outputs, for the call being run then."""
    extra: dict[str, str] = {}
    running = None
    for line in log.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        data = rec.get("data") or {}
        if rec.get("type") == "tool.execution_start":
            running = data.get("toolCallId")
        elif rec.get("type") == "hook.end" and data.get("output") and running:
            extra[running] = extra.get(running, "") + json.dumps(data["output"])
    return extra


def _gemini_texts(log: Path) -> dict[str, str]:
    """Gemini CLI logs a hook's additional context inside the call's result, which the
    reader drops (it is not the tool's output): per call id, the result as logged (the
    last write of its message)."""
    found: dict[str, str] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        for call in rec.get("toolCalls") or []:
            if isinstance(call, dict) and call.get("result"):
                found[call["id"]] = json.dumps(call["result"])
    return found


def _texts(agent: str, log: Path, traj: Trajectory) -> list[str]:
    """Per call, in order, the text the model read after it."""
    if agent == "codex":
        return _codex_texts(log)
    extra = _copilot_texts(log, traj) if agent == "copilot-cli" else {}
    results = {e.data.tool_call_id: json.dumps(e.data.result) for e in traj.events
               if e.type == TOOL_RESULT}
    if agent == "gemini-cli":
        results.update(_gemini_texts(log))
    return [results.get(e.data.tool_call_id, "") + extra.get(e.data.tool_call_id or "", "")
            for e in traj.events if e.type == TOOL_CALL]


def _first_failing_call(traj: Trajectory, config: MaxRepeatConfig) -> int | None:
    """The call (0-based) at which grading the log so far first fails: the last call
    seen when the result turns (in ``observation`` mode that is at the call's result)."""
    monitor = Monitor(config)
    calls = 0
    for event in traj.events:
        if event.type == TOOL_CALL:
            calls += 1
        if monitor.feed(event).failed:
            return calls - 1
    return None


def _grade_cli(log: Path, agent: str, flags: list[str]) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "maxrepeat"
    proc = subprocess.run([str(exe), "grade", str(log), "--format", READER[agent], *flags,
                           "--output", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def _run(agent: str, tmp_path: Path, commands: list[str], flags: list[str]
         ) -> tuple[AgentRun, ScriptedModel]:
    _require(agent)
    model = ScriptedModel(shell_turns(agent, commands))
    with model.serving():
        run = run_agent(agent, model, tmp_path / "home",
                        [*flags, "--cache-dir", str(tmp_path / "cache")])
    assert run.log is not None, (run.stdout, run.stderr)
    return run, model


def _config(flags: list[str]) -> MaxRepeatConfig:
    opts = dict(zip(flags[::2], flags[1::2], strict=True))
    return MaxRepeatConfig(int(opts["--max"]), max_cycle_period=int(
        opts.get("--max-cycle-period", 1)), match=opts["--match"])


def _check_guarded(agent: str, run: AgentRun, model: ScriptedModel, flags: list[str]) -> int:
    assert run.log is not None
    traj = _trajectory(agent, run.log)
    k = _first_failing_call(traj, _config(flags))
    assert k is not None, "the scripted loop must fail grading"
    graded = _grade_cli(run.log, agent, flags)
    assert graded["results"][0]["passed"] is False
    texts = _texts(agent, run.log, traj)
    spoken = [i for i, text in enumerate(texts) if GUARD in text]
    assert spoken, (texts, run.stderr)
    assert spoken[0] == k, (spoken, k, texts)
    # the model was told in the request right after that call, and not before
    bodies = [json.dumps(r["body"]) for r in model.requests]
    assert GUARD in bodies[k + 1]
    assert not any(GUARD in b for b in bodies[:k + 1])
    return k


@pytest.mark.parametrize("agent", AGENTS)
def test_loop_is_told_at_the_first_failing_call(agent: str, tmp_path: Path) -> None:
    flags = ["--max", "2", "--match", "name-args"]
    run, model = _run(agent, tmp_path, ["ls /nonexistent-maxrepeat"] * 7, flags)
    k = _check_guarded(agent, run, model, flags)
    assert k == 2  # the third copy of the call
    assert run.log is not None
    texts = _texts(agent, run.log, _trajectory(agent, run.log))
    # the next repeat was refused before it ran (name-args mode)
    assert "refused" in texts[k + 1], texts[k + 1]
    if agent in ("gemini-cli", "copilot-cli"):
        # the repeat after that stopped the agent: the rest of the script never ran
        assert model.served == k + 3, model.served


@pytest.mark.parametrize("agent", AGENTS)
def test_clean_session_is_never_spoken_to(agent: str, tmp_path: Path) -> None:
    flags = ["--max", "2", "--match", "name-args"]
    commands = ["ls /nonexistent-a", "ls /nonexistent-b", "echo one", "echo two",
                "ls /nonexistent-a"]
    run, model = _run(agent, tmp_path, commands, flags)
    assert run.returncode == 0, run.stderr
    assert run.log is not None
    traj = _trajectory(agent, run.log)
    assert _first_failing_call(traj, _config(flags)) is None
    assert _grade_cli(run.log, agent, flags)["results"][0]["passed"] is True
    assert sum(1 for e in traj.events if e.type == TOOL_CALL) == len(commands)
    assert not any(GUARD in t for t in _texts(agent, run.log, traj))
    assert not any(GUARD in json.dumps(r["body"]) for r in model.requests)
    assert model.served == len(commands) + 1


@pytest.mark.parametrize("agent", AGENTS)
def test_cycle_of_period_two_is_told_at_the_first_failing_call(agent: str,
                                                               tmp_path: Path) -> None:
    flags = ["--max", "2", "--max-cycle-period", "2", "--match", "name-args"]
    commands = ["ls /nonexistent-x", "cat /nonexistent-y"] * 5
    run, model = _run(agent, tmp_path, commands, flags)
    k = _check_guarded(agent, run, model, flags)
    assert run.log is not None
    traj = _trajectory(agent, run.log)
    result = Monitor(_config(flags)).feed_all(traj.events)
    assert result.metadata.runs and result.metadata.runs[0].period == 2
    assert k >= 5  # three copies of the two-step cycle, less its last step


# A file that is not there, read again and again (a failed call each time). Gemini CLI in
# name-args mode: it writes a hook's words into the call's recorded result
# (docs/integrations/gemini-cli.md), so in observation mode the warned call would no longer
# equal the copies before it when the finished log is graded; and it drops additional
# context from a failed call, which the guard must get round.
READ_CALL = {"copilot-cli": ("view", "path", "observation"),
             "gemini-cli": ("read_file", "file_path", "name-args")}


@pytest.mark.parametrize("agent", sorted(READ_CALL))
def test_loop_of_failing_reads(agent: str, tmp_path: Path) -> None:
    """The same failing read with the same error, again and again; for Copilot CLI with
    ``--match observation``: only the result makes the steps equal, and the current
    call's result is in the hook input, not yet in the log. The guard still speaks at the
    first failing call, and the model reads it.
    (Codex has no read tool; its shell output names a chunk id that differs each time.)"""
    from tests.agent_harness import Turn

    _require(agent)
    name, key, mode = READ_CALL[agent]
    args = {key: str(tmp_path / "home" / "work" / "missing-notes.txt")}
    model = ScriptedModel([Turn(name=name, arguments=args)] * 5 + [Turn(text="done")])
    flags = ["--max", "2", "--match", mode]
    with model.serving():
        run = run_agent(agent, model, tmp_path / "home",
                        [*flags, "--cache-dir", str(tmp_path / "cache")])
    _check_guarded(agent, run, model, flags)
