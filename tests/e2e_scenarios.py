"""The checks the end-to-end tests of plug-in agents (Pi, OpenClaw, OpenCode, Qwen Code)
make alike, written once: the docs page's install line, the scenarios run at once
(`run_all`), a command that must succeed, a
folder's files, the guard's ``hook status``, where grading the session fails, and
`check_guarded`: the guard spoke exactly where grading fails anew (warned, refused, then
stopped) and the model read it there. For agents that talk to the scripted Chat
Completions model (OpenCode, Qwen Code): one session installed by the page's line and
run (`install_and_run`, an `AgentRun`), and the checks of a cycle, a clean session and
an uninstall."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from maxrepeat import read_trajectories
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor
from maxrepeat.readers import Source, get_reader
from tests.project.test_docs_install_lines import install_lines
from tests.scripted_chat import ChatModel, Step

GUARD = "maxrepeat loop guard"
R = TypeVar("R")
RunT = TypeVar("RunT", bound="AgentRun")
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


def tree(root: Path, *skip: str) -> dict[str, bytes]:
    """Every file (its bytes) and folder (``/``) below ``root``, by relative path, but for
    those inside a folder named in ``skip`` (an agent's caches)."""
    paths = [p.relative_to(root) for p in sorted(root.rglob("*"))]
    return {str(p): (root / p).read_bytes() if (root / p).is_file() else b"/"
            for p in paths if not set(skip) & set(p.parts)}


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


@dataclass
class AgentRun:
    """One scenario's run: the agent's exit, output, the model, folders and environment."""

    returncode: int
    stderr: str
    model: ChatModel
    home: Path
    project: Path
    env: dict[str, str]
    #: the home (project inside) before install, after it, and after the run
    before: dict[str, bytes]
    installed: dict[str, bytes]
    ran: dict[str, bytes]


def install_and_run(cls: type[RunT], agent: str, scope: str, steps: Sequence[Step],
                    home: Path, setup: Callable[[str], dict[str, str]],
                    argv: list[str], skip: tuple[str, ...]) -> RunT:
    """``home/app``, the project, made; a `ChatModel` of ``steps`` served while
    ``setup(url)`` writes the user's own files and returns the agent's environment, the
    page's install line for ``scope`` runs in the project, then ``argv``, the agent. The
    home's files (`tree`, but for ``skip``) before install, after it and after the
    run."""
    project = home / "app"
    project.mkdir(parents=True, exist_ok=True)
    model = ChatModel(list(steps))
    with model.serving():
        env = setup(model.url)
        before = tree(home, *skip)
        done = subprocess.run(page_line(agent, agent, "install", scope == "user"),
                              cwd=project, env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0 and f"{agent} loads it" in done.stdout, done
        installed = tree(home, *skip)
        proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True,
                              timeout=600, stdin=subprocess.DEVNULL)
    return cls(proc.returncode, proc.stderr, model, home, project, env, before, installed,
               tree(home, *skip))


def agent_env(home: Path, **more: str) -> dict[str, str]:
    """An agent's environment: this Python's ``maxrepeat`` first on ``PATH``, ``home`` as
    ``HOME``, no colours, and ``more``."""
    path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {"PATH": path, "HOME": str(home), "NO_COLOR": "1", "TERM": "dumb", **more}


def trajectory_of(fmt: str, path: Path) -> Trajectory:
    """The one trajectory of the agent's own log ``path`` (format ``fmt``)."""
    [traj] = list(get_reader(fmt).read(Source.from_path(path)))
    assert isinstance(traj, Trajectory), traj
    return traj


def check_cycle(traj: Trajectory, guard: dict[str, Any]) -> None:
    """Grading ``traj`` with the guard's grader finds a cycle of period 2."""
    result = Monitor(MaxRepeatConfig.from_mapping(guard["graders"][0])).feed_all(traj.events)
    assert result.metadata.runs and result.metadata.runs[0].period == 2


def check_warned_first(run: AgentRun, guard: dict[str, Any], scope: str, failing: list[bool],
                       texts: list[str]) -> tuple[int, list[int]]:
    """The ``guard`` of ``scope`` warned first at the call where grading (``failing``, per
    call) first fails (``texts``: what the model read of each call), and the model read
    the warning in the very next request and nothing of it before. Returns that call and
    every call the guard spoke at."""
    assert guard["scope"] == scope, guard
    assert True in failing, failing
    k = failing.index(True)
    spoken = [i for i, t in enumerate(texts) if GUARD in t]
    assert spoken and spoken[0] == k, (spoken, k, texts)
    assert "(warning)" in texts[k], texts[k]
    bodies = [json.dumps(b) for b in run.model.requests]
    assert GUARD in bodies[k + 1] and not any(GUARD in b for b in bodies[:k + 1])
    return k, spoken


def check_grade_fails(log: Path) -> None:
    """``maxrepeat grade LOG --preset live`` fails the session."""
    graded = subprocess.run([str(BIN / "maxrepeat"), "grade", str(log), "--preset", "live",
                             "--output", "json"], capture_output=True, text=True, timeout=60)
    assert graded.returncode == 1 and json.loads(graded.stdout)["results"][0]["passed"] is False


def check_untouched(run: AgentRun, failing: list[bool], texts: list[str],
                    guard: dict[str, Any]) -> None:
    """A clean session (four calls, ``texts`` what the model read of each, ``failing``
    grading per call): it ended well, grading never fails, and the guard never spoke, in
    a result, a request or its journal."""
    assert run.returncode == 0, run.stderr
    assert not any(failing), failing
    assert len(texts) == 4 and not any(GUARD in t for t in texts)
    assert not any(GUARD in json.dumps(b) for b in run.model.requests)
    assert guard["verdicts"] == []


def uninstall(agent: str, scope: str, run: AgentRun, *skip: str) -> dict[str, bytes]:
    """The page's uninstall line for ``scope`` run in the project (it must succeed); the
    home's files after it."""
    sh(page_line(agent, agent, "uninstall", scope == "user"), run.project, run.env)
    return tree(run.home, *skip)
