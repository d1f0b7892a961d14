"""``maxrepeat hook install|uninstall claude-code``: merge, back up, remove exactly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.guards.install import install, is_guard_command, uninstall

ROOT = Path(__file__).resolve().parents[2]
CMD = "maxrepeat hook claude-code --max 3"
OTHER: dict[str, Any] = {
    "model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command",
                                                            "command": "fmt"}]}],
              "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]},
}


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maxrepeat", "hook", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env=env)


def test_install_merges_backs_up_and_uninstall_removes_exactly(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(OTHER, indent=4)
    settings.write_text(original)
    done = install("claude-code", CMD, "project", project=tmp_path)
    assert done.changed and done.backup is not None
    assert done.backup.read_text() == original
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == OTHER["permissions"]
    assert merged["hooks"]["Stop"] == OTHER["hooks"]["Stop"]
    assert merged["hooks"]["PostToolUse"][0] == OTHER["hooks"]["PostToolUse"][0]
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        assert merged["hooks"][event][-1] == {
            "matcher": "*", "hooks": [{"type": "command", "command": CMD}]}
    again = install("claude-code", CMD, "project", project=tmp_path)
    assert not again.changed and json.loads(settings.read_text()) == merged
    # A new install replaces the old entries, never duplicates them.
    install("claude-code", CMD + " --match name", "project", project=tmp_path)
    assert len(json.loads(settings.read_text())["hooks"]["PreToolUse"]) == 1
    # ... and keeps the backup of the file as it was before any guard.
    assert done.backup.read_text() == original
    gone = uninstall("claude-code", "project", project=tmp_path)
    # The file as it was, byte for byte (its own indentation too), and no backup left.
    assert gone.changed and settings.read_text() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    assert not uninstall("claude-code", "project", project=tmp_path).changed


def test_uninstall_of_a_file_install_created_deletes_it_and_its_empty_folder(
        tmp_path: Path) -> None:
    done = install("claude-code", CMD, "user", home=tmp_path)
    assert done.path == tmp_path / ".claude" / "settings.json" and done.backup is None
    assert uninstall("claude-code", "user", home=tmp_path).changed
    assert list(tmp_path.iterdir()) == []
    # A folder holding something else stays.
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "notes.txt").write_text("mine")
    install("claude-code", CMD, "user", home=tmp_path)
    uninstall("claude-code", "user", home=tmp_path)
    assert [p.name for p in (tmp_path / ".claude").iterdir()] == ["notes.txt"]


def test_uninstall_keeps_what_the_user_changed_since_install(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(OTHER))
    install("claude-code", CMD, "project", project=tmp_path)
    edited = json.loads(settings.read_text())
    edited["model"] = "sonnet"
    edited["env"] = {"A": "1"}
    settings.write_text(json.dumps(edited))
    assert uninstall("claude-code", "project", project=tmp_path).changed
    assert json.loads(settings.read_text()) == {**OTHER, "model": "sonnet", "env": {"A": "1"}}
    assert not settings.with_name("settings.json.maxrepeat.bak").exists()
    # A file install created, to which the user then added settings of their own: kept.
    home = tmp_path / "home"
    done = install("claude-code", CMD, "user", home=home)
    done.path.write_text(json.dumps({**json.loads(done.path.read_text()), "model": "x"}))
    uninstall("claude-code", "user", home=home)
    assert json.loads(done.path.read_text()) == {"model": "x"}


def test_uninstall_restores_a_value_the_guard_did_not_change_exactly(tmp_path: Path) -> None:
    """``true`` is not ``1``: a value the user changed from one to the other since install
    is theirs, not the backup's."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"flag": 1}')
    install("claude-code", CMD, "project", project=tmp_path)
    settings.write_text(settings.read_text().replace('"flag": 1', '"flag": true'))
    uninstall("claude-code", "project", project=tmp_path)
    assert json.loads(settings.read_text()) == {"flag": True}


_AGENT_FILES = {
    "claude-code": (".claude/settings.json", ".claude/settings.json"),
    "codex": (".codex/hooks.json", ".codex/hooks.json"),
    "gemini-cli": (".gemini/settings.json", ".gemini/settings.json"),
    "copilot-cli": (".github/hooks/maxrepeat.json", ".copilot/settings.json"),
}


