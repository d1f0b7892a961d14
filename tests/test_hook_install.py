"""``maxrepeat hook install|uninstall claude-code``: merge, back up, remove exactly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.guards.install import install, is_guard_command, uninstall

ROOT = Path(__file__).resolve().parent.parent
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
    gone = uninstall("claude-code", "project", project=tmp_path)
    assert gone.changed and json.loads(settings.read_text()) == OTHER
    assert not uninstall("claude-code", "project", project=tmp_path).changed


def test_install_into_a_missing_file_and_uninstall_leaves_an_empty_object(
        tmp_path: Path) -> None:
    done = install("claude-code", CMD, "user", home=tmp_path)
    assert done.path == tmp_path / ".claude" / "settings.json" and done.backup is None
    uninstall("claude-code", "user", home=tmp_path)
    assert json.loads(done.path.read_text()) == {}


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
    assert hooks["PostToolUseFailure"][0]["hooks"][0]["command"] == \
        "maxrepeat hook claude-code --max 2 --match name-args --stop-at 0"
    assert _cli("uninstall", "claude-code", cwd=tmp_path).returncode == 0


def test_docs_snippet_is_what_install_writes(tmp_path: Path) -> None:
    """The settings shown in docs/integrations/claude-code.md are exactly what install writes."""
    page = (ROOT / "docs" / "integrations" / "claude-code.md").read_text()
    snippet = re.search(r"```json\n(.*?)```", page, re.S)
    assert snippet is not None
    run = _cli("install", "claude-code", "--max", "3", "--executable", "maxrepeat",
               cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    written = (tmp_path / ".claude" / "settings.json").read_text()
    assert written == snippet.group(1)


def test_guard_commands_are_recognised() -> None:
    assert is_guard_command("/x/bin/maxrepeat hook claude-code --max 3", "claude-code")
    assert is_guard_command("/usr/bin/python3 -m maxrepeat hook claude-code", "claude-code")
    assert not is_guard_command("maxrepeat hook codex --max 3", "claude-code")
    assert not is_guard_command("echo maxrepeat", "claude-code")
    assert not is_guard_command("'unclosed", "claude-code")
