"""End to end, with the real Cline CLI (npm ``cline@3.0.65``, installed by scripts/test.sh
into .npm-agents/) run with ``cline -y`` against the scripted Chat Completions model of
``tests/cline_harness.py`` on 127.0.0.1, the guard installed with exactly the lines
docs/integrations/cline.md shows, in a fresh project folder.

Four sessions, run at once (one Cline each, its own HOME): a loop (the same failing
command again and again, guard installed for the project), a cycle of period 2 (two
failing commands alternating, guard installed for the user), a response of two parallel
commands repeated (one step each) and a clean session (guard for the project). From
Cline's OWN session log (``<id>.messages.json``) after each run:

* the loop and the cycle: ``maxrepeat grade --preset live`` of the log fails; the guard's
  warning reached the model (a ``<hook_context>`` block Cline adds after the result, in
  the very next request) at exactly the call where grading the log first fails, and
  never before; the next repeat never ran: Cline's ``cancel`` ended the run before it
  (the call is in the log without a result, the rest of the script never served);
  ``maxrepeat hook status`` lists a warning and a stop for the session;
* the clean session: grading passes, the guard never spoke, the run completed;
* uninstall leaves the user's own files (a hook of theirs beside the guard's) byte for
  byte as they were, for both scopes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, TURN_START, Trajectory
from maxrepeat.core.monitor import Monitor
from maxrepeat.readers import Source, get_reader
from tests.cline_harness import CLINE, ChatModel, ClineRun, cline_env, run_cline, shell_turns

GUARD = "maxrepeat loop guard"
BIN = Path(sys.executable).parent
#: the install lines of docs/integrations/cline.md
PROJECT_LINE = ["maxrepeat", "hook", "install", "cline"]
USER_LINE = ["maxrepeat", "hook", "install", "cline", "--user"]
USER_HOOK = b"#!/bin/sh\n# the user's own hook\nexit 0\n"


@dataclass
class Scenario:
    """One guarded Cline run: what it left, the model's requests, the user's files."""

    run: ClineRun
    model: ChatModel
    before: dict[str, bytes]
    root: Path
    scope: str


def _env(home: Path) -> dict[str, str]:
    return cline_env(home)  # `maxrepeat` on PATH, as installed


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _maxrepeat(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout + done.stderr


def _scenario(base: Path, commands: list[str | list[str]], scope: str) -> Scenario:
    home = base / "home"
    work = home / "work"
    work.mkdir(parents=True)
    env = _env(home)
    # the user's own files beside where the guard goes
    root = work / ".clinerules" if scope == "project" else home / "Documents" / "Cline"
    (root / ("hooks" if scope == "project" else "Hooks")).mkdir(parents=True)
    own = root / ("hooks" if scope == "project" else "Hooks") / "TaskComplete"
    own.write_bytes(USER_HOOK)
    own.chmod(0o755)
    (root / "notes.md").write_bytes(b"# my rules\n")
    before = _tree(root)
    out = subprocess.run(PROJECT_LINE if scope == "project" else USER_LINE, cwd=work, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "cline loads it" in out.stdout, out.stdout
    model = ChatModel(shell_turns(commands))  # a list: one response of parallel commands
    with model.serving():
        run = run_cline(model, home, work=work, timeout=240)
    return Scenario(run, model, before, root, scope)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    if not CLINE.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CLINE} is missing: scripts/test.sh installs it")
        pytest.skip(f"{CLINE} is missing (run scripts/test.sh)")
    plans: dict[str, tuple[list[str | list[str]], str]] = {
        "loop": (["ls missing-dir"] * 8, "project"),
        "cycle": (["ls missing-a", "cat missing-b"] * 6, "user"),
        "clean": (["ls missing-a", "echo one", "cat missing-b", "echo two"], "project"),
        "parallel": ([["ls missing-a", "cat missing-b"]] * 7, "project")}
    with ThreadPoolExecutor(len(plans)) as pool:
        futures = {name: pool.submit(_scenario, tmp_path_factory.mktemp(name), cmds, scope)
                   for name, (cmds, scope) in plans.items()}
        return {name: f.result() for name, f in futures.items()}


def _trajectory(log: Path) -> Trajectory:
    items = list(get_reader("cline").read(Source.from_path(str(log))))
    assert len(items) == 1 and isinstance(items[0], Trajectory), items
    return items[0]


def _calls(traj: Trajectory) -> list[str]:
    return [e.data.tool_call_id for e in traj.events if e.type == TOOL_CALL]


def _warned(log: Path) -> list[str]:
    """The calls whose result the guard's words followed: Cline's ``<hook_context>``
    blocks (it doubles the underscores of the call id it names)."""
    found = []
    for message in json.loads(log.read_text(encoding="utf-8"))["messages"]:
        for block in message["content"]:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and text.startswith("<hook_context") and GUARD in text:
                cid = text.split('tool_call_id="', 1)[1].split('"', 1)[0]
                found.append(cid.replace("__", "_"))
    return found


def _first_failing_call(traj: Trajectory) -> int | None:
    monitor = Monitor(MaxRepeatConfig.preset("live"))
    calls = 0
    for event in traj.events:
        calls += event.type == TOOL_CALL
        if monitor.feed(event).failed:
            return calls - 1
    return None


def _graded(log: Path) -> dict[str, Any]:
    done = subprocess.run([str(BIN / "maxrepeat"), "grade", str(log), "--preset", "live",
                           "--output", "json"], capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _check_guarded(s: Scenario) -> int:
    """The checks of a looping session (see the module docstring); the call (0-based) at
    which grading the log first fails."""
    run = s.run
    assert run.log is not None, run.stdout[-2000:] + run.stderr[-2000:]
    traj = _trajectory(run.log)
    calls = _calls(traj)
    k = _first_failing_call(traj)
    assert k is not None and _graded(run.log)["results"][0]["passed"] is False
    warned = _warned(run.log)
    # first told at the call where grading first fails; told again only at calls after
    # it (a cycle's next step extends the same loop)
    assert warned and warned[0] == calls[k], (warned, calls)
    assert all(calls.index(c) > k for c in warned[1:]), (warned, calls)
    bodies = [json.dumps(r["body"]) for r in s.model.requests]
    assert GUARD in bodies[k + 1] and not any(GUARD in b for b in bodies[:k + 1])
    # the next repeat was cut off before it ran, and the run ended there
    answered = {e.data.tool_call_id for e in traj.events if e.type == TOOL_RESULT}
    assert calls[-1] not in answered and set(calls[:-1]) <= answered, calls
    assert len(calls) > k + 1 and calls.index(warned[-1]) == len(calls) - 2, (warned, calls)
    assert s.model.served == len(calls)  # the rest of the script never ran
    assert run.returncode == 0  # Cline's cancel: the run ends, the exit status is 0
    # the guard's reason is in Cline's own log only (the model never reads it)
    own = (run.home / ".cline" / "data" / "logs" / "cline.log").read_text("utf-8")
    assert "ControlledStopError" in own and f"{GUARD} (stopped): this call would" in own
    assert not any("(stopped)" in b for b in bodies)
    status = _maxrepeat([str(BIN / "maxrepeat"), "hook", "status", "cline", "--json",
                         "--last", "20"], run.home / "work", _env(run.home))
    verdicts = [v for g in json.loads(status)["guards"] for v in g["verdicts"]]
    assert [v["action"] for v in reversed(verdicts)] == ["warn"] * len(warned) + ["stop"]
    assert {v["session"] for v in verdicts} == {traj.id}
    return k


def test_real_agent_loop_is_warned_then_stopped(sessions: dict[str, Scenario]) -> None:
    s = sessions["loop"]
    assert _check_guarded(s) == 3  # the 4th copy (live preset: max 3)
    assert s.run.log is not None
    assert len(_calls(_trajectory(s.run.log))) == 5  # the 5th copy cut off


def test_real_agent_cycle_is_warned_then_stopped(sessions: dict[str, Scenario]) -> None:
    s = sessions["cycle"]
    k = _check_guarded(s)
    assert s.run.log is not None
    result = Monitor(MaxRepeatConfig.preset("live")).feed_all(_trajectory(s.run.log).events)
    assert result.metadata.runs and result.metadata.runs[0].period == 2
    assert k >= 6


def test_real_agent_clean_session_is_never_spoken_to(sessions: dict[str, Scenario]) -> None:
    s = sessions["clean"]
    assert s.run.returncode == 0 and s.run.log is not None, s.run.stderr[-2000:]
    traj = _trajectory(s.run.log)
    assert _first_failing_call(traj) is None
    assert _graded(s.run.log)["results"][0]["passed"] is True
    assert len(_calls(traj)) == 5  # four commands and submit_and_exit
    assert _warned(s.run.log) == []
    assert not any(GUARD in json.dumps(r["body"]) for r in s.model.requests)


@pytest.mark.parametrize("name", ["loop", "cycle"])
def test_real_agent_uninstall_leaves_the_users_files(sessions: dict[str, Scenario],
                                                     name: str) -> None:
    s = sessions[name]
    assert _tree(s.root) != s.before  # the guard's files were there
    line = ["maxrepeat", "hook", "uninstall", "cline", *(["--user"] if s.scope == "user"
                                                          else [])]
    _maxrepeat(line, s.run.home / "work", _env(s.run.home))
    assert _tree(s.root) == s.before


def test_real_agent_parallel_calls_are_one_step(sessions: dict[str, Scenario]) -> None:
    """A response of two parallel commands, repeated: one step each, as ``grade`` sees
    it; warned once (at the first call of the 4th copy), the 5th cut off before any of
    its calls ran."""
    s = sessions["parallel"]
    assert s.run.log is not None, s.run.stderr[-2000:]
    traj = _trajectory(s.run.log)
    steps: list[list[str]] = []
    for e in traj.events:
        if e.type == TURN_START:
            steps.append([])
        elif e.type == TOOL_CALL:
            steps[-1].append(e.data.tool_call_id)
    assert [len(step) for step in steps] == [2] * 5, steps
    assert _first_failing_call(traj) == 7  # the 4th step, when it is complete
    assert _warned(s.run.log) == [steps[3][0]]
    answered = {e.data.tool_call_id for e in traj.events if e.type == TOOL_RESULT}
    assert not set(steps[4]) & answered and {c for st in steps[:4] for c in st} <= answered
    bodies = [json.dumps(r["body"]) for r in s.model.requests]
    assert s.model.served == 5 and GUARD in bodies[4]
    assert not any(GUARD in b for b in bodies[:4])
