"""An agent is one module: `maxrepeat.guards.agents` holds every agent maxrepeat guards,
and nothing else in the package keeps a list of agents.

Checked here: every descriptor is complete and its pieces work together (its hook
command, its reader, install and uninstall in a fresh folder, ``hook status``); no module
outside the agents' own spells an agent's name in code; and an agent from another
package, declared by a ``maxrepeat.agents`` entry point, gets the same commands with no
edit of maxrepeat.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import maxrepeat
from maxrepeat.guards import agents
from maxrepeat.guards.agents import Agent
from maxrepeat.guards.install import install, uninstall
from maxrepeat.readers import reader_names

PKG = Path(maxrepeat.__file__).parent
#: modules that may name an agent: the agents' own, the readers of their logs, and the
#: Claude Code transcript follower of the hook engine
OWNERS = ("guards/agents/", "readers/", "guards/_claude_code_log.py",
          "guards/claude_code_backlog.py", "guards/claude_code_results.py")


def _code_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_agent_list_outside_the_agents_package() -> None:
    """No module but an agent's own (or its log's reader) spells an agent's name: a new
    agent touches no registry."""
    names = set(agents.names())
    found = []
    for file in sorted(PKG.rglob("*.py")):
        rel = file.relative_to(PKG).as_posix()
        if rel.startswith(OWNERS):
            continue
        for line, value in _code_strings(ast.parse(file.read_text(encoding="utf-8"))):
            if value in names:
                found.append(f"{rel}:{line}: {value!r}")
    assert found == []


@pytest.mark.parametrize("name", agents.names())
def test_descriptor_is_complete(name: str) -> None:
    agent = agents.get(name)
    assert isinstance(agent, Agent) and agent.name == name
    assert agent.title and agent.events and agent.stop_exit
    assert agent.reader in reader_names()
    assert agent.writer.agent == name
    for module in agent.warm:
        __import__(module)


@pytest.mark.parametrize("name", agents.names())
def test_install_uninstall_round_trip(name: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Install then uninstall in a fresh project and home leaves nothing behind."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(var, raising=False)
    for scope in ("project", "user"):
        done = install(name, f"maxrepeat hook {name} --preset live", scope, project=project,
                       home=home)
        assert done.changed and done.path.exists()
        again = install(name, f"maxrepeat hook {name} --preset live", scope, project=project,
                        home=home)
        assert not again.changed
        assert uninstall(name, scope, project=project, home=home).changed
    assert list(project.rglob("*")) == [] and list(home.rglob("*")) == []


_TOY = '''"""A toy agent declared outside maxrepeat: Codex's hook input and log, its own name
and settings file."""
from pathlib import Path

from maxrepeat.guards.agent_writers import GroupWriter
from maxrepeat.guards.agent_trust import Load
from maxrepeat.guards.agents import Agent
from maxrepeat.guards.agents import codex


class ToyWriter(GroupWriter):
    agent = "toy-agent"
    events = codex.EVENTS

    def path(self, scope, project, home):
        return (project if scope == "project" else home) / ".toy" / "hooks.json"

    def group(self, command):
        return {"hooks": [{"type": "command", "command": command}]}


AGENT = Agent(name="toy-agent", title="Toy", reader="codex", events=codex.EVENTS,
              guard=codex.guard, event_of=codex.event_of, writer=ToyWriter(),
              will_load=lambda scope, file, project, home, env: Load(True),
              stop_exit="the toy stops")
'''


def test_an_agent_from_another_package(tmp_path: Path) -> None:
    """A ``maxrepeat.agents`` entry point is an agent: hook command, install, status."""
    site = tmp_path / "site"
    (site / "toy_agent_pkg-1.0.dist-info").mkdir(parents=True)
    (site / "toy_agent_pkg.py").write_text(_TOY)
    (site / "toy_agent_pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-agent-pkg\nVersion: 1.0\n")
    (site / "toy_agent_pkg-1.0.dist-info" / "entry_points.txt").write_text(
        "[maxrepeat.agents]\ntoy-agent = toy_agent_pkg:AGENT\n")
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(tmp_path / "home"),
           "MAXREPEAT_HOOK_RESIDENT": "0", "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "maxrepeat", *args], cwd=project,
                              env=env, input=stdin, capture_output=True, text=True,
                              timeout=120)

    done = run("hook", "install", "toy-agent", "--executable", "maxrepeat")
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".toy" / "hooks.json").read_text())
    assert sorted(settings["hooks"]) == ["PostToolUse", "PreToolUse"]
    status = run("hook", "status", "toy-agent", "--json")
    assert status.returncode == 0, status.stderr
    (guard,) = json.loads(status.stdout)["guards"]
    assert guard["agent"] == "toy-agent" and guard["stop"] == "the toy stops"
    payload = {"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_use_id": "c1", "tool_response": "x"}
    call = run("hook", "toy-agent", "--max", "1", stdin=json.dumps(payload))
    assert call.returncode == 0, call.stderr
    assert run("hook", "uninstall", "toy-agent").returncode == 0
    assert not (project / ".toy").exists()
