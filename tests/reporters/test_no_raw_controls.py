"""No raw control character from an input reaches the terminal (issue 18, finding 13):
file names, zip member names and unknown key names are escaped on standard error in every
output mode; lint lines escape key names; reports carry no raw C0/C1/bidi controls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
HOSTILE = "\x1b[2J\x1b]8;;x\x07\r\u202e\x85"


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F
            or c in "\u202e\u2028\u2029"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, cwd=cwd,
                          encoding="utf-8", errors="replace")


@pytest.mark.parametrize("output", ["jsonl", "json", "junit", "markdown", "console", "html"])
def test_hostile_file_names_and_ids_are_escaped_everywhere(tmp_path: Path, output: str) -> None:
    bad = tmp_path / f"run{HOSTILE}.json"
    bad.write_text('{"events": [}', encoding="utf-8")
    events = [{"type": "tool_call", "data": {"toolName": f"t{HOSTILE}", "toolCallId": str(i)}}
              for i in range(3)]
    good = tmp_path / "ok.json"
    good.write_text(json.dumps({"id": f"id{HOSTILE}", "events": events}), encoding="utf-8")
    proc = run("grade", bad.name, good.name, "--max", "1", "-o", output, cwd=tmp_path)
    assert proc.returncode == 2
    assert "not valid JSON" in proc.stderr + proc.stdout
    assert raw_controls(proc.stderr) == []
    if output != "html":  # the page escapes in its own way (tested with the HTML report)
        assert raw_controls(proc.stdout) == []


def test_lint_escapes_unknown_key_names(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text(
        'graders:\n  - type: max-repeat\n    config:\n      max: 2\n'
        '      "ma\\e[2Jx\\a\\u202e\\r": 3\n', encoding="utf-8")
    proc = run("lint", "g.yaml", cwd=tmp_path)
    assert proc.returncode == 1 and "must be one of the keys" in proc.stdout
    assert raw_controls(proc.stdout) == [] and raw_controls(proc.stderr) == []
    assert "\\u001b[2J" in proc.stdout
