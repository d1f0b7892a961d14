"""``maxrepeat hook status`` and what ``hook install`` says after writing: which guards are
installed, whether each agent loads its guard (each agent's gates, as measured with its
pinned release: tests/guards/agents/test_e2e_project_install.py puts them to the real
agents), and the verdicts the hook recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.guards.agent_trust import will_load
from maxrepeat.guards.agents import names
from maxrepeat.guards.agents.codex import codex_hook_hash
from maxrepeat.guards.install import install, writer_of
from maxrepeat.guards.status import installed

EXE = Path(sys.executable).parent / "maxrepeat"
GRAMMAR = r"^[^:]+:\d+:\d+: .+ must be .+ \(got .*\)"


def _cli(*args: str, cwd: Path, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(EXE.parent), "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
           **extra}
    return subprocess.run([str(EXE), "hook", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


def _load(agent: str, scope: str, project: Path, home: Path, **env: str) -> Any:
    file = writer_of(agent).path(scope, project, home)
    return will_load(agent, scope, file, project=project, home=home, env=env)


def test_installed_finds_each_guard_with_its_scope_events_and_flags(
        where: tuple[Path, Path]) -> None:
    project, home = where
    install("codex", "maxrepeat hook codex --max 4", "project", project=project, home=home)
    install("copilot-cli", "maxrepeat hook copilot-cli --match name", "user", project=project,
            home=home)
    found, problems = installed(names(), project, home)
    assert problems == []
    assert [(g.agent, g.scope, g.events, g.args) for g in found] == [
        ("codex", "project", ("PreToolUse", "PostToolUse"), ("--max", "4")),
        ("copilot-cli", "user", ("preToolUse", "postToolUse", "postToolUseFailure",
                                 "permissionRequest"), ("--match", "name"))]
    bad = project / ".claude" / "settings.json"
    bad.parent.mkdir()
    bad.write_text('{"hooks": ')
    _, problems = installed(["claude-code"], project, home)
    assert len(problems) == 1 and problems[0].startswith(f"{bad}:1:")


def test_codex_hook_hash_is_the_one_codex_computes() -> None:
    # Codex 0.171.0's app server (`hooks/list`) gave this currentHash for the handler
    # `hook install codex --max 3` wrote, as the first PreToolUse group
    handler = {"type": "command", "command": "maxrepeat hook codex --max 3", "timeout": 30}
    assert codex_hook_hash("PreToolUse", {"hooks": [handler]}, handler) == (
        "sha256:85d3b388f3810a477ace39e40dcd5b15bbe70fd33cf85e2646c372fbb7251ac4")
    assert codex_hook_hash("PreToolUse", {"matcher": "Bash"}, handler) != \
        codex_hook_hash("PreToolUse", {}, handler)


def test_codex_project_needs_project_and_hook_trust(where: tuple[Path, Path]) -> None:
    project, home = where
    install("codex", "maxrepeat hook codex --max 3", "project", project=project, home=home)
    load = _load("codex", "project", project, home)
    assert not load.loads and len(load.problems) == 2
    trust, hook = (str(p) for p in load.problems)
    assert all(__import__("re").match(GRAMMAR, t) for t in (trust, hook))
    assert "trust_level must be" in trust and "codex exec --trust" in trust
    lines = hook.split(":\n", 1)[1]
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f'[projects.{json.dumps(str(project.resolve()))}]\n'
                      f'trust_level = "trusted"\n{lines}\n')
    assert _load("codex", "project", project, home).loads
    config.write_text(config.read_text() + "[features]\nhooks = false\n")
    off = _load("codex", "project", project, home)
    assert [p.path for p in off.problems] == ["features.hooks"]
    assert off.problems[0].line == config.read_text().splitlines().index("hooks = false") + 1


def test_codex_takes_the_repository_trust_for_a_folder_inside_it(
        where: tuple[Path, Path]) -> None:
    # measured with Codex 0.171.0's app server: a trusted git repository's subfolder
    # has its .codex/hooks.json listed (untrusted hooks until reviewed)
    project, home = where
    (project / ".git").mkdir()
    sub = project / "sub"
    sub.mkdir()
    install("codex", "maxrepeat hook codex --max 3", "project", project=sub, home=home)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[projects.{json.dumps(str(project.resolve()))}]\n'
                      'trust_level = "trusted"\n')
    load = _load("codex", "project", sub, home)
    assert [p.path for p in load.problems] == ["hooks.state.<hook>.trusted_hash"]
    assert load.notes == ("runs in codex exec --dangerously-bypass-hook-trust",)
    config.write_text(config.read_text() + f'[projects.{json.dumps(str(sub.resolve()))}]\n'
                      'trust_level = "untrusted"\n')
    assert "trust_level" in load_paths(_load("codex", "project", sub, home))


def load_paths(load: Any) -> str:
    return " ".join(p.path for p in load.problems)


def test_gemini_cli_runs_settings_hooks_only_in_a_trusted_folder(
        where: tuple[Path, Path]) -> None:
    project, home = where
    install("gemini-cli", "maxrepeat hook gemini-cli", "project", project=project, home=home)
    for scope in ("project", "user"):
        assert not _load("gemini-cli", scope, project, home).loads
    assert _load("gemini-cli", "project", project, home,
                 GEMINI_CLI_TRUST_WORKSPACE="true").loads
    rules = home / ".gemini" / "trustedFolders.json"
    rules.parent.mkdir(exist_ok=True)
    rules.write_text(json.dumps({str(project / "x"): "TRUST_PARENT"}))
    assert _load("gemini-cli", "project", project, home).loads
    rules.write_text(json.dumps({str(project.parent): "TRUST_FOLDER",
                                 str(project): "DO_NOT_TRUST"}))
    assert not _load("gemini-cli", "project", project, home).loads
    system = home / "system-settings.json"
    system.write_text('{\n  "hooksConfig": {"enabled": false}\n}\n')
    load = _load("gemini-cli", "project", project, home, GEMINI_CLI_TRUST_WORKSPACE="true",
                 GEMINI_CLI_SYSTEM_SETTINGS_PATH=str(system))
    assert not load.loads and "system settings" in str(load.problems[0])
    assert (load.problems[0].file, load.problems[0].line) == (str(system), 2)


def test_copilot_cli_project_hooks_need_a_trusted_folder_for_prompt_mode(
        where: tuple[Path, Path]) -> None:
    project, home = where
    assert _load("copilot-cli", "user", project, home).loads
    assert not _load("copilot-cli", "project", project, home).loads
    assert _load("copilot-cli", "project", project, home, COPILOT_ALLOW_ALL="true").loads
    config = home / ".copilot" / "config.json"
    config.parent.mkdir()
    # as Copilot CLI 1.0.102 writes it: comment lines, then JSON
    config.write_text("// User settings belong in settings.json.\n"
                      f'{{"trustedFolders": [{json.dumps(str(project))}]}}\n')
    assert _load("copilot-cli", "project", project, home).loads


def test_claude_code_disable_all_hooks_is_located(where: tuple[Path, Path]) -> None:
    project, home = where
    assert _load("claude-code", "project", project, home).loads
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{\n  "model": "x",\n  "disableAllHooks": true\n}\n')
    load = _load("claude-code", "project", project, home)
    assert not load.loads
    assert str(load.problems[0]).startswith(f"{local}:3:3: disableAllHooks must be false")


def test_install_says_whether_the_agent_loads_it(where: tuple[Path, Path]) -> None:
    project, home = where
    done = _cli("install", "codex", "--max", "3", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert "codex will NOT load it yet:" in done.stdout
    assert "codex exec --trust" in done.stdout and "trusted_hash = " in done.stdout
    assert not (home / ".codex" / "config.toml").exists()  # trust is not given for you
    done = _cli("install", "claude-code", "--user", "--max", "3", cwd=project, home=home)
    assert done.returncode == 0 and "claude-code loads it" in done.stdout, done.stdout


def test_status_lists_settings_and_the_verdicts_the_hook_recorded(
        where: tuple[Path, Path]) -> None:
    project, home = where
    assert _cli("install", "claude-code", "--max", "1", "--match", "name", "--preset",
                "seed", "--stop-at", "0", cwd=project, home=home).returncode == 0
    transcript = project / "t.jsonl"
    lines = []
    for i in range(3):  # the same Bash call three times: above max 1 from the second
        use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "make"}}
        lines.append(json.dumps({"type": "assistant", "uuid": f"a{i}", "sessionId": "S",
                                 "parentUuid": None, "isSidechain": False,
                                 "message": {"role": "assistant", "id": f"m{i}",
                                             "content": [use]}}) + "\n")
        transcript.write_text("".join(lines))
        payload = {"session_id": "S", "transcript_path": str(transcript), "cwd": str(project),
                   "hook_event_name": "PostToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "make"}, "tool_use_id": f"t{i}",
                   "tool_response": {"stdout": "x"}}
        env = {"PATH": str(EXE.parent), "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
        call = subprocess.run([str(EXE), "hook", "claude-code", "--preset", "seed", "--max",
                               "1", "--match", "name", "--stop-at", "0"], input=json.dumps(payload),
                              env=env, capture_output=True, text=True, timeout=60)
        assert call.returncode == 0, call.stderr
    done = _cli("status", "--json", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    [guard] = json.loads(done.stdout)["guards"]
    assert (guard["agent"], guard["scope"], guard["loads"]) == ("claude-code", "project", True)
    assert guard["graders"][0]["max"] == 1 and guard["graders"][0]["match"] == "name"
    assert guard["policy"] == {"warn_at": 1, "block_at": 2, "stop_at": 0}
    assert [(v["action"], v["session"]) for v in guard["verdicts"]] == [
        ("block", "S"), ("warn", "S")]
    assert [s["session"] for s in guard["sessions"]] == ["S"]
    text = _cli("status", "claude-code", cwd=project, home=home).stdout
    assert "loads: yes" in text and "BLOCK session S (PostToolUse)" in text
    other = json.loads(_cli("status", "--json", "--session", "T", cwd=project,
                            home=home).stdout)["guards"][0]
    assert other["verdicts"] == [] and other["sessions"] == []
    # another guard's settings: not its verdicts
    assert _cli("install", "claude-code", "--max", "2", "--match", "name", "--preset", "seed",
                cwd=project, home=home).returncode == 0
    [guard] = json.loads(_cli("status", "--json", cwd=project, home=home).stdout)["guards"]
    assert guard["verdicts"] == [] and guard["sessions"] == []


def test_status_reports_a_command_it_cannot_read_in_the_grammar(
        where: tuple[Path, Path]) -> None:
    project, home = where
    install("gemini-cli", "maxrepeat hook gemini-cli --max zero", "project", project=project,
            home=home)
    done = _cli("status", "gemini-cli", "--json", cwd=project, home=home,
                GEMINI_CLI_TRUST_WORKSPACE="true")
    [guard] = json.loads(done.stdout)["guards"]
    file = project / ".gemini" / "settings.json"
    assert guard["problem"].startswith(f"{file}:"), guard["problem"]
    assert "hooks.BeforeTool[].command must be" in guard["problem"]
    assert '(got --max must be an integer >= 1 (got "zero"))' in guard["problem"]
    # Gemini CLI would load it (the folder is trusted) but the hook fails at every call
    assert guard["load_problems"] == [] and not guard["loads"]
    assert guard["graders"] is None
    nothing = _cli("status", "codex", cwd=project, home=home)
    assert nothing.returncode == 0 and "no maxrepeat guard installed" in nothing.stdout
