"""End to end, with the real agents (see `tests.agent_harness`): after the guard refuses a
call, the session goes on at full speed.

A refused call gets no post-call hook, and the guard counts its refusal as a result the
agent's log will show (`maxrepeat.guards.agentlog`): the next hook waits, up to
``LAG_WAIT`` (2 s), until the log shows as many results as the guard was given. That is
right only if the agent does write the refusal into its log as the call's result; if it
did not, every later hook of the session would wait the full 2 s. Here the model repeats
a command until it is refused, then moves on to three different commands: the agent's own
log records the refused call with the guard's words as its result, the later calls run,
and no hook (timed around the real ``maxrepeat`` command) comes near the wait.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from maxrepeat.core.events import TOOL_CALL, TOOL_RESULT, Trajectory
from maxrepeat.guards.agentlog import LAG_WAIT
from maxrepeat.readers import Source, get_reader
from tests.agent_harness import ScriptedModel, binary, run_agent, shell_turns

GUARD = "maxrepeat loop guard"
LOOP = "ls /nonexistent-maxrepeat"
AFTER = ["echo one", "echo two", "echo three"]
#: a hook that waited for the log would take LAG_WAIT; one that did not takes a Python
#: start and a read of a short log (~0.03-0.15 s measured on 2 busy cores)
QUICK = LAG_WAIT / 2


def _require(agent: str) -> None:
    if not binary(agent).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{binary(agent)} is missing: scripts/test.sh installs it")
        pytest.skip(f"{binary(agent)} is missing (run scripts/test.sh)")


def _timed_maxrepeat(folder: Path, times: Path) -> Path:
    """A ``maxrepeat`` command that runs the real one and appends its wall time (seconds)
    and arguments to ``times``."""
    real = Path(sys.executable).parent / "maxrepeat"
    folder.mkdir(parents=True)
    exe = folder / "maxrepeat"
    exe.write_text(f"""#!/bin/bash
start=$(date +%s%N)
{real} "$@"
rc=$?
echo "$(( $(date +%s%N) - start )) $*" >> {times}
exit $rc
""", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def _hook_times(times: Path, agent: str) -> list[float]:
    """The wall time of each hook call (not the install), in seconds, in order."""
    out = []
    for line in times.read_text(encoding="utf-8").splitlines():
        nanos, *args = line.split()
        if args[:2] == ["hook", agent]:
            out.append(int(nanos) / 1e9)
    return out


def _results(agent: str, log: Path) -> tuple[list[str], list[str]]:
    """The calls' commands and their results, from the agent's own log (its reader)."""
    items = list(get_reader(agent).read(Source.from_path(str(log))))
    trajs = [t for t in items if isinstance(t, Trajectory)]
    assert len(trajs) == 1, items
    calls = [str(e.data.arguments) for e in trajs[0].events if e.type == TOOL_CALL]
    results = [str(e.data.result) for e in trajs[0].events if e.type == TOOL_RESULT]
    return calls, results


@pytest.mark.parametrize("agent", ["codex", "gemini-cli", "copilot-cli"])
def test_the_hooks_after_a_refusal_do_not_wait_for_the_log(agent: str, tmp_path: Path
                                                           ) -> None:
    _require(agent)
    times = tmp_path / "hook-times"
    exe = _timed_maxrepeat(tmp_path / "bin", times)
    # max 2 in name-args mode: the third copy is warned, the fourth refused before it runs
    model = ScriptedModel(shell_turns(agent, [LOOP] * 4 + AFTER))
    with model.serving():
        run = run_agent(agent, model, tmp_path / "home",
                        ["--max", "2", "--match", "name-args",
                         "--cache-dir", str(tmp_path / "cache")], executable=exe)
    assert run.log is not None, (run.stdout, run.stderr)
    assert model.served == 8, (model.served, run.stderr)  # every call asked for, and "done"
    calls, results = _results(agent, run.log)
    assert len(calls) == len(results) == 7, (calls, results)
    # the agent's log records the refused call with the guard's words as its result
    assert GUARD in results[3] and "refused" in results[3], results[3]
    assert not any(GUARD in r for r in results[4:])
    for word, result in zip(("one", "two", "three"), results[4:], strict=True):
        assert word in result, results
    hooks = _hook_times(times, agent)
    # a hook before each of the 7 calls and after each of the 6 that ran (Copilot CLI
    # runs hooks for more events)
    assert len(hooks) >= 13, hooks
    assert max(hooks) < QUICK, hooks

