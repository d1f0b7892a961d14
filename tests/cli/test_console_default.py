"""What a log shows is what the README shows (issue 29 item 2): the console report by
default, terminal or not; JSONL when asked; colour by ``--color``, ``NO_COLOR`` and
``FORCE_COLOR`` as published; counts in the singular when there is one; a mistyped command
answered with the one meant; the format flags named for what they format."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.cli.color import wants_color

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]
SGR = "\x1b["
GRADER = ["--max", "3", "--match", "name"]


def _looping(tmp_path: Path) -> Path:
    events = [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i),
                                             "arguments": {"command": "make"}}}
              for i in range(5)]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"id": "stuck", "events": events}))
    return path


def _grade(tmp_path: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run([*CLI, "grade", str(_looping(tmp_path)), *GRADER, *args],
                          capture_output=True, text=True, timeout=60,
                          env={**base, **(env or {})})


def test_a_log_gets_the_console_report_not_jsonl(tmp_path: Path) -> None:
    proc = _grade(tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("FAIL   stuck  max-repeat(max=3, match=name)  bash")
    assert "1 trajectory, 1 result: 0 passed, 1 failed, 0 errors" in lines
    assert SGR not in proc.stdout  # not a terminal: no colour


@pytest.mark.parametrize("args", [("-o", "jsonl"), ("--output-format", "jsonl"),
                                  ("--output", "jsonl")])
def test_jsonl_when_asked_under_each_spelling(tmp_path: Path, args: tuple[str, ...]) -> None:
    proc = _grade(tmp_path, *args)
    [row] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert row["trajectory"] == "stuck" and row["passed"] is False


def test_an_output_files_ending_picks_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "report.jsonl"
    proc = _grade(tmp_path, "--output-file", str(out))
    assert proc.stdout == ""
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["trajectory"] == "stuck"


@pytest.mark.parametrize("args", [("-f", "vally"), ("--input-format", "vally"),
                                  ("--format", "vally")])
def test_the_input_format_under_each_spelling(tmp_path: Path, args: tuple[str, ...]) -> None:
    assert _grade(tmp_path, *args).returncode == 1
    bad = _grade(tmp_path, args[0], "nope")
    assert bad.returncode == 2 and "--input-format must be one of auto" in bad.stderr


@pytest.mark.parametrize(("args", "env", "coloured"), [
    ((), {"FORCE_COLOR": "1"}, True),
    ((), {"FORCE_COLOR": ""}, False),  # empty: not set
    ((), {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    ((), {"FORCE_COLOR": "1", "NO_COLOR": ""}, True),  # an empty NO_COLOR is no request
    (("--color", "always"), {"NO_COLOR": "1"}, True),  # the flag overrides the variable
    (("--color", "never"), {"FORCE_COLOR": "1"}, False),
])
def test_colour_in_a_pipe(tmp_path: Path, args: tuple[str, ...], env: dict[str, str],
                          coloured: bool) -> None:
    proc = _grade(tmp_path, *args, env=env)
    assert (SGR in proc.stdout) is coloured, proc.stdout
    assert "FAIL" in proc.stdout


def test_a_report_file_is_plain_text_unless_colour_is_asked_for(tmp_path: Path) -> None:
    """`--output-file` writes an artifact, not a log: `FORCE_COLOR` (set in many CI
    environments for their logs) does not put escapes into it, as ruff's `--output-file`
    does not; `--color always` still does."""
    report = tmp_path / "report.txt"
    proc = _grade(tmp_path, "--output-file", str(report), env={"FORCE_COLOR": "1"})
    assert proc.returncode == 1, proc.stderr
    assert report.read_text().startswith("FAIL   stuck") and SGR not in report.read_text()
    assert _grade(tmp_path, "--output-file", str(report), "--color", "always").returncode == 1
    assert SGR in report.read_text()


def _on_a_terminal(tmp_path: Path, env: dict[str, str]) -> str:
    """The report with standard output a pseudo-terminal."""
    main, child = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    try:
        proc = subprocess.run([*CLI, "grade", str(_looping(tmp_path)), *GRADER],
                              stdout=child, stderr=subprocess.PIPE, timeout=60,
                              env={**base, "TERM": "xterm", **env})
        assert proc.returncode == 1, proc.stderr
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(main)


@pytest.mark.parametrize(("env", "coloured"), [({}, True), ({"NO_COLOR": ""}, True),
                                               ({"NO_COLOR": "1"}, False)])
def test_colour_on_a_terminal(tmp_path: Path, env: dict[str, str], coloured: bool) -> None:
    assert (SGR in _on_a_terminal(tmp_path, env)) is coloured


def test_the_colour_rules() -> None:
    assert wants_color("auto", True, {}) and not wants_color("auto", False, {})
    assert not wants_color("auto", True, {"TERM": "dumb"})
    assert wants_color("auto", False, {"FORCE_COLOR": "true"})
    assert not wants_color("auto", True, {"NO_COLOR": "0"})  # any non-empty value


@pytest.mark.parametrize(("typed", "meant"), [("grad", "grade"), ("lnt", "lint"),
                                              ("formt", "formats")])
def test_a_mistyped_command_is_answered_with_the_one_meant(typed: str, meant: str) -> None:
    proc = subprocess.run([*CLI, typed, "x"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in proc.stderr


def test_an_unknown_command_without_a_close_one() -> None:
    proc = subprocess.run([*CLI, "zzzz"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "No such command 'zzzz'." in proc.stderr
    assert "Did you mean" not in proc.stderr


def test_what_points_at_the_input_format_flag_names_it(tmp_path: Path) -> None:
    """The flag is `--input-format` (`--format` is its older spelling, kept working): the
    error of an input no reader knows, the examples of `maxrepeat formats --help` and each
    format page's opening line teach that name, not the one that reads as either format."""
    unknown = tmp_path / "notes.json"
    unknown.write_text('{"notes": []}')
    proc = subprocess.run([*CLI, "grade", str(unknown), *GRADER], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "(force one with --input-format)" in proc.stdout
    listed = subprocess.run([*CLI, "formats", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert "--input-format codex" in listed.stdout and "--format " not in listed.stdout
    pages = sorted((Path(__file__).parents[2] / "docs" / "formats").glob("*.md"))
    openings = {page.stem: page.read_text().split("\n\n")[1] for page in pages
                if page.stem != "index"}
    assert len(openings) >= 20
    wrong = [name for name, line in openings.items()
             if not line.startswith(f"`--input-format {name}` ")]
    assert not wrong, wrong
