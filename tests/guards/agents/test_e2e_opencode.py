"""End to end with the real OpenCode (``opencode-ai@1.18.33``, installed by scripts/test.sh
into .npm-agents/): ``opencode run`` against a scripted Chat Completions model on 127.0.0.1
(`tests/scripted_chat.py`, a custom ``@ai-sdk/openai-compatible`` provider), the guard
installed with the lines of docs/integrations/opencode.md, in a fresh project folder
with files of the user's own (a project ``opencode.json``, a plug-in of theirs).

Three sessions, run at the same time (one each, shared by the tests):

* **loop**: one failing command again and again, the page's plain (project) install line;
* **cycle**: two commands alternating, the page's ``--user`` line;
* **reads**: a read of a missing file again and again (the tool throws: OpenCode runs no
  ``tool.execute.after`` for it), the page's plain line;
* **clean**: different commands, the page's plain line.

From OpenCode's own database after each run: ``maxrepeat grade`` with the graders ``hook
status`` reports fails the loop and the cycle, and the guard's note reached the model first
at exactly the call where grading the log first fails (the next request carried it), the
next call was refused before it ran, the one after that was refused and the session
aborted (``opencode run`` exits 1, no further request); the verdicts status lists are
warn, block, stop; the clean session passes and the guard never spoke. Uninstalling leaves
the project and the home as they were, byte for byte.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor
from tests import e2e_scenarios as e2e
from tests.scripted_chat import Step

AGENT = "opencode"
#: OpenCode's database and caches: not the user's files
SKIP = (".local", ".cache")
USER_PLUGIN = "export const Mine = async () => ({})\n"


def _bash(cmd: str) -> list[tuple[str, dict[str, Any]]]:
    return [("bash", {"command": cmd, "description": "try it"})]


SCRIPTS: dict[str, tuple[str, list[Step]]] = {
    "loop": ("project", [_bash("ls /nonexistent-maxrepeat")] * 8 + ["gave up"]),
    "cycle": ("user", [_bash("ls /nonexistent-x"), _bash("cat /nonexistent-y")] * 7
              + ["gave up"]),
    # OpenCode's read tool throws for a missing file: no tool.execute.after for it
    "reads": ("project", [[("read", {"filePath": "missing-notes.txt"})]] * 7 + ["gave up"]),
    "clean": ("project", [_bash("ls /nonexistent-a"), _bash("echo one"), _bash("echo two"),
                          _bash("ls /nonexistent-a"), "done"]),
}


class Run(e2e.AgentRun):
    """One scenario's run, and OpenCode's database of it."""

    @property
    def db(self) -> Path:
        return self.home / ".local" / "share" / "opencode" / "opencode.db"


def _env(home: Path) -> dict[str, str]:
    return e2e.agent_env(
        home, XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".state"), OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        # OpenCode installs its plug-in SDK into each config folder with npm: offline
        npm_config_offline="true")


def _user_files(home: Path, project: Path, url: str) -> None:
    """What the user had before installing the guard: the provider in their config, a
    project config and a plug-in of their own."""
    (home / ".config" / "opencode").mkdir(parents=True)
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": url, "apiKey": "scripted"},
                "models": {"m": {"name": "m", "tool_call": True}}}
    (home / ".config" / "opencode" / "opencode.json").write_text(json.dumps(
        {"provider": {"scripted": provider}, "model": "scripted/m", "autoupdate": False,
         "share": "disabled"}, indent=2) + "\n")
    (project / ".opencode" / "plugins").mkdir(parents=True)
    (project / ".opencode" / "plugins" / "mine.js").write_text(USER_PLUGIN)
    (project / "opencode.json").write_text('{"permission": {"*": "allow"}}\n')


def _scenario(name: str, base: Path) -> Run:
    scope, steps = SCRIPTS[name]
    home = base / name / "home"

    def setup(url: str) -> dict[str, str]:
        _user_files(home, home / "app", url)
        return _env(home)

    return e2e.install_and_run(Run, AGENT, scope, steps, home, setup,
                               [str(e2e.agent_bin(AGENT)), "run", "fix the build"], SKIP)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    yield from e2e.run_all(AGENT, list(SCRIPTS), _scenario, tmp_path_factory)


def _trajectory(run: Run) -> Trajectory:
    return e2e.trajectory_of(AGENT, run.db)


def _status(run: Run) -> dict[str, Any]:
    return e2e.the_guard(AGENT, run.project, run.env)


def _told(run: Run) -> list[str]:
    """Per call, in order, what the model read of it: its stored output or error."""
    with sqlite3.connect(f"file:{run.db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT data FROM part ORDER BY id").fetchall()
    parts = [json.loads(r[0]) for r in rows]
    return [json.dumps(p["state"]) for p in parts if p.get("type") == "tool"]


def _first_failing_call(traj: Trajectory, config: MaxRepeatConfig) -> int | None:
    monitor, calls = Monitor(config), 0
    for event in traj.events:
        calls += event.type == TOOL_CALL
        if monitor.feed(event).failed:
            return calls - 1
    return None


def _grade(run: Run, config: MaxRepeatConfig) -> list[bool]:
    """Per call, whether grading the log up to that call fails (the post-hoc verdict)."""
    traj = _trajectory(run)
    calls = sum(1 for e in traj.events if e.type == TOOL_CALL)
    k = _first_failing_call(traj, config)
    return [k is not None and i >= k for i in range(calls)]


@pytest.mark.parametrize("name", ["loop", "cycle"])
def test_warned_where_grade_first_fails_then_refused_and_stopped(
        name: str, runs: dict[str, Run]) -> None:
    run, guard = runs[name], _status(runs[name])
    failing = _grade(run, MaxRepeatConfig.from_mapping(guard["graders"][0]))
    texts = _told(run)
    k, spoken = e2e.check_warned_first(run, guard, SCRIPTS[name][0], failing, texts)
    # the stopped call: refused, then marked by the abort (the model never reads it)
    assert '"error": "Tool execution aborted"' in texts[-1], texts[-1]
    told = [v["action"] for v in reversed(guard["verdicts"])]
    assert told[0] == "warn" and told[-1] == "stop" and "block" in told, told
    refused = [i for i, t in enumerate(texts) if "(blocked)" in t]
    assert refused and all(k < i < len(texts) - 1 for i in refused), texts
    assert all('"status": "error"' in texts[i] for i in refused), texts
    # the stop refused its call and aborted the session: no request after it
    assert run.model.served == len(texts) and len(texts) < len(SCRIPTS[name][1]) - 1
    assert run.returncode == 1 and "Aborted" in run.stderr, run.stderr
    if name == "loop":  # a repeat: refused at the very next call, stopped at the one after
        assert told == ["warn", "block", "stop"] and len(texts) == k + 3, (told, texts)
    else:  # the cycle: its next step runs, the two after it are refused, then the stop
        assert told == ["warn", "block", "block", "stop"], told
        assert spoken == [k, k + 2, k + 3] and len(texts) == k + 5, (spoken, len(texts))
    # live = post-hoc: the hook spoke from call k on, where grading the log fails
    assert all(failing[i] for i in spoken) and not any(failing[:k])
    e2e.check_grade_fails(run.db)


def test_a_tool_that_throws_is_refused_before_its_next_copy_but_never_warned(
        runs: dict[str, Run]) -> None:
    """A failing call that OpenCode reports by a throw gets no after-call hook: the guard
    cannot warn as it ends (the page says so), and judges it from the database at the next
    call, which it refuses before it runs; then the stop."""
    run = runs["reads"]
    guard = _status(run)
    failing = _grade(run, MaxRepeatConfig.from_mapping(guard["graders"][0]))
    k = failing.index(True)
    texts = _told(run)
    assert all('"status": "error"' in t for t in texts), texts
    spoken = [i for i, t in enumerate(texts) if e2e.GUARD in t]
    assert spoken and spoken[0] == k + 1 and "(blocked)" in texts[k + 1], (spoken, k)
    told = [v["action"] for v in reversed(guard["verdicts"])]
    assert told == ["block", "stop"], told
    assert run.returncode == 1 and len(texts) == k + 3 == run.model.served, texts


def test_cycle_is_a_cycle(runs: dict[str, Run]) -> None:
    e2e.check_cycle(_trajectory(runs["cycle"]), _status(runs["cycle"]))


def test_clean_session_never_hears_from_the_guard(runs: dict[str, Run]) -> None:
    run = runs["clean"]
    e2e.check_untouched(run, _grade(run, MaxRepeatConfig.preset("live")), _told(run),
                        _status(run))


def test_uninstall_leaves_the_users_files_as_they_were(runs: dict[str, Run]) -> None:
    """Install added the guard's file and changed nothing else; uninstall took exactly
    that away (and the folder install made for it), leaving every other file as it was
    before uninstall, byte for byte (OpenCode itself rewrites the user's opencode.json
    when it runs: it adds its "$schema")."""
    for name, run in runs.items():
        scope = SCRIPTS[name][0]
        added = set(run.installed) - set(run.before)
        assert {Path(p).name for p in added} <= {"maxrepeat-guard.js", "plugins"}, added
        assert {p: run.installed[p] for p in run.before} == run.before, name
        after = e2e.uninstall(AGENT, scope, run, *SKIP)
        assert set(run.ran) - set(after) == added, name
        assert {p: run.ran[p] for p in after} == after, name
