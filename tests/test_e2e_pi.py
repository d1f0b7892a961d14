"""End to end with the real Pi coding agent (npm ``@mariozechner/pi-coding-agent@0.73.1``,
installed by scripts/test.sh into .npm-agents/): ``pi -p`` against the scripted Chat
Completions model of tests/pi_harness.py on 127.0.0.1, in a fresh project folder with a
temporary HOME, the guard installed with exactly the lines docs/integrations/pi.md
shows (the live preset).

One Pi session per scenario, each read back from Pi's OWN session log:

* a loop (one failing command again and again; project install): the guard's warning
  reaches the model first at exactly the call where ``maxrepeat grade`` of the log first
  fails, the next repeat is refused before it runs, the one after is refused and ends
  the run (``pi -p`` exits 1); ``hook status`` lists warn, block, stop; uninstall leaves
  the project's ``.pi/`` byte-identical;
* a cycle A B A B … (user install): the same, at the cycle's first failing call;
* a clean session (user install, beside a project guard whose command cannot run): the
  guard never speaks, every call runs, and the broken guard blocks none of them.

At every call, with the graders ``hook status`` reports: the guard never speaks where
grading the log up to that call passes, speaks first where it first fails, and speaks at
every new copy of the loop after that (warn, then refuse, then stop, as status lists).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import read_trajectories
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor

from .pi_harness import PI, ChatModel, PiRun, bash, pi_env, run_pi
from .test_docs_install_lines import install_lines

GUARD = "maxrepeat loop guard"
BIN = Path(sys.executable).parent


def _line(user: bool) -> list[str]:
    """The page's plain install line for a scope."""
    for line in install_lines("pi"):
        if line[:4] == ["maxrepeat", "hook", "install", "pi"] and line[4:] == (
                ["--user"] if user else []):
            return line
    raise AssertionError("pi.md shows no plain install line")


def _uninstall(user: bool) -> list[str]:
    for line in install_lines("pi"):
        if line[:4] == ["maxrepeat", "hook", "uninstall", "pi"] and ("--user" in line) == user:
            return line
    raise AssertionError("pi.md shows no uninstall line")


def _sh(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"/"
            for p in sorted(root.rglob("*"))}


