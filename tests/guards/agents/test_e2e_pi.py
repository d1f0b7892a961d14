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
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import read_trajectories
from maxrepeat.core.config import MaxRepeatConfig
from tests.e2e_scenarios import BIN, GUARD, check_guarded, grading, hook_status, page_line, sh, tree
from tests.pi_harness import PI, ChatModel, PiRun, bash, pi_env, run_pi
from tests.project.test_docs_install_lines import install_lines


def _uninstall(user: bool) -> list[str]:
    for line in install_lines("pi"):
        if line[:4] == ["maxrepeat", "hook", "uninstall", "pi"] and ("--user" in line) == user:
            return line
    raise AssertionError("pi.md shows no uninstall line")


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
    sh(_line(user), work, env)
    model = ChatModel(script)
    with model.serving():
        run = run_pi(model, home, work, env=env)
    assert run.log is not None, run.stderr
    return run, model, env, work


def _line(user: bool) -> list[str]:
    """The page's plain install line for a scope."""
    return page_line("pi", "pi", "install", user)


def _status(scope: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    return hook_status("pi", scope, cwd, env)


def _check_guarded(run: PiRun, model: ChatModel, guard: dict[str, Any]) -> int:
    """The guard spoke exactly where grading fails anew (`check_guarded`); the run ended
    at the stop, ``pi -p`` saying it was aborted."""
    assert run.log is not None
    k = check_guarded(guard, run.log, "pi", _texts(run.log), model.requests, model.served)
    assert run.returncode == 1 and "aborted" in run.stderr, (run.returncode, run.stderr)
    return k


def test_loop_in_a_project_warned_refused_stopped_then_uninstalled(tmp_path: Path) -> None:
    work = tmp_path / "home" / "work"
    mine = work / ".pi" / "extensions" / "mine.ts"
    mine.parent.mkdir(parents=True)
    mine.write_text("export default function (pi: any) {}\n")
    (work / ".pi" / "settings.json").write_text('{"theme": "dark"}\n')
    before = tree(work / ".pi")
    run, model, env, work = _scenario(tmp_path, bash(*["ls /nonexistent-maxrepeat"] * 8),
                                      user=False)
    k = _check_guarded(run, model, _status("project", work, env))
    assert k == 3  # the live preset's max 3: the 4th copy
    assert tree(work / ".pi") != before
    sh(_uninstall(False), work, env)
    assert tree(work / ".pi") == before


def test_cycle_with_a_user_install(tmp_path: Path) -> None:
    run, model, env, work = _scenario(
        tmp_path, bash(*["ls /nonexistent-x", "cat /nonexistent-y"] * 6), user=True)
    k = _check_guarded(run, model, _status("user", work, env))
    assert k == 7  # the 4th copy of the two-step cycle (the live preset: max 3)
    home = tmp_path / "home"
    sh(_uninstall(True), work, env)
    assert not (home / ".pi" / "agent" / "extensions").exists()


def test_clean_session_never_hears_from_the_guard(tmp_path: Path) -> None:
    """A user install; besides it a project guard whose command cannot run (no such
    executable): Pi runs every call, and says why on standard error."""
    commands = ["ls /nonexistent-a", "ls /nonexistent-b", "echo one", "echo two",
                "ls /nonexistent-a"]
    work = tmp_path / "home" / "work"
    work.mkdir(parents=True)
    env = pi_env(tmp_path / "home", BIN)
    sh([str(BIN / "maxrepeat"), "hook", "install", "pi", "--executable",
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
    assert not any(grading(traj, config)[0])
