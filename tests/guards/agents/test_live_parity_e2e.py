"""Live = post-hoc, end to end, for every agent and match mode: the real agent CLIs
(Claude Code, Codex CLI, Gemini CLI, Copilot CLI, from .npm-agents/, installed by
scripts/test.sh) run a loop (the same shell command, the same output, again and again)
against a scripted model on 127.0.0.1, with the guard installed by ``maxrepeat hook install
AGENT --config FILE``, for each of four settings (max 2): ``name``, ``name-args``,
``observation`` and the near-duplicate preset (``name-args``, ``normalize: [volatile]``,
``ignore_arguments: [description, summary]``, ``with_observation``, cycles up to 2).

One run per agent and setting, shared by two tests (`_run` caches it; the two run on one
pytest-xdist worker):

* parity: at each call, the hook spoke (its words reached the model) exactly when grading
  the agent's own log up to that call, with the same settings, fails: first at the very
  call where grading first fails, never before; ``maxrepeat grade`` of the whole log with
  the same config file agrees with the prefixes;
* detection: grading fails at all (the loop is seen), at the third copy of the call.

Two things Copilot CLI and Gemini CLI add to a logged result would break either: the
shell's per-call ids (``<shellId: N>``, ``Process Group PGID: N``), which hide the loop
from exact observation matching, and the hook's own words, which they write into the
warned call's result (so grading the log would see that call differ from the copies
before it); their readers drop both (`maxrepeat.readers._agent_chrome`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor
from tests.agent_harness import ScriptedModel, Turn, binary, run_agent, shell_turns
from tests.guards.agents.test_agent_hooks_e2e import READER as LOG_READER
from tests.guards.agents.test_agent_hooks_e2e import _texts, _trajectory

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = Path(os.environ.get("MAXREPEAT_CLAUDE_BIN",
                             ROOT / ".npm-agents" / "node_modules" / ".bin" / "claude"))
AGENTS = ("claude-code", "codex", "gemini-cli", "copilot-cli")
GUARD = "maxrepeat loop guard"
COMMAND = "echo same output"
CALLS = 4  # with max 2 the third copy fails, and the guard speaks; the fourth is refused
SETTINGS: dict[str, dict[str, Any]] = {
    "name": {"max": 2, "match": "name"},
    "name-args": {"max": 2, "match": "name-args"},
    "observation": {"max": 2, "match": "observation"},
    "near-duplicate": {"max": 2, "max_cycle_period": 2, "match": "name-args",
                       "normalize": ["volatile"],
                       "ignore_arguments": ["description", "summary"],
                       "with_observation": True},
}
READER = {**LOG_READER, "claude-code": "claude-code"}


@dataclass
class Run:
    """One guarded run: the agent's log (trajectory and file) and, per call in the log,
    whether the guard's words reached the model after it."""

    log: Path
    traj: Trajectory
    spoken: list[bool]
    config_file: Path


def _require(agent: str) -> None:
    path = CLAUDE if agent == "claude-code" else binary(agent)
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: scripts/test.sh installs it")
        pytest.skip(f"{path} is missing (run scripts/test.sh)")


def _config_file(tmp: Path, setting: str) -> Path:
    path = tmp / f"{setting}.yaml"
    grader = {"type": "max-repeat", "name": "parity", "config": SETTINGS[setting]}
    path.write_text(json.dumps({"graders": [grader]}), encoding="utf-8")  # JSON is YAML
    return path


def _claude_run(tmp: Path, config_file: Path) -> Run:
    from maxrepeat import read_trajectories
    from tests.guards.agents.test_e2e_claude_code import _guard_messages, _order, bash
    from tests.guards.agents.test_e2e_claude_code import _run as run_claude

    got = run_claude(tmp, [[bash(COMMAND)]] * CALLS + ["done"],
                     ["--config", str(config_file)])
    order = _order(got["records"])
    told = {order.index(m[0]) for m in _guard_messages(got["records"]) if m[0] in order}
    traj = next(iter(read_trajectories(got["transcript"], format="claude-code")))
    return Run(got["transcript"], traj, [i in told for i in range(len(order))], config_file)


def _agent_run(agent: str, tmp: Path, config_file: Path) -> Run:
    model = ScriptedModel(shell_turns(agent, [COMMAND] * CALLS))
    with model.serving():
        run = run_agent(agent, model, tmp / "home",
                        ["--config", str(config_file), "--cache-dir", str(tmp / "cache")])
    assert run.log is not None, (run.stdout, run.stderr)
    traj = _trajectory(agent, run.log)
    return Run(run.log, traj, [GUARD in t for t in _texts(agent, run.log, traj)],
               config_file)


_RUNS: dict[tuple[str, str], Run] = {}


