"""End to end with the real OpenClaw (npm ``openclaw@2026.9.6``, installed by
scripts/test.sh into .npm-agents/ with Node.js 24): ``openclaw agent --local`` against the
scripted Responses model of tests/openclaw_harness.py on 127.0.0.1, with a temporary HOME
and a fresh project folder as the agent's workspace, the guard installed with exactly the
lines docs/integrations/openclaw.md shows (the live preset).

One OpenClaw session per scenario, each read back from OpenClaw's OWN agent database:

* a loop (one failing command again and again; project install): the guard's warning
  reaches the model first at exactly the call where ``maxrepeat grade`` of the database
  first fails, the next repeat is refused before it runs, the one after is refused and
  ends the run (``openclaw agent --local`` exits 1, ``agent run aborted``); ``hook
  status`` lists warn, block, stop; uninstall leaves the project's ``.openclaw/`` and the
  user's config byte-identical;
* a cycle A B A B … (user install): the same, at the cycle's first failing call;
* a clean session (user install): the guard never speaks and every call runs;
* a guard whose command cannot run (project install): every call runs, the plug-in says
  why on standard error.

At every call, with the graders ``hook status`` reports: the guard never speaks where
grading the log up to that call passes, speaks first where it first fails, and speaks at
every new copy of the loop after that.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import read_trajectories
from maxrepeat.core.config import MaxRepeatConfig
from tests.e2e_scenarios import BIN, GUARD, check_guarded, grading, hook_status, page_line, sh, tree
from tests.openclaw_harness import (
    NODE_BIN,
    OPENCLAW,
    ResponsesModel,
    Run,
    agent_env,
    execs,
    run_openclaw,
    write_config,
)


def _line(verb: str, user: bool) -> list[str]:
    """The page's plain install (or uninstall) line for a scope."""
    return page_line("openclaw", "openclaw", verb, user)


def _status(scope: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    return hook_status("openclaw", scope, cwd, env)


def _texts(database: Path) -> list[str]:
    """Per call, in order, the result the model read (as OpenClaw stored it)."""
    calls: list[str] = []
    results: dict[str, str] = {}
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT event_json FROM transcript_events ORDER BY seq").fetchall()
    for (raw,) in rows:
        message = json.loads(raw or "{}").get("message") or {}
        if message.get("role") == "assistant":
            calls += [c["id"] for c in message["content"] if c.get("type") == "toolCall"]
        elif message.get("role") == "toolResult":
            results[message["toolCallId"]] = json.dumps(message["content"])
    return [results.get(c, "") for c in calls]


def _folders(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    if not (OPENCLAW.exists() and (NODE_BIN / "node").exists()):
        if os.environ.get("CI"):
            pytest.fail(f"{OPENCLAW} or {NODE_BIN}/node is missing: scripts/test.sh "
                        "installs them")
        pytest.skip(f"{OPENCLAW} is missing (run scripts/test.sh)")
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir(parents=True)
    home.mkdir()
    return home, work, agent_env(home, BIN)


def _scenario(home: Path, work: Path, env: dict[str, str], script: list[Any], user: bool,
              executable: Path | None = None) -> tuple[Run, ResponsesModel, bytes]:
    """Write OpenClaw's config, install the guard with the page's line (or with another
    ``executable``), run one session; returns the config as it was before the install."""
    model = ResponsesModel(script)
    with model.serving():
        config = write_config(home, model.port, work)
        before = config.read_bytes()
        line = _line("install", user)
        sh(line + (["--executable", str(executable)] if executable else []), work, env)
        run = run_openclaw(work, home, env)
    assert run.database.exists(), run.stderr
    return run, model, before


def _check_guarded(run: Run, model: ResponsesModel, guard: dict[str, Any]) -> int:
    """The guard spoke exactly where grading fails anew (`check_guarded`); the plug-in
    aborted the run at the stop."""
    texts = _texts(run.database)
    k = check_guarded(guard, run.database, "openclaw", texts, model.requests, model.served)
    assert run.returncode == 1 and "aborted" in run.stdout + run.stderr, run.returncode
    return k


def test_loop_in_a_project_warned_refused_stopped_then_uninstalled(tmp_path: Path) -> None:
    home, work, env = _folders(tmp_path)
    mine = work / ".openclaw" / "extensions" / "mine" / "index.js"
    mine.parent.mkdir(parents=True)
    mine.write_text("export default { id: 'mine', register() {} };\n")
    before = tree(work / ".openclaw")
    run, model, config = _scenario(home, work, env,
                                   execs(*["ls /nonexistent-maxrepeat"] * 8), user=False)
    k = _check_guarded(run, model, _status("project", work, env))
    assert k == 3  # the live preset's max 3: the 4th copy
    assert tree(work / ".openclaw") != before
    sh(_line("uninstall", False), work, env)
    assert tree(work / ".openclaw") == before
    assert (home / ".openclaw" / "openclaw.json").read_bytes() == config


def test_cycle_with_a_user_install(tmp_path: Path) -> None:
    home, work, env = _folders(tmp_path)
    run, model, config = _scenario(
        home, work, env, execs(*["ls /nonexistent-x", "cat /nonexistent-y"] * 6), user=True)
    k = _check_guarded(run, model, _status("user", work, env))
    assert k == 7  # the 4th copy of the two-step cycle (the live preset: max 3)
    sh(_line("uninstall", True), work, env)
    assert not (home / ".openclaw" / "extensions").exists()
    assert (home / ".openclaw" / "openclaw.json").read_bytes() == config


def test_clean_session_never_hears_from_the_guard(tmp_path: Path) -> None:
    """A user install: OpenClaw runs every call, the guard is asked at each and says
    nothing."""
    home, work, env = _folders(tmp_path)
    commands = ["ls /nonexistent-a", "ls /nonexistent-b", "echo one", "echo two",
                "ls /nonexistent-a"]
    run, model, _ = _scenario(home, work, env, execs(*commands), user=True)
    assert run.returncode == 0, run.stderr
    texts = _texts(run.database)
    assert len(texts) == len(commands) and not any(GUARD in t for t in texts)
    assert "one" in texts[2] and "two" in texts[3]
    assert not any(GUARD in json.dumps(b) for b in model.requests)
    assert model.served == len(commands) + 1
    assert "maxrepeat guard:" not in run.stderr, run.stderr
    guard = _status("user", work, env)
    assert guard["loads"] and guard["verdicts"] == []
    config = MaxRepeatConfig.from_mapping(guard["graders"][0])
    [traj] = list(read_trajectories(run.database, format="openclaw"))
    assert not any(grading(traj, config)[0])


def test_a_guard_that_cannot_run_blocks_nothing(tmp_path: Path) -> None:
    """A project install whose command cannot run (no such executable): OpenClaw runs
    every repeat of a loop, and the plug-in says why on standard error at each call."""
    home, work, env = _folders(tmp_path)
    commands = ["ls /nonexistent-a"] * 5
    run, model, _ = _scenario(home, work, env, execs(*commands), user=False,
                              executable=tmp_path / "no-such-maxrepeat")
    assert run.returncode == 0, run.stderr
    texts = _texts(run.database)
    assert len(texts) == len(commands) and all("No such file" in t for t in texts)
    assert model.served == len(commands) + 1
    assert run.stderr.count("maxrepeat guard:") == 2 * len(commands), run.stderr
