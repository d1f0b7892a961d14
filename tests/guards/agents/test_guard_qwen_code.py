"""The Qwen Code guard's translation of its hook input and its answers, on hook inputs
the real Qwen Code 0.24.4 sent (captured with a hook that saved its standard input), and
on the decisions the policy makes (the binary itself: tests/guards/agents/test_e2e_qwen_code.py)."""

from __future__ import annotations

from typing import Any

import pytest

from maxrepeat.core.errors import TrajectoryFormatError
from maxrepeat.guards.agents.qwen_code import hook_call, render
from maxrepeat.guards.policy import Action, Decision

LOG = "/tmp/qx/home/.qwen/projects/-tmp-qx-proj/chats/dc5b0690.jsonl"
SHELL = ("Command: ls /nonexistent_qx\nDirectory: (root)\nOutput: ls: cannot access "
         "'/nonexistent_qx': No such file or directory\nError: (none)\nExit Code: 2\n"
         "Signal: (none)\nProcess Group PGID: (none)")
BASE: dict[str, Any] = {
    "session_id": "dc5b0690", "transcript_path": LOG, "cwd": "/tmp/qx/proj",
    "timestamp": "2026-12-02T00:14:12.127Z", "permission_mode": "yolo",
    "prompt_id": "dc5b0690########0", "tool_name": "run_shell_command",
    "tool_input": {"command": "ls /nonexistent_qx", "description": "list"},
    "tool_use_id": "toolu_1796170452094_p4xs738xl", "tool_call_id": "call_0_0"}
PRE = {**BASE, "hook_event_name": "PreToolUse"}
FAILED = {**BASE, "hook_event_name": "PostToolUseFailure", "error": SHELL,
          "is_interrupt": False, "duration_ms": 181}
DONE = {**BASE, "hook_event_name": "PostToolUse", "duration_ms": 178,
        "tool_response": {"llmContent": SHELL.replace("Exit Code: 2", "Exit Code: 0"),
                          "returnDisplay": "hi"}}


def test_the_call_is_found_by_the_models_call_id_and_the_result_taken_off_chrome() -> None:
    pre, failed, done = hook_call(PRE), hook_call(FAILED), hook_call(DONE)
    assert (pre.phase, pre.placement, pre.call_id, pre.reader) == \
        ("pre", "id", "call_0_0", "qwen-code")
    assert pre.log == LOG and pre.arguments == BASE["tool_input"]
    assert failed.phase == "post" and not failed.ok
    assert failed.result == SHELL.removesuffix("\nProcess Group PGID: (none)")
    assert done.ok and str(done.result).endswith("Exit Code: 0\nSignal: (none)")
    with pytest.raises(TrajectoryFormatError):
        hook_call({**PRE, "hook_event_name": "Stop"})


@pytest.mark.parametrize(("payload", "action", "expected"), [
    (PRE, Action.BLOCK, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "M"}}),
    (PRE, Action.STOP, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "M"}}),
    (DONE, Action.WARN, {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                "additionalContext": "M"}}),
    (FAILED, Action.WARN, {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                                                  "additionalContext": "M"}}),
    (DONE, Action.BLOCK, {"continue": False, "stopReason": "M"}),
    (DONE, Action.STOP, {"continue": False, "stopReason": "M"}),
    # PostToolUseFailure takes context only: the reason is added to the error
    (FAILED, Action.STOP, {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                                                  "additionalContext": "M"}}),
])
def test_each_rung_is_answered_as_qwen_code_reads_it(payload: dict[str, Any], action: Action,
                                                      expected: dict[str, Any]) -> None:
    out = render(hook_call(payload), Decision(action, "M", ()))
    assert out.stdout == expected and out.exit_code == 0
    assert render(hook_call(payload), Decision(Action.NONE, None, ())).stdout is None
