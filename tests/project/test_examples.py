"""The example configs watch the tools each agent really calls: examples/claude-code.yaml
(`Bash`), examples/codex.yaml (Codex's shell tools) and examples/openhands.yaml
(`execute_bash`, `terminal`), graded through the command line on the agent's fixtures,
on a run of the real Codex CLI, and (marked `corpus`) on real Claude Code and OpenHands
transcripts beside the repository."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import maxrepeat
from maxrepeat.core.events import Trajectory
from tests.conftest import CORPUS, EXAMPLES, FIXTURES, ROOT
from tests.readers.test_reader_codex_exec import CODEX, codex_exec, model_server

__all__ = ["model_server"]  # the scripted Responses server, a fixture used below

#: agent -> (its example config, its shell grader, the shell tools it calls, fixture files)
AGENTS = {
    "claude-code": ("claude-code.yaml", "bash-same-output", {"Bash"},
                    ["claude-code/session.jsonl"]),
    "codex": ("codex.yaml", "shell-same-command",
              {"shell", "shell_command", "exec_command", "local_shell", "command_execution"},
              ["codex/rollout.jsonl", "codex-exec/exec.jsonl"]),
    "openhands": ("openhands.yaml", "bash-same-output", {"execute_bash", "terminal"},
                  ["openhands/output.jsonl", "openhands/sdk_events.json",
                   "openhands/events.json"]),
}
#: real transcripts of each agent in the corpus (Codex has only sanitized schema fixtures)
CORPUS_FOLDERS = {
    "claude-code": ["claude-code"],
    "codex": ["_synthetic_schema_fixtures/codex"],
    "openhands": ["openhands"],
}


def _grade(config: str, paths: list[Path]) -> tuple[list[dict[str, Any]], int]:
    """`maxrepeat grade PATHS --config examples/CONFIG -o jsonl`, as a separate process."""
    run = subprocess.run(
        [sys.executable, "-c", "from maxrepeat.cli import main; main()", "grade",
         *map(str, paths), "--config", str(EXAMPLES / config), "-o", "jsonl", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode in (0, 1), run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()], run.returncode


def _shell_calls(paths: list[Path], tools: set[str]) -> Counter[str]:
    """How many calls of the agent's shell tools each run holds, as the reader sees them."""
    out: Counter[str] = Counter()
    for path in paths:
        for t in maxrepeat.read_trajectories(path):
            assert isinstance(t, Trajectory)
            out[t.label] += sum(1 for e in t.events
                                if e.type == "tool_call" and e.data.tool_name in tools)
    return out


def _check_watches_the_shell(agent: str, paths: list[Path]) -> list[dict[str, Any]]:
    config, grader, tools, _ = AGENTS[agent]
    rows, _ = _grade(config, paths)
    assert rows and all(r["status"] == "ok" for r in rows), rows
    expected = _shell_calls(paths, tools)
    watched = {r["trajectory"]: r["metadata"]["watchedCalls"]
               for r in rows if r["name"] == grader}
    assert watched == dict(expected)
    assert sum(expected.values()) > 0, "the files hold shell calls for the grader to watch"
    return rows


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_example_config_watches_the_agents_shell_tool(agent: str) -> None:
    """On the agent's fixtures, the config's shell grader watches exactly the calls of the
    agent's shell tools (none is missed, nothing else is counted)."""
    _check_watches_the_shell(agent, [FIXTURES / f for f in AGENTS[agent][3]])


def test_claude_code_config_catches_the_loop_generic_one_misses() -> None:
    """A Claude Code session that reruns a failing `npm test` four times fails the
    Claude Code config; the generic config's `^bash$` watches nothing in it."""
    session = FIXTURES / "claude-code" / "session.jsonl"
    rows, code = _grade("claude-code.yaml", [session])
    bash = next(r for r in rows if r["name"] == "bash-same-output")
    assert code == 1 and not bash["passed"]
    assert bash["metadata"]["occurrences"] == 4
    assert bash["metadata"]["patternTools"] == ["Bash"]
    generic, _ = _grade("graders.yaml", [session])
    assert {r["name"]: r["metadata"]["watchedCalls"] for r in generic
            if r["name"] == "bash-cycles"} == {"bash-cycles": 0}


def test_every_example_config_is_clean() -> None:
    """`maxrepeat lint` accepts every config in examples/."""
    configs = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    run = subprocess.run([sys.executable, "-c", "from maxrepeat.cli import main; main()",
                          "lint", *configs], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.corpus
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_example_config_on_real_transcripts(agent: str) -> None:
    """On the corpus transcripts of the agent, the shell grader watches every shell call
    and the configs grade every run without an error."""
    paths = [p for folder in CORPUS_FOLDERS[agent]
             for p in sorted((CORPUS / folder).iterdir()) if p.is_file()]
    assert paths, f"no {agent} transcripts in {CORPUS}"
    _check_watches_the_shell(agent, paths)


@pytest.mark.skipif(not CODEX.exists(), reason="scripts/test.sh installs @openai/codex")
def test_codex_config_on_a_real_codex_run(tmp_path: Path, model_server: str) -> None:
    """The real Codex CLI, scripted to run `echo hi` four times, writes a rollout and an
    `exec --json` stream; examples/codex.yaml fails both on the same command, compared by
    its arguments."""
    stream, rollout = codex_exec(tmp_path, model_server)
    for path in (rollout, stream):
        rows, code = _grade("codex.yaml", [path])
        shell = next(r for r in rows if r["name"] == "shell-same-command")
        assert code == 1 and not shell["passed"], shell
        assert shell["metadata"]["occurrences"] == 4
        assert shell["metadata"]["watchedCalls"] == 6
