"""End to end with the real Qwen Code (``@qwen-code/qwen-code@0.24.4``, installed by
scripts/test.sh into .npm-agents/): ``qwen -p --yolo`` against a scripted Chat Completions
model on 127.0.0.1 (`tests/scripted_chat.py`, Qwen Code's ``OPENAI_BASE_URL``), the guard
installed with the lines of docs/integrations/qwen-code.md, in a fresh project folder with
a settings file of the user's own.

Three sessions, run at the same time (one each, shared by the tests):

* **loop**: one failing command again and again, the page's plain (project) install line;
* **cycle**: two commands alternating, the page's ``--user`` line;
* **clean**: different commands, the page's plain line.

From Qwen Code's own chat recording after each run: ``maxrepeat grade`` with the graders
``hook status`` reports fails the loop and the cycle, and the guard's note reached the
model first at exactly the call where grading the log first fails (the next request
carried it); every later repeat was refused before it ran (Qwen Code has no hook answer
that ends a run: the stop is a refusal too, and ``qwen -p`` exits 0 once the model stops);
the hook's verdicts and grading the log agree at every call; the clean session passes and
the guard never spoke. Uninstalling leaves the project and the home as they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor
from maxrepeat.readers import Source, get_reader
from tests.e2e_scenarios import page_line, run_all, the_guard
from tests.project.test_docs_install_lines import install_lines
from tests.scripted_chat import ChatModel, Step

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(os.environ.get("MAXREPEAT_NPM_AGENTS", ROOT / ".npm-agents")) / "node_modules" \
    / ".bin" / "qwen"
EXE = Path(sys.executable).parent / "maxrepeat"
PAGE = "qwen-code"
GUARD = "maxrepeat loop guard"
#: the user's own settings (telemetry and update checks off), kept byte for byte
USER_SETTINGS = ('{\n  "$version": 4,\n'
                 '  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},\n'
                 '  "privacy": {"usageStatisticsEnabled": false},\n'
                 '  "telemetry": {"enabled": false}\n}\n')


def _sh(cmd: str, i: int = 0) -> list[tuple[str, dict[str, Any]]]:
    return [("run_shell_command", {"command": cmd, "description": f"try it ({i})"})]


#: the model rewords each call's description (the live preset ignores it): Qwen Code's
#: own loop detection halts the run at the 5th call identical to the one before
SCRIPTS: dict[str, tuple[str, list[Step]]] = {
    "loop": ("project", [_sh("ls /nonexistent-maxrepeat", i) for i in range(7)]
             + ["gave up"]),
    "cycle": ("user", [_sh(c, i) for i in range(5)
                       for c in ("ls /nonexistent-x", "cat /nonexistent-y")] + ["gave up"]),
    "clean": ("project", [_sh("ls /nonexistent-a"), _sh("echo one"), _sh("echo two"),
                          _sh("ls /nonexistent-a"), "done"]),
}


@dataclass
class Run:
    """One scenario's run: the agent's exit, output, the model, folders and its log."""

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

    @property
    def log(self) -> Path:
        [path] = (self.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
        return path


def _page_line(scope: str) -> list[str]:
    """The page's plain install line, with ``--user`` for the user scope."""
    return page_line(PAGE, "qwen-code", "install", scope == "user")


def _tree(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() if p.is_file() else b"/"
            for root in roots for p in sorted(root.rglob("*")) if ".cache" not in p.parts}


def _env(home: Path, url: str) -> dict[str, str]:
    path = f"{EXE.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {"PATH": path, "HOME": str(home), "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "scripted", "OPENAI_MODEL": "scripted", "NO_COLOR": "1",
            "TERM": "dumb", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}


