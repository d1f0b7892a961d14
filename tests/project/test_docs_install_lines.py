"""Every ``maxrepeat hook …`` line of an agent page's Install block runs as written.

A user copies these lines into a shell in their project. Each page's lines run here in
that order, verbatim (the ``# …`` comment dropped; ``[--user]`` run without, then with,
the flag; ``graders.yaml`` is the user's file, so ``examples/graders.yaml`` is put in the
folder first), as separate processes of the installed ``maxrepeat`` with a fresh project
folder as the working directory and a fresh home: each must exit 0; an install must say
where it wrote, a file in the project or the home holding the command it printed; and once
the page's uninstall lines ran, the project and the home are as they were before.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGES = ("claude-code", "codex", "gemini-cli", "copilot-cli", "opencode", "pi", "cline",
         "openclaw", "qwen-code")
_BLOCK = re.compile(r"^## Install\n\n```[a-z]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_AGENT_HOMES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME",
                "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PI_CODING_AGENT_DIR",
                "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH", "OPENCLAW_HOME")


def install_lines(page: str) -> list[list[str]]:
    """The page's Install lines as argument lists, ``[--user]`` expanded."""
    text = (ROOT / "docs" / "integrations" / f"{page}.md").read_text(encoding="utf-8")
    block = _BLOCK.search(text)
    assert block is not None, f"{page}.md has no code block under '## Install'"
    lines: list[list[str]] = []
    for raw in block.group(1).splitlines():
        command = raw.split("#", 1)[0].strip()
        if not command.startswith("maxrepeat "):
            continue
        if "[--user]" in command:
            bare = command.replace("[--user]", "").split()
            lines += [bare, [*bare, "--user"]]
        else:
            lines.append(shlex.split(command))
    return lines


def _tree(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() if p.is_file() else b"/"
            for root in roots for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("page", PAGES)
def test_the_install_block_runs_as_written(page: str, tmp_path: Path) -> None:
    lines = install_lines(page)
    assert any(line[:3] == ["maxrepeat", "hook", "install"] and len(line) == 4
               for line in lines), f"{page}: no plain install line (the default)"
    assert any("uninstall" in line for line in lines), page
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    shutil.copy(ROOT / "examples" / "graders.yaml", project / "graders.yaml")
    before = _tree(project, home)
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in _AGENT_HOMES}
    env.update({"HOME": str(home), "PATH": bindir + os.pathsep + env.get("PATH", "")})
    for line in lines:
        done = subprocess.run(line, cwd=project, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, (line, done.stderr)
        if line[2] == "install":
            where, command = done.stdout.splitlines()[:2]
            written = Path(where.split(" in ", 1)[1].split(" (backup", 1)[0])
            assert written.is_relative_to(project) or written.is_relative_to(home), where
            assert command.strip() in written.read_text(encoding="utf-8"), (line, where)
            assert command.split()[:3] == ["maxrepeat", "hook", page], command
    assert _tree(project, home) == before, f"{page}: uninstall left changes"
