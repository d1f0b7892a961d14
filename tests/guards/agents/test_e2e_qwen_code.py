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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import TOOL_CALL, Trajectory
from maxrepeat.core.monitor import Monitor
from tests import e2e_scenarios as e2e
from tests.scripted_chat import Step

AGENT = "qwen-code"
#: Qwen Code's caches: not the user's files
SKIP = (".cache",)
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


class Run(e2e.AgentRun):
    """One scenario's run, and Qwen Code's chat recording of it."""

    @property
    def log(self) -> Path:
        [path] = (self.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
        return path


def _scenario(name: str, base: Path) -> Run:
    scope, steps = SCRIPTS[name]
    home = base / name / "home"

    def setup(url: str) -> dict[str, str]:
        (home / ".qwen").mkdir()
        (home / ".qwen" / "settings.json").write_text(USER_SETTINGS)
        return e2e.agent_env(home, OPENAI_BASE_URL=url, OPENAI_API_KEY="scripted",
                             OPENAI_MODEL="scripted", QWEN_CODE_SUPPRESS_YOLO_WARNING="1")

    argv = [str(e2e.agent_bin("qwen")), "-p", "fix the build", "--yolo"]
    return e2e.install_and_run(Run, AGENT, scope, steps, home, setup, argv, SKIP)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    yield from e2e.run_all("qwen", list(SCRIPTS), _scenario, tmp_path_factory)


def _trajectory(run: Run) -> Trajectory:
    return e2e.trajectory_of(AGENT, run.log)


def _status(run: Run) -> dict[str, Any]:
    return e2e.the_guard(AGENT, run.project, run.env)


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
    for event in _trajectory(run).events:
        failed = monitor.feed(event).failed
        if event.type == TOOL_CALL:
            out.append(failed)
    return out


@pytest.mark.parametrize("name", ["loop", "cycle"])
def test_warned_where_grade_first_fails_then_refused(name: str,
                                                     runs: dict[str, Run]) -> None:
    run, guard = runs[name], _status(runs[name])
    failing = _grade(run, MaxRepeatConfig.from_mapping(guard["graders"][0]))
    texts = _told(run)
    assert len(texts) == len(failing) == len(SCRIPTS[name][1]) - 1, texts
    k, spoken = e2e.check_warned_first(run, guard, SCRIPTS[name][0], failing, texts)
    assert '"error"]' in texts[k], texts[k]  # the warning rode on the failed call's result
    # every later repeat was refused before it ran: its result is the refusal alone
    refused = [i for i, t in enumerate(texts) if "(blocked)" in t or "(stopped)" in t]
    assert refused and all(i > k for i in refused), texts
    assert all(json.loads(texts[i])[0]["error"].startswith(e2e.GUARD) for i in refused), texts
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
    e2e.check_grade_fails(run.log)


def test_cycle_is_a_cycle(runs: dict[str, Run]) -> None:
    e2e.check_cycle(_trajectory(runs["cycle"]), _status(runs["cycle"]))


def test_clean_session_never_hears_from_the_guard(runs: dict[str, Run]) -> None:
    run = runs["clean"]
    e2e.check_untouched(run, _grade(run, MaxRepeatConfig.preset("live")), _told(run),
                        _status(run))


def test_uninstall_leaves_the_users_files_as_they_were(runs: dict[str, Run]) -> None:
    """Install changed only the settings file it names; uninstall gives that file back
    byte for byte (the user's own settings for ``--user``; no file for the project)."""
    for name, run in runs.items():
        scope = SCRIPTS[name][0]
        # (the home's files by path relative to it: the project is "app")
        settings = ("" if scope == "user" else "app/") + ".qwen/settings.json"
        changed = {p for p in run.installed if run.before.get(p) != run.installed[p]}
        assert changed <= {settings, settings + ".maxrepeat.bak", "app/.qwen"}, changed
        after = e2e.uninstall(AGENT, scope, run, *SKIP)
        for path in run.before:
            assert after.get(path) == run.before[path], (name, path)
        # the user's own file is back; a file install made is gone, though Qwen Code
        # stamped its "$version" in it when it ran
        assert (settings in after) == (settings in run.before), (name, settings)
        assert '"$version"' in run.ran[settings].decode(), name
        assert {p: run.ran[p] for p in after if p != settings and p in run.ran} == \
            {p: after[p] for p in after if p != settings and p in run.ran}, name
