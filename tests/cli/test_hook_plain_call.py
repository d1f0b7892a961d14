"""A plain ``maxrepeat hook AGENT`` call is run without click (cli/hookrun.py): every
command line must get the answer click gives it (the same standard output, standard error
and exit code), whether the lean reader takes it or hands it to click."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.cli import hookrun
from maxrepeat.guards.agents import names
from tests.project.test_startup_imports import _hook_session

#: main() as the ``maxrepeat`` script runs it; and main() with the lean reader switched
#: off, so that click reads every command line
_LEAN = "from maxrepeat.cli import main; main()"
_CLICK = ("import maxrepeat.cli.hookrun as h; h.plain_call = lambda args: None; "
          "from maxrepeat.cli import main; main()")


def _run(code: str, tmp: Path, args: list[str], stdin: str) -> tuple[int, str, str]:
    env = {**os.environ, "COPILOT_HOME": str(tmp / "copilot"),
           "XDG_CACHE_HOME": str(tmp / "xdg")}
    proc = subprocess.run([sys.executable, "-c", code, "hook", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp)
    return proc.returncode, proc.stdout, proc.stderr


_CASES = [
    ["--max", "2"],
    ["--max=2", "--match", "name-args", "--max-cycle-period=2"],
    ["--max", "2", "--warn-at", "0", "--block-at", "0", "--stop-at", "1"],
    ["--max", "2", "--stop-at", "007"],
    ["--max", "2", "--tools", "^ls$", "--tools=Bash|bash|exec_command|run_shell_command"],
    ["--max", "2", "--name", "loops", "--cache-dir", "{tmp}/c"],
    ["--config", "{tmp}/graders.yaml"],
    ["-c", "{tmp}/graders.yaml", "--max", "2"],  # both: refused
    ["--max", "two"],
    ["--max", "2", "--match", "nmae"],
    ["--max", "2", "--max", "3"],  # repeated: click's last value
    ["--max", "2", "--warn-at", "-1"],
    ["--max", "2", "--warn-at", "1.5"],
    ["--max", "2", "--cache-dir", "{tmp}/graders.yaml"],  # a file: click refuses it
    ["--max", "2", "--bogus", "1"],
    ["--max", "2", "extra"],
    ["--max"],
    ["--help"],
    [],
]


#: the fast subset compares the command lines for one agent (the reader is the same for
#: every agent; ~13 CPU-seconds each); the others are `slow` (the full suite and CI)
_AGENTS = [pytest.param(agent, marks=() if agent == "claude-code" else pytest.mark.slow)
           for agent in names()]


@pytest.mark.parametrize("agent", _AGENTS)
def test_the_lean_reader_answers_every_command_line_as_click_does(
        tmp_path: Path, agent: str) -> None:
    (tmp_path / "graders.yaml").write_text(
        "graders:\n  - type: max-repeat\n    config:\n      max: 2\n      match: name\n")
    _, payload = _hook_session(agent, tmp_path, 3)
    stdin = json.dumps(payload)
    spoke = 0
    for case in _CASES:
        args = [agent, *(a.replace("{tmp}", str(tmp_path)) for a in case)]
        answers = []
        for code in (_LEAN, _CLICK):
            for state in ("c", "xdg"):  # each run starts without saved state
                shutil.rmtree(tmp_path / state, ignore_errors=True)
            answers.append(_run(code, tmp_path, args, stdin))
        assert answers[0] == answers[1], case
        spoke += "maxrepeat loop guard" in answers[0][1]
    # most command lines graded the loop (Copilot CLI reads no answer after a call; the
    # sessions `_hook_session` writes are those of the first four agents' logs)
    assert spoke >= 6 or agent not in ("claude-code", "codex", "gemini-cli")


_BAD = ["", "not json", "[1]", '{"transcript_path": 3}']
#: every agent with every bad input; the fast subset runs each agent once and each input
#: two or three times (agent i with input i mod 4), the rest are `slow` (the full suite and CI)
_BAD_CASES = [pytest.param(stdin, agent, marks=() if i % len(_BAD) == _BAD.index(stdin)
                           else pytest.mark.slow)
              for i, agent in enumerate(names()) for stdin in _BAD]


@pytest.mark.parametrize(("stdin", "agent"), _BAD_CASES)
def test_bad_input_is_reported_the_same_way(tmp_path: Path, stdin: str, agent: str) -> None:
    args = [agent, "--max", "2", "--cache-dir", str(tmp_path / "c")]
    lean = _run(_LEAN, tmp_path, args, stdin)
    assert lean == _run(_CLICK, tmp_path, args, stdin), agent
    assert lean[0] == 1 and lean[2].startswith("maxrepeat hook: "), lean


def test_the_lean_reader_takes_only_what_it_knows() -> None:
    assert hookrun.plain_call(["claude-code", "--max", "3"]) is not None
    assert hookrun.plain_call(["codex", "-c", "g.yaml", "--cache-dir=/nonexistent/x"])
    for args in (["install", "codex"], ["claude-code", "--max"], ["codex", "--max", "-3"],
                 ["codex", "--max", "3", "--max", "4"], ["gemini-cli", "--warn-at", "١"],
                 ["copilot-cli", "-h"], ["claude-code", "--max", "3", "x"],
                 ["claude-code", "--cache-dir", "/dev/null"], []):
        assert hookrun.plain_call(args) is None, args


def test_the_agents_are_the_hook_commands() -> None:
    from maxrepeat.cli.hook import hook_cmd

    assert set(names()) <= set(hook_cmd.commands)
    assert all(hookrun.is_agent(a) for a in names())
    assert not hookrun.is_agent("install")
