"""The checks the end-to-end tests of plug-in agents (Pi, OpenClaw, OpenCode, Qwen Code)
make alike, written once: the docs page's install line, the scenarios run at once
(`run_all`), a command that must succeed, a
folder's files, the guard's ``hook status``, where grading the session fails, and
`check_guarded`: the guard spoke exactly where grading fails anew (warned, refused, then
stopped) and the model read it there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from maxrepeat import read_trajectories
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor
from tests.project.test_docs_install_lines import install_lines

GUARD = "maxrepeat loop guard"
R = TypeVar("R")
#: the folder of this Python's ``maxrepeat`` command
BIN = Path(sys.executable).parent


def page_line(page: str, agent: str, verb: str, user: bool) -> list[str]:
    """The page's plain ``maxrepeat hook VERB AGENT`` line for a scope (``--user`` or
    nothing after it)."""
    for line in install_lines(page):
        if line[:4] == ["maxrepeat", "hook", verb, agent] and line[4:] == (
                ["--user"] if user else []):
            return line
    raise AssertionError(f"{page}.md shows no plain {verb} line")


def sh(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run ``args`` (it must succeed); its standard output."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def tree(root: Path) -> dict[str, bytes]:
    """Every file (its bytes) and folder (``/``) below ``root``, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"/"
            for p in sorted(root.rglob("*"))}


def hook_status(agent: str, scope: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """``maxrepeat hook status AGENT --json``: the one guard of ``scope``."""
    out = sh([str(BIN / "maxrepeat"), "hook", "status", agent, "--json", "--last", "20"],
             cwd, env)
    found = [g for g in json.loads(out)["guards"] if g["scope"] == scope]
    assert len(found) == 1, out
    guard: dict[str, Any] = found[0]
    return guard


def grading(traj: Trajectory, config: MaxRepeatConfig) -> tuple[list[bool], list[bool]]:
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


def check_guarded(guard: dict[str, Any], log: Path, fmt: str, texts: list[str],
                  requests: Sequence[Any], served: int) -> int:
    """The guard (its ``hook status``) spoke exactly where grading the session ``log``
    (format ``fmt``) fails anew: ``texts``, per call, what the model read; it warned,
    refused, then stopped, and the model (``requests``, ``served`` answers) was asked
    nothing after the stop. Returns the first failing call, where the model was first
    told."""
    assert guard["loads"], guard["load_problems"]
    config = MaxRepeatConfig.from_mapping(guard["graders"][0])
    [traj] = list(read_trajectories(log, format=fmt))
    spoken = [GUARD in t for t in texts]
    failing, new = grading(traj, config)
    # never where grading the log so far passes, first where it first fails, and at every
    # new copy of the loop after that (a partial copy of a cycle is refused once the
    # guard refuses, as the refusal rung says)
    assert all(f for s, f in zip(spoken, failing, strict=False) if s), (spoken, failing)
    assert all(s for s, n in zip(spoken, new, strict=False) if n), (spoken, new)
    at = [i for i, said in enumerate(spoken) if said]
    k = at[0]
    assert k == failing.index(True), (spoken, failing)
    bodies = [json.dumps(b) for b in requests]
    assert GUARD in bodies[k + 1] and not any(GUARD in b for b in bodies[:k + 1])
    assert "(warning)" in texts[k] and all("(blocked)" in texts[i] for i in at[1:-1])
    assert "(stopped)" in texts[at[-1]] and len(texts) == at[-1] + 1 and len(at) >= 3
    assert served == at[-1] + 1  # the run ended: no request after the stop
    told = [v["action"] for v in reversed(guard["verdicts"])]
    assert told == ["warn", *["block"] * (len(at) - 2), "stop"], told
    graded = subprocess.run([str(BIN / "maxrepeat"), "grade", str(log), "--format", fmt,
                             "--preset", "live"], capture_output=True, text=True, timeout=60)
    assert graded.returncode == 1, graded.stdout
    return k


def the_guard(agent: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """``maxrepeat hook status AGENT --json`` where one guard is installed: that guard,
    which the agent loads."""
    out = sh([str(BIN / "maxrepeat"), "hook", "status", agent, "--json", "--last", "20"],
             cwd, env)
    [guard] = json.loads(out)["guards"]
    assert guard["loads"], guard["load_problems"]
    return dict(guard)


def run_all(agent: str, scenarios: Sequence[str], scenario: Callable[[str, Path], R],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, R]]:
    """Each of ``scenarios`` run at once by ``scenario(name, base)`` in one temporary
    folder (a module fixture's body: yields the runs by name, then removes the folder);
    the agent's command ``agent`` must be installed (missing: a failure on CI, else a
    skip)."""
    if not agent_bin(agent).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{agent_bin(agent)} is missing: scripts/test.sh installs it")
        pytest.skip(f"{agent_bin(agent)} is missing (run scripts/test.sh)")
    base = tmp_path_factory.mktemp(agent)
    with ThreadPoolExecutor(len(scenarios)) as pool:
        futures = {name: pool.submit(scenario, name, base) for name in scenarios}
        yield {name: f.result() for name, f in futures.items()}
    shutil.rmtree(base, ignore_errors=True)


def agent_bin(name: str) -> Path:
    """An agent command installed in ``.npm-agents`` (``scripts/test.sh``)."""
    root = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("MAXREPEAT_NPM_AGENTS", root / ".npm-agents")) \
        / "node_modules" / ".bin" / name