def _scenario(name: str, base: Path) -> Run:
    scope, steps = SCRIPTS[name]
    home = base / name / "home"
    project = home / "app"
    (home / ".qwen").mkdir(parents=True)
    project.mkdir()
    (home / ".qwen" / "settings.json").write_text(USER_SETTINGS)
    model = ChatModel(list(steps))
    with model.serving():
        env = _env(home, model.url)
        before = _tree(home)
        done = subprocess.run(_page_line(scope), cwd=project, env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0 and "qwen-code loads it" in done.stdout, done
        installed = _tree(home)
        proc = subprocess.run([str(BIN), "-p", "fix the build", "--yolo"], cwd=project,
                              env=env, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
    return Run(proc.returncode, proc.stderr, model, home, project, env, before, installed,
               _tree(home))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    yield from run_all("qwen", list(SCRIPTS), _scenario, tmp_path_factory)


def _trajectory(log: Path) -> Trajectory:
    [traj] = list(get_reader("qwen-code").read(Source.from_path(log)))
    assert isinstance(traj, Trajectory), traj
    return traj


def _status(run: Run) -> dict[str, Any]:
    return the_guard("qwen-code", run.project, run.env)


def _told(run: Run) -> list[str]:
    """Per call, in order, what the model read of it: the logged result and status."""
    texts = []
    for line in run.log.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "tool_result":
            [part] = rec["message"]["parts"]
            texts.append(json.dumps([part["functionResponse"]["response"],
                                     rec["toolCallResult"]["status"]]))
    return texts


def _grade(run: Run, config: MaxRepeatConfig) -> list[bool]:
    """Per call, whether grading the log up to that call fails (the post-hoc verdict)."""
    monitor, out = Monitor(config), []
    for event in _trajectory(run.log).events:
        failed = monitor.feed(event).failed
        if event.type == TOOL_CALL:
            out.append(failed)
    return out


@pytest.mark.parametrize("name", ["loop", "cycle"])
def test_warned_where_grade_first_fails_then_refused(name: str,
                                                     runs: dict[str, Run]) -> None:
    run = runs[name]
    guard = _status(run)
    assert guard["scope"] == SCRIPTS[name][0]
    config = MaxRepeatConfig.from_mapping(guard["graders"][0])
    failing = _grade(run, config)
    assert True in failing, failing
    k = failing.index(True)
    texts = _told(run)
    assert len(texts) == len(failing) == len(SCRIPTS[name][1]) - 1, texts
    spoken = [i for i, t in enumerate(texts) if GUARD in t]
    assert spoken and spoken[0] == k, (spoken, k, texts)
    assert "(warning)" in texts[k] and '"error"]' in texts[k], texts[k]
    # the model read the warning in the very next request, and nothing of it before
    bodies = [json.dumps(b) for b in run.model.requests]
    assert GUARD in bodies[k + 1] and not any(GUARD in b for b in bodies[:k + 1])
    # every later repeat was refused before it ran: its result is the refusal alone
    refused = [i for i, t in enumerate(texts) if "(blocked)" in t or "(stopped)" in t]
    assert refused and all(i > k for i in refused), texts
    assert all(json.loads(texts[i])[0]["error"].startswith(GUARD) for i in refused), texts
    # the journal lists what Qwen Code was told: a warning, then refusals (a stop the
    # policy decides is a refusal too: "(stopped)" in its message)
    told = [v["action"] for v in reversed(guard["verdicts"])]
    assert told == ["warn"] + ["block"] * (len(told) - 1) and len(told) > 1, told
    if name == "loop":  # a repeat: refused from the very next call on
        assert refused == list(range(k + 1, len(texts))), (refused, texts)
        assert len(told) == len(texts) - k and "(stopped)" in texts[k + 2], texts
    else:  # the cycle's next step is refused once it would complete another copy
        assert spoken == [k, *refused], (spoken, refused, told)
    # live = post-hoc: the hook spoke from call k on, only where grading the log fails
    assert all(failing[i] for i in spoken) and not any(failing[:k]), (spoken, failing)
    # no hook answer ends the run: the model was asked after each refusal, qwen exits 0
    assert run.model.served == len(SCRIPTS[name][1]) and run.returncode == 0, run.stderr
    graded = subprocess.run([str(EXE), "grade", str(run.log), "--preset", "live",
                             "--output", "json"], capture_output=True, text=True, timeout=60)
    assert graded.returncode == 1 and json.loads(graded.stdout)["results"][0]["passed"] is False


def test_cycle_is_a_cycle(runs: dict[str, Run]) -> None:
    config = MaxRepeatConfig.from_mapping(_status(runs["cycle"])["graders"][0])
    result = Monitor(config).feed_all(_trajectory(runs["cycle"].log).events)
    assert result.metadata.runs and result.metadata.runs[0].period == 2


def test_clean_session_never_hears_from_the_guard(runs: dict[str, Run]) -> None:
    run = runs["clean"]
    assert run.returncode == 0, run.stderr
    assert not any(_grade(run, MaxRepeatConfig.preset("live")))
    texts = _told(run)
    assert len(texts) == 4 and not any(GUARD in t for t in texts)
    assert not any(GUARD in json.dumps(b) for b in run.model.requests)
    assert _status(run)["verdicts"] == []


def test_uninstall_leaves_the_users_files_as_they_were(runs: dict[str, Run]) -> None:
    """Install changed only the settings file it names; uninstall gives that file back
    byte for byte (the user's own settings for ``--user``; no file for the project)."""
    for name, run in runs.items():
        scope = SCRIPTS[name][0]
        settings = str((run.home if scope == "user" else run.project) / ".qwen"
                       / "settings.json")
        changed = {p for p in run.installed if run.before.get(p) != run.installed[p]}
        assert changed <= {settings, settings + ".maxrepeat.bak",
                           str(run.project / ".qwen")}, changed
        [line] = [w for w in install_lines(PAGE) if "uninstall" in w
                  and ("--user" in w) == (scope == "user")]
        done = subprocess.run(line, cwd=run.project, env=run.env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        after = _tree(run.home)
        for path in run.before:
            assert after.get(path) == run.before[path], (name, path)
        # the user's own file is back; a file install made is gone, though Qwen Code
        # stamped its "$version" in it when it ran
        assert (settings in after) == (settings in run.before), (name, settings)
        assert '"$version"' in run.ran[settings].decode(), name
        assert {p: run.ran[p] for p in after if p != settings and p in run.ran} == \
            {p: after[p] for p in after if p != settings and p in run.ran}, name
