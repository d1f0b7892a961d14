"""End to end: the guard installed in a PROJECT exactly as each agent's page shows it
(the page's plain ``maxrepeat hook install AGENT`` line, run in a fresh project folder),
the step the page gives for a project's hooks to load in a non-interactive run, then the
real agent (from .npm-agents/) against a scripted model on 127.0.0.1 repeating one failing
command; and ``maxrepeat hook status AGENT`` run afterwards as the user would.

For each agent: status finds the project guard, says whether the agent loads it (and
Codex's missing hook trust, which only ``--dangerously-bypass-hook-trust`` gets round),
gives the grader it runs with, under which the guard spoke first at the very call where
grading the agent's own log first fails; the verdicts it lists are what the agent was told
(warn, then refuse, then stop where the agent stops), and the agent exits 0 even after a
stop, as its page says. Without the trust step no agent is guarded, and status says why
(Codex runs no hook, Gemini CLI does not start, Copilot CLI skips the project's hooks);
for Codex the trust lines status prints then make it run the hook with no bypass flag.
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
from tests.agent_harness import ScriptedModel, run_agent, shell_turns
from tests.guards.agents.test_agent_hooks_e2e import (
    GUARD,
    _first_failing_call,
    _require,
    _texts,
    _trajectory,
)
from tests.project.test_docs_install_lines import install_lines

AGENTS = ("codex", "gemini-cli", "copilot-cli")
LOOP = ["ls /nonexistent-maxrepeat"] * 8
EXE = Path(sys.executable).parent / "maxrepeat"


def page_flags(agent: str) -> list[str]:
    """The flags of the page's plain project install line (``maxrepeat hook install
    AGENT ...`` without ``--user``)."""
    for line in install_lines(agent):
        if line[:4] == ["maxrepeat", "hook", "install", agent] and "--user" not in line:
            return line[4:]
    raise AssertionError(f"{agent}.md shows no project install line")


def project_guard(agent: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """``maxrepeat hook status AGENT --json`` in ``cwd``: the project guard's entry."""
    done = subprocess.run([str(EXE), "hook", "status", agent, "--json", "--last", "20"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    guards = [g for g in json.loads(done.stdout)["guards"] if g["scope"] == "project"]
    assert len(guards) == 1, done.stdout
    guard: dict[str, Any] = guards[0]
    return guard


def _told(guard: dict[str, Any]) -> list[str]:
    return [v["action"] for v in reversed(guard["verdicts"])]


@pytest.mark.parametrize("agent", AGENTS)
def test_project_install_as_the_page_shows(agent: str, tmp_path: Path) -> None:
    _require(agent)
    model = ScriptedModel(shell_turns(agent, LOOP))
    with model.serving():
        run = run_agent(agent, model, tmp_path / "home",
                        [*page_flags(agent), "--cache-dir", str(tmp_path / "cache")],
                        scope="project")
    assert run.returncode == 0, run.stderr  # a guard's stop does not change it (the page)
    assert run.log is not None, run.stderr
    guard = project_guard(agent, tmp_path / "home" / "work", run.env)
    if agent == "codex":  # `codex exec --trust` trusted the project; the hook ran by bypass
        assert not guard["loads"]
        assert [p.split(": ", 1)[1].split(" ")[0] for p in guard["load_problems"]] == [
            "hooks.state.<hook>.trusted_hash"], guard["load_problems"]
    else:
        assert guard["loads"], guard["load_problems"]
    config = MaxRepeatConfig.from_mapping(guard["graders"][0])
    traj = _trajectory(agent, run.log)
    k = _first_failing_call(traj, config)
    assert k is not None
    spoken = [i for i, text in enumerate(_texts(agent, run.log, traj)) if GUARD in text]
    assert spoken and spoken[0] == k, (spoken, k)
    told = _told(guard)
    assert told[:2] == ["warn", "block"], told
    if agent == "codex":  # refuses every further repeat; the run goes on to its end
        assert set(told[1:]) == {"block"} and model.served == len(LOOP) + 1, told
    else:  # the agent stopped: the rest of the script never ran
        assert told[2:] == ["stop"] and model.served == k + 3, (told, model.served)
    assert {s["session"] for s in guard["sessions"]} == {v["session"] for v in guard["verdicts"]}


def test_codex_untrusted_project_runs_no_hook_until_trusted_as_status_says(
        tmp_path: Path) -> None:
    agent = "codex"
    _require(agent)
    model = ScriptedModel(shell_turns(agent, LOOP[:5]))
    cache = tmp_path / "cache"
    with model.serving():
        run = run_agent(agent, model, tmp_path / "home", ["--cache-dir", str(cache)],
                        scope="project", trust=False)
    assert run.log is not None
    traj = _trajectory(agent, run.log)
    assert not any(GUARD in t for t in _texts(agent, run.log, traj))  # no hook ran
    guard = project_guard(agent, tmp_path / "home" / "work", run.env)
    assert not guard["loads"] and guard["verdicts"] == [] and guard["sessions"] == []
    problems = guard["load_problems"]
    assert "trust_level must be" in problems[0] and "codex exec --trust" in problems[0]
    # the lines status gives, added to Codex's config: the hook runs with no bypass flag
    config = tmp_path / "home" / ".codex" / "config.toml"
    lines = [p.split("; ")[-1].split(":\n", 1)[1] for p in problems if "trusted_hash" in p]
    trust = f'[projects.{json.dumps(str((tmp_path / "home" / "work").resolve()))}]\n' \
            'trust_level = "trusted"\n' + "\n".join(lines) + "\n"
    config.write_text(config.read_text() + trust)
    assert project_guard(agent, tmp_path / "home" / "work", run.env)["loads"]
    model = ScriptedModel(shell_turns(agent, LOOP[:5]))
    with model.serving():
        again = run_agent(agent, model, tmp_path / "home", None, bypass_hook_trust=False,
                          codex_config=trust)
    assert again.log is not None and again.log != run.log
    assert _told(project_guard(agent, tmp_path / "home" / "work", again.env))[:1] == ["warn"]
    assert os.path.getsize(cache / "verdicts.jsonl") > 0


CLAUDE = Path(os.environ.get("MAXREPEAT_CLAUDE_BIN", Path(__file__).resolve().parents[3]
                             / ".npm-agents" / "node_modules" / ".bin" / "claude"))


def test_claude_code_project_install_as_the_page_shows(tmp_path: Path) -> None:
    """Claude Code: the page's install line in the project, ``claude -p`` (which does
    not ask to trust the folder); the stop ends the run with exit 0 and
    ``terminal_reason: hook_stopped``, and status lists warn, refuse, stop."""
    from maxrepeat import grade, read_trajectories
    from tests.scripted_anthropic import ScriptedModel as AnthropicModel
    from tests.scripted_anthropic import claude_folders

    if not CLAUDE.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CLAUDE} is missing: scripts/test.sh installs it")
        pytest.skip("Claude Code CLI not installed (run scripts/test.sh)")
    project, config, _, env = claude_folders(
        tmp_path, f"{EXE.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    install = subprocess.run([str(EXE), "hook", "install", "claude-code",
                              *page_flags("claude-code")], cwd=project, env=env,
                             capture_output=True, text=True, timeout=60)
    assert install.returncode == 0 and "claude-code loads it" in install.stdout, install
    step = [("Bash", {"command": "ls /nonexistent-maxrepeat", "description": "look"})]
    # each answer 0.5 s after its request, as a real model's (a transcript lagging a
    # whole turn is a stated limit: docs/design/agent-guards.md)
    with AnthropicModel([step] * 8 + ["gave up"], latency=0.5).serving() as model:
        run = subprocess.run([str(CLAUDE), "-p", "fix the build", "--output-format", "json",
                              "--allowedTools", "Bash"], cwd=project,
                             env={**env, "ANTHROPIC_BASE_URL": model.url},
                             capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["terminal_reason"] == "hook_stopped"
    guard = project_guard("claude-code", project, env)
    assert guard["loads"], guard["load_problems"]
    assert _told(guard) == ["warn", "block", "stop"], guard["verdicts"]
    [transcript] = config.glob("projects/*/*.jsonl")
    traj = next(iter(read_trajectories(transcript, format="claude-code")))
    assert grade(traj, MaxRepeatConfig.from_mapping(guard["graders"][0])).failed


@pytest.mark.parametrize("agent", ["gemini-cli", "copilot-cli"])
def test_untrusted_project_is_not_guarded_as_status_says(agent: str, tmp_path: Path) -> None:
    """Without the trust step, Gemini CLI does not start at all in the folder (exit 55)
    and Copilot CLI runs without the project's hooks; status says the guard does not load
    and why, and the guard recorded nothing."""
    _require(agent)
    model = ScriptedModel(shell_turns(agent, LOOP[:5]))
    with model.serving():
        run = run_agent(agent, model, tmp_path / "home", ["--cache-dir", str(tmp_path / "c")],
                        scope="project", trust=False)
    guard = project_guard(agent, tmp_path / "home" / "work", run.env)
    assert not guard["loads"] and guard["verdicts"] == [] and guard["sessions"] == []
    [problem] = guard["load_problems"]
    if agent == "gemini-cli":
        assert run.returncode == 55 and model.served == 0, run.stderr
        assert "TRUST_FOLDER" in problem and "GEMINI_CLI_TRUST_WORKSPACE=true" in problem
    else:
        assert run.returncode == 0 and model.served == 6, run.stderr
        assert "trustedFolders must be" in problem and "COPILOT_ALLOW_ALL=true" in problem
