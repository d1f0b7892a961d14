"""An agent's hook that cannot run never blocks the agent, and never waits on a file
(issue 30, rows 9 and 3).

Exit 2 is what Claude Code (and Gemini CLI) read as "block this tool call": a typo in
the hook's flags in the settings must not block every call. Each agent reads exit 1 as a
non-blocking hook error. And a session log or state file that is a FIFO is refused at
once, never waited on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.guards.agents import names
from tests.project.test_startup_imports import _hook_session


def _hook(tmp: Path, args: list[str], stdin: str = "{}", timeout: float = 60
          ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COPILOT_HOME": str(tmp / "copilot"),
           "XDG_CACHE_HOME": str(tmp / "xdg")}
    return subprocess.run([sys.executable, "-m", "maxrepeat", "hook", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp)


_BAD = [["--max", "3", "--bogus"], ["--max", "3", "--warn-at", "-1"],
        ["--max", "3", "--block-at", "x"], ["--max", "3", "extra"], ["--max"],
        ["--max", "3", "--cache-dir", "/dev/null"], ["--max", "-3"], ["--max", "3", "-j"],
        ["--config", "/nonexistent/graders.yaml"], []]


#: the fast subset runs the bad command lines for one agent (~4 CPU-seconds each); the
#: others are `slow` (the full suite and CI)
@pytest.mark.parametrize("agent", [
    pytest.param(agent, marks=() if agent == "claude-code" else pytest.mark.slow)
    for agent in names()])
def test_a_hook_that_cannot_run_exits_1_for_every_agent(tmp_path: Path, agent: str) -> None:
    for case in _BAD:
        proc = _hook(tmp_path, [agent, *case])
        assert proc.returncode == 1, (case, proc.returncode, proc.stderr)
        assert proc.stderr.strip() and proc.stdout == "", case


@pytest.mark.parametrize("agent", names())
def test_help_still_exits_0(tmp_path: Path, agent: str) -> None:
    proc = _hook(tmp_path, [agent, "--help"])
    assert proc.returncode == 0 and "Usage" in proc.stdout


def test_other_commands_keep_exit_2_for_usage_errors(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "maxrepeat", "grade", "--bogus"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_fifo_log_is_refused_at_once(tmp_path: Path, agent: str) -> None:
    log, payload = _hook_session(agent, tmp_path, 3)
    log.unlink()
    os.mkfifo(log)
    proc = _hook(tmp_path, [agent, "--max", "2"], json.dumps(payload), timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "not a regular file (a FIFO)" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_state_file_is_ignored_at_once(tmp_path: Path) -> None:
    _, payload = _hook_session("claude-code", tmp_path, 3)
    args = ["claude-code", "--max", "2", "--cache-dir", str(tmp_path / "c")]
    first = _hook(tmp_path, args, json.dumps(payload))
    states = list((tmp_path / "c").glob("*.state"))
    assert first.returncode == 0 and states, first.stderr
    for state in states:
        state.unlink()
        os.mkfifo(state)
    again = _hook(tmp_path, args, json.dumps(payload), timeout=30)
    assert (again.returncode, again.stdout) == (0, first.stdout), again.stderr