def _status(scope: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    out = _sh([str(BIN / "maxrepeat"), "hook", "status", "pi", "--json", "--last", "20"],
              cwd, env)
    found = [g for g in json.loads(out)["guards"] if g["scope"] == scope]
    assert len(found) == 1, out
    guard: dict[str, Any] = found[0]
    return guard


def _texts(log: Path) -> list[str]:
    """Per call, in order, the result the model read (as Pi logged it)."""
    calls: list[str] = []
    results: dict[str, str] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        message = json.loads(line).get("message") or {}
        if message.get("role") == "assistant":
            calls += [c["id"] for c in message["content"] if c.get("type") == "toolCall"]
        elif message.get("role") == "toolResult":
            results[message["toolCallId"]] = json.dumps(message["content"])
    return [results.get(c, "") for c in calls]


def _grading(traj: Trajectory, config: MaxRepeatConfig) -> tuple[list[bool], list[bool]]:
    """Per call: whether grading the log up to it (its result included) fails, and
    whether it fails with a loop longer than at any call before (a new copy of a repeated
    step or of a cycle: where the guard must speak)."""
    monitor, failing, new, seen = Monitor(config), [], [], 0
    for event in traj.events:
        result = monitor.feed(event)
        if event.type == TOOL_CALL:
            failing.append(False)
            new.append(False)
        if not failing:
            continue
        failing[-1] = result.failed
        top = max((r.occurrences for r in result.metadata.runs), default=0) \
            if result.failed else 0
        if top > seen:
            new[-1], seen = True, top
    return failing, new


def _scenario(tmp_path: Path, script: list[Any], user: bool) -> tuple[PiRun, ChatModel,
                                                                      dict[str, str], Path]:
    if not PI.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{PI} is missing: scripts/test.sh installs it")
        pytest.skip(f"{PI} is missing (run scripts/test.sh)")
    home = tmp_path / "home"
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = pi_env(home, BIN)
    _sh(_line(user), work, env)
    model = ChatModel(script)
    with model.serving():
        run = run_pi(model, home, work, env=env)
    assert run.log is not None, run.stderr
    return run, model, env, work


def _check_guarded(run: PiRun, model: ChatModel, guard: dict[str, Any]) -> int:
    """The guard spoke exactly where grading fails anew; it warned, refused, then stopped;
    the first failing call (returned) is where the model was first told."""
    assert run.log is not None
    assert guard["loads"], guard["load_problems"]
    config = MaxRepeatConfig.from_mapping(guard["graders"][0])
    [traj] = list(read_trajectories(run.log, format="pi"))
    texts = _texts(run.log)
    spoken = [GUARD in t for t in texts]
    failing, new = _grading(traj, config)
    # never where grading the log so far passes, first where it first fails, and at every
    # new copy of the loop after that (a partial copy of a cycle is refused once the
    # guard refuses, as the refusal rung says)
    assert all(f for s, f in zip(spoken, failing, strict=False) if s), (spoken, failing)
    assert all(s for s, n in zip(spoken, new, strict=False) if n), (spoken, new)
    at = [i for i, said in enumerate(spoken) if said]
    k = at[0]
    assert k == failing.index(True), (spoken, failing)
    bodies = [json.dumps(b) for b in model.requests]
    assert GUARD in bodies[k + 1] and not any(GUARD in b for b in bodies[:k + 1])
    assert "(warning)" in texts[k] and all("(blocked)" in texts[i] for i in at[1:-1])
    assert "(stopped)" in texts[at[-1]] and len(texts) == at[-1] + 1 and len(at) >= 3
    assert run.returncode == 1 and "aborted" in run.stderr, (run.returncode, run.stderr)
    assert model.served == at[-1] + 1  # the run ended: no request after the stop
    told = [v["action"] for v in reversed(guard["verdicts"])]
    assert told == ["warn", *["block"] * (len(at) - 2), "stop"], told
    graded = subprocess.run([str(BIN / "maxrepeat"), "grade", str(run.log), "--format", "pi",
                             "--preset", "live"], capture_output=True, text=True, timeout=60)
    assert graded.returncode == 1, graded.stdout
    return k


def test_loop_in_a_project_warned_refused_stopped_then_uninstalled(tmp_path: Path) -> None:
    work = tmp_path / "home" / "work"
    mine = work / ".pi" / "extensions" / "mine.ts"
    mine.parent.mkdir(parents=True)
    mine.write_text("export default function (pi: any) {}\n")
    (work / ".pi" / "settings.json").write_text('{"theme": "dark"}\n')
    before = _tree(work / ".pi")
    run, model, env, work = _scenario(tmp_path, bash(*["ls /nonexistent-maxrepeat"] * 8),
                                      user=False)
    k = _check_guarded(run, model, _status("project", work, env))
    assert k == 3  # the live preset's max 3: the 4th copy
    assert _tree(work / ".pi") != before
    _sh(_uninstall(False), work, env)
    assert _tree(work / ".pi") == before


def test_cycle_with_a_user_install(tmp_path: Path) -> None:
    run, model, env, work = _scenario(
        tmp_path, bash(*["ls /nonexistent-x", "cat /nonexistent-y"] * 6), user=True)
    k = _check_guarded(run, model, _status("user", work, env))
    assert k == 7  # the 4th copy of the two-step cycle (the live preset: max 3)
    home = tmp_path / "home"
    _sh(_uninstall(True), work, env)
    assert not (home / ".pi" / "agent" / "extensions").exists()


def test_clean_session_never_hears_from_the_guard(tmp_path: Path) -> None:
    """A user install; besides it a project guard whose command cannot run (no such
    executable): Pi runs every call, and says why on standard error."""
    commands = ["ls /nonexistent-a", "ls /nonexistent-b", "echo one", "echo two",
                "ls /nonexistent-a"]
    work = tmp_path / "home" / "work"
    work.mkdir(parents=True)
    env = pi_env(tmp_path / "home", BIN)
    _sh([str(BIN / "maxrepeat"), "hook", "install", "pi", "--executable",
         str(tmp_path / "no-such-maxrepeat")], work, env)
    run, model, env, work = _scenario(tmp_path, bash(*commands), user=True)
    assert run.returncode == 0, run.stderr
    assert run.log is not None
    texts = _texts(run.log)
    assert len(texts) == len(commands) and not any(GUARD in t for t in texts)
    assert "one" in texts[2] and "two" in texts[3]
    assert not any(GUARD in json.dumps(b) for b in model.requests)
    assert model.served == len(commands) + 1
    assert run.stderr.count("maxrepeat guard:") == 2 * len(commands), run.stderr
    guard = _status("user", work, env)
    assert guard["loads"] and guard["verdicts"] == []
    config = MaxRepeatConfig.from_mapping(guard["graders"][0])
    [traj] = list(read_trajectories(run.log, format="pi"))
    assert not any(_grading(traj, config)[0])