def _run(agent: str, setting: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The run of ``agent`` with the guard set to ``setting`` (made once per session)."""
    _require(agent)
    key = (agent, setting)
    if key not in _RUNS:
        tmp = tmp_path_factory.mktemp(f"{agent}-{setting}")
        config_file = _config_file(tmp, setting)
        _RUNS[key] = (_claude_run(tmp, config_file) if agent == "claude-code"
                      else _agent_run(agent, tmp, config_file))
    return _RUNS[key]


def _failing_after_each_call(traj: Trajectory, config: MaxRepeatConfig) -> list[bool]:
    """Per call of the log, whether grading the log up to it (its result and anything
    else before the next call) fails."""
    monitor = Monitor(config)
    failed: list[bool] = []
    for event in traj.events:
        if event.type == TOOL_CALL:
            failed.append(False)
        result = monitor.feed(event)  # what grade() says of the events so far
        if failed:
            failed[-1] = result.failed
    return failed


def _grade_cli(run: Run, agent: str) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "maxrepeat"
    proc = subprocess.run([str(exe), "grade", str(run.log), "--format", READER[agent],
                           "--config", str(run.config_file), "--output", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


#: both tests of a case on one pytest-xdist worker (``--dist loadgroup``), so that the
#: agent runs once per case (`_RUNS` is per process): apart, half the runs were made twice
CASES = [pytest.param(agent, setting, id=f"{agent}-{setting}",
                      marks=pytest.mark.xdist_group(f"live-parity-{agent}-{setting}"))
         for agent in AGENTS for setting in SETTINGS]


@pytest.mark.parametrize(("agent", "setting"), CASES)
def test_hook_speaks_exactly_where_grading_the_log_fails(
        agent: str, setting: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    run = _run(agent, setting, tmp_path_factory)
    failing = _failing_after_each_call(run.traj, MaxRepeatConfig.from_mapping(SETTINGS[setting]))
    assert len(run.spoken) == len(failing), (run.spoken, failing)
    # the guard's first words come with the very call at which grading first fails, and
    # at each call the guard has spoken exactly when grading the log up to it fails
    first = failing.index(True) if True in failing else None
    told = run.spoken.index(True) if True in run.spoken else None
    assert told == first, (run.spoken, failing)
    assert run.spoken == failing
    graded = _grade_cli(run, agent)
    assert graded["results"][0]["passed"] is (first is None), graded["results"][0]


@pytest.mark.parametrize(("agent", "setting"), CASES)
def test_loop_is_detected(agent: str, setting: str,
                          tmp_path_factory: pytest.TempPathFactory) -> None:
    run = _run(agent, setting, tmp_path_factory)
    failing = _failing_after_each_call(run.traj, MaxRepeatConfig.from_mapping(SETTINGS[setting]))
    assert True in failing, (run.spoken, failing)
    assert failing.index(True) == 2  # the third copy of the call


class _Polling(ScriptedModel):
    """A scripted model whose ``write_stdin`` calls poll the session the last command
    output named (``Process running with session ID N``)."""

    def responses_events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        turn = self.turns[self.served] if self.served < len(self.turns) else None
        if turn is not None and turn.name == "write_stdin":
            ids = re.findall(r"session ID (\d+)", json.dumps(body))
            turn.arguments = {"session_id": int(ids[-1]) if ids else 0, "chars": "",
                              "yield_time_ms": 5000}
        return super().responses_events(body)


def test_codex_command_polled_to_its_end(tmp_path: Path) -> None:
    """A command that outlives its first wait reports its end (and its PostToolUse) through
    the write_stdin call that polls it: the guard judges that poll with the output, as
    the rollout records it. Watching the polls only, in observation mode, the guard speaks
    at the third poll, where grading the rollout first fails."""
    _require("codex")
    setting = {"max": 2, "match": "observation", "tools": ["^write_stdin$"]}
    config_file = tmp_path / "polls.yaml"
    config_file.write_text(json.dumps({"graders": [
        {"type": "max-repeat", "name": "parity", "config": setting}]}), encoding="utf-8")
    command = {"cmd": "sleep 0.6; echo same output", "yield_time_ms": 250}
    turns = [Turn(name="exec_command", arguments=command), Turn(name="write_stdin")] * 3
    model = _Polling([Turn(t.name, dict(t.arguments or {})) for t in turns] + [Turn(text="done")])
    with model.serving():
        run = run_agent("codex", model, tmp_path / "home",
                        ["--config", str(config_file), "--cache-dir", str(tmp_path / "cache")])
    assert run.log is not None, (run.stdout, run.stderr)
    traj = _trajectory("codex", run.log)
    spoken = [GUARD in t for t in _texts("codex", run.log, traj)]
    failing = _failing_after_each_call(traj, MaxRepeatConfig.from_mapping(setting))
    assert True in failing and failing.index(True) == 5, (spoken, failing)
    told = spoken.index(True) if True in spoken else None
    assert told == 5, (spoken, failing)  # the third poll, none before