@pytest.mark.parametrize("agent", sorted(_AGENT_FILES))
@pytest.mark.parametrize("scope", ["project", "user"])
def test_cli_uninstall_leaves_exactly_the_state_before_install(
        tmp_path: Path, agent: str, scope: str) -> None:
    """For every agent and scope, through the command: into nothing, then into a file of
    the user's own (pretty-printed their way), and back."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME")}
    env["HOME"] = str(home)
    flag = ["--user"] if scope == "user" else []
    root = home if scope == "user" else project
    target = root / _AGENT_FILES[agent][scope == "user"]

    def tree() -> dict[str, bytes]:
        return {str(p.relative_to(tmp_path)): p.read_bytes() if p.is_file() else b"/"
                for p in sorted(tmp_path.rglob("*"))}

    for before in (None, '{\n    "theme": "dark",\n    "hooks": {}\n}'):
        if before is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(before)
        state = tree()
        run = _cli("install", agent, *flag, "--max", "3", "--executable", "maxrepeat",
                   cwd=project, env=env)
        assert run.returncode == 0, run.stderr
        assert target.exists() and tree() != state
        run = _cli("uninstall", agent, *flag, cwd=project, env=env)
        assert run.returncode == 0 and run.stdout.startswith("removed from"), run.stderr
        assert tree() == state


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_settings_that_are_not_a_json_object_are_left_alone(tmp_path: Path, text: str) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text)
    run = _cli("install", "claude-code", "--max", "3", cwd=tmp_path)
    assert run.returncode == 1 and "left unchanged" in run.stderr
    assert re.search(r"settings\.json:\d+:\d+: settings must be", run.stderr)
    assert settings.read_text() == text
    assert not settings.with_name("settings.json.maxrepeat.bak").exists()


def test_cli_install_checks_the_graders_and_writes_the_flags(tmp_path: Path) -> None:
    bad = _cli("install", "claude-code", "--max", "-1", cwd=tmp_path)
    assert bad.returncode == 1 and not (tmp_path / ".claude").exists()
    ok = _cli("install", "claude-code", "--max", "2", "--match", "name-args", "--stop-at",
              "0", "--executable", "maxrepeat", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    # without --config, the live preset, with the flags given replacing its keys
    assert hooks["PostToolUseFailure"][0]["hooks"][0]["command"] == \
        "maxrepeat hook claude-code --preset live --max 2 --match name-args --stop-at 0"
    assert "grader: max 2, max_cycle_period 3, match name-args" in ok.stdout
    assert _cli("uninstall", "claude-code", cwd=tmp_path).returncode == 0
    seed = _cli("install", "claude-code", "--preset", "seed", "--max", "2",
                "--executable", "maxrepeat", cwd=tmp_path)
    assert seed.returncode == 0, seed.stderr
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "maxrepeat hook claude-code --max 2"
    assert "grader: max 2, max_cycle_period 1, match observation" in seed.stdout
    assert _cli("uninstall", "claude-code", cwd=tmp_path).returncode == 0
    for bad_flags in (["--preset", "seed"], ["--preset", "lively"],
                      ["--preset", "live", "--config", "x.yaml"]):
        refused = _cli("install", "claude-code", *bad_flags, cwd=tmp_path)
        assert refused.returncode == 1 and not (tmp_path / ".claude").exists(), bad_flags
    assert "--preset must be one of seed, live (got lively)" in _cli(
        "install", "claude-code", "--preset", "lively", cwd=tmp_path).stderr


def test_install_without_flags_guards_with_the_live_preset(tmp_path: Path) -> None:
    """The install line the docs show first: no flags at all."""
    run = _cli("install", "claude-code", "--executable", "maxrepeat", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    assert {entry["hooks"][0]["command"] for entries in hooks.values() for entry in entries} == {
        "maxrepeat hook claude-code --preset live"}
    assert ("grader: max 3, max_cycle_period 3, match name-args, ignore_arguments "
            '["description", "summary"], normalize ["volatile"]') in run.stdout


def test_docs_snippet_is_what_install_writes(tmp_path: Path) -> None:
    """The settings shown in docs/integrations/claude-code.md are exactly what install writes."""
    page = (ROOT / "docs" / "integrations" / "claude-code.md").read_text()
    snippet = re.search(r"```json\n(.*?)```", page, re.S)
    assert snippet is not None
    run = _cli("install", "claude-code", "--executable", "maxrepeat", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    written = (tmp_path / ".claude" / "settings.json").read_text()
    assert written == snippet.group(1)


def test_guard_commands_are_recognised() -> None:
    assert is_guard_command("/x/bin/maxrepeat hook claude-code --max 3", "claude-code")
    assert is_guard_command("/usr/bin/python3 -m maxrepeat hook claude-code", "claude-code")
    assert not is_guard_command("maxrepeat hook codex --max 3", "claude-code")
    assert not is_guard_command("echo maxrepeat", "claude-code")
    assert not is_guard_command("'unclosed", "claude-code")
