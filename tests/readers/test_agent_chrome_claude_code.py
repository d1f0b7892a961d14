"""Observations without agent chrome, Claude Code: the ``Shell cwd was reset to …`` line
its Bash tool appends is taken off by the ``claude-code`` reader and, identically, by the
live guard's prediction of the transcript's result (readers/_agent_chrome.py). The
strings are Claude Code 2.1.332's own, from a session recorded with the real binary
against tests/scripted_anthropic.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.events import TOOL_RESULT, Trajectory
from maxrepeat.guards.claude_code_results import Learned, predicted_result
from maxrepeat.readers import Source, get_reader
from maxrepeat.readers._agent_chrome import claude_code_result

#: a Bash call that left the project (``cd /tmp && pwd``), as Claude Code 2.1.332 wrote
#: it: the hook input's ``tool_response`` and the transcript's result record
RESET = "\nShell cwd was reset to /tmp/chrome/claude/project"
RESPONSE: dict[str, Any] = {"stdout": "/tmp", "stderr": RESET, "interrupted": False,
                            "isImage": False, "noOutputExpected": False}
RECORD: dict[str, Any] = {"type": "user", "uuid": "u1", "sessionId": "S", "toolUseResult": RESPONSE,
          "message": {"role": "user", "content": [{
              "tool_use_id": "toolu_0000", "type": "tool_result", "is_error": False,
              "content": "/tmp\nShell cwd was reset to /tmp/chrome/claude/project"}]}}
CALL: dict[str, Any] = {"type": "assistant", "uuid": "a1", "sessionId": "S", "message": {
    "id": "m1", "role": "assistant", "content": [{
        "type": "tool_use", "id": "toolu_0000", "name": "Bash",
        "input": {"command": "cd /tmp && pwd", "description": "run it"}}]}}


def _claude_result(records: list[dict[str, Any]], tmp_path: Path) -> Any:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    [traj] = list(get_reader("claude-code").read(Source.from_path(str(path))))
    assert isinstance(traj, Trajectory)
    [result] = [e.data.result for e in traj.events if e.type == TOOL_RESULT]
    return result


def test_claude_code_cwd_reset_line_comes_off_in_reader_and_hook(tmp_path: Path) -> None:
    assert _claude_result([CALL, RECORD], tmp_path) == "/tmp"
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "cd /tmp && pwd"}, "tool_response": RESPONSE}
    assert predicted_result(payload, Learned()) == ("/tmp", True)
    learned = Learned()
    learned.learn(RECORD)  # the pair from the transcript gives the same
    assert predicted_result(payload, learned) == ("/tmp", True)


def test_claude_code_the_command_printing_the_line_keeps_it(tmp_path: Path) -> None:
    """Only a notice that ends the response's stderr is Claude Code's."""
    printed = {**RESPONSE, "stdout": "/tmp" + RESET, "stderr": ""}
    record = {**RECORD, "toolUseResult": printed}
    assert _claude_result([CALL, record], tmp_path) == "/tmp" + RESET
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_response": printed}
    assert predicted_result(payload, Learned()) == ("/tmp" + RESET, True)


@pytest.mark.parametrize(("content", "response"), [
    ("Shell cwd was reset to /w", {"stdout": "", "stderr": "\nShell cwd was reset to /w"}),
    ("out\nShell cwd was reset to /w\nnote", {"stderr": "\nShell cwd was reset to /w"}),
    ("out\nShell cwd was reset to /w", {"stderr": "\nShell cwd was reset to /w\n"}),
    ("out\nShell cwd was reset to /w", {"stderr": "Shell cwd was reset to /v"}),
    ("out\nShell cwd was reset to /w", "Error: Exit code 1\nShell cwd was reset to /w"),
    ("out\nShell cwd was reset to /w", None),
])
def test_claude_code_other_results_stay(content: str, response: Any) -> None:
    assert claude_code_result(content, response) == content


def test_claude_code_several_results_in_one_record_stay(tmp_path: Path) -> None:
    """The response of a record holding two results belongs to neither for sure."""
    second = {**CALL["message"]["content"][0], "id": "toolu_0001"}
    call = {**CALL, "message": {**CALL["message"],
                                "content": [CALL["message"]["content"][0], second]}}
    block = RECORD["message"]["content"][0]
    record = {**RECORD, "message": {"role": "user", "content": [
        block, {**block, "tool_use_id": "toolu_0001"}]}}
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(call) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    [traj] = list(get_reader("claude-code").read(Source.from_path(str(path))))
    assert isinstance(traj, Trajectory)
    assert [e.data.result for e in traj.events if e.type == TOOL_RESULT] \
        == [block["content"]] * 2


def test_claude_code_shell_result_is_rendered_as_the_transcript_holds_it() -> None:
    """Without a learned pair the guard renders a Bash response as Claude Code does."""
    def render(stdout: str, stderr: str) -> Any:
        payload = {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                   "tool_response": {"stdout": stdout, "stderr": stderr}}
        return predicted_result(payload, Learned())[0]

    assert render("hi\nerr", "") == "hi\nerr"
    assert render("\n\n  a\n", "  b \n") == "  a\nb"
    assert render("", "") == "(Bash completed with no output)"
