"""``maxrepeat hook codex``: the loop guard as an OpenAI Codex CLI hook.

Codex runs a command hook before (``PreToolUse``) and after (``PostToolUse``) each tool
call, with one JSON object on standard input::

    {"session_id", "turn_id", "transcript_path", "cwd", "hook_event_name", "model",
     "permission_mode", "tool_name", "tool_input", "tool_use_id",
     "tool_response"}                       # PostToolUse only

``transcript_path`` is the session's rollout file (``~/.codex/sessions/.../rollout-*.jsonl``,
read with the ``codex`` reader). When the hook runs, Codex has already written the call
(``function_call`` with ``call_id`` = ``tool_use_id``) but not its output: the guard takes
the call from the log (its name and arguments as the log spells them: ``exec_command``
with ``{"cmd": ...}``, where the payload says ``Bash`` with ``{"command": ...}``) and the
result from ``tool_response``. For a command, ``tool_response`` is its output alone,
while the rollout will record its exit code too: the guard adds the exit code Codex has
already written in the rollout (`.codex_results`), so the result is the one ``maxrepeat
grade`` of the finished rollout sees. A command still running after its first wait
(its output says ``Process running with session ID N``) gets its ``PostToolUse`` when a
``write_stdin`` call polling it sees it end, with the command's ``tool_use_id`` and the
poll's output: the guard judges that poll, the call whose output the rollout will show.

What the guard prints (exit code 0, one JSON object on standard output, nothing when
there is nothing to say):

* ``PostToolUse`` warning: ``{"hookSpecificOutput": {"hookEventName": "PostToolUse",
  "additionalContext": MESSAGE}}`` (Codex adds a developer message the model reads);
* ``PostToolUse`` block: ``{"decision": "block", "reason": MESSAGE}`` (Codex gives the
  model the reason in place of the call's output);
* ``PostToolUse`` stop: ``{"continue": false, "stopReason": MESSAGE, "reason": MESSAGE}``;
* ``PreToolUse`` (``name`` / ``name-args`` modes) when the call would extend a loop to a
  block or a stop: ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": MESSAGE}}``: the call does
  not run and the model reads the reason as its output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..core.config import MaxRepeatConfig
from ..readers.codex import exec_output
from .agentlog import judged
from .codex_results import WAIT, command_result
from .hookcall import HookCall, HookOutput, hook_event, hook_output, payload_str, require
from .policy import Action, Decision, Policy, loop_message

__all__ = ["hook_call", "render", "guard", "EVENTS"]

#: The hook events the guard handles (and `maxrepeat hook install codex` registers).
EVENTS = ("PreToolUse", "PostToolUse")


def hook_call(payload: Mapping[str, Any], *, wait: float = WAIT) -> HookCall:
    """The hook input as the guard's `HookCall` (`TrajectoryFormatError` when a field
    the guard needs is missing). After a command, its result is completed from the
    rollout (`.codex_results`, waiting at most ``wait`` seconds for it)."""
    event = hook_event(payload, EVENTS)
    data = dict(payload)
    name = require(payload_str(data, "tool_name"), "tool_name")
    phase = "pre" if event == "PreToolUse" else "post"
    log = payload_str(data, "transcript_path")
    call_id = payload_str(data, "tool_use_id")
    response = payload.get("tool_response")
    ok = True
    if phase == "post" and isinstance(response, str):
        found = command_result(log, call_id, wait)
        if found is not None:
            # a command that outlived its first wait reports its end through the
            # write_stdin call that polled it: that call is the step the result ends
            call_id, code = found
            response, ok = exec_output(code, response), code == 0
    return HookCall(
        phase=phase,
        session=payload_str(data, "session_id"),
        log=log,
        reader="codex",
        # without a rollout (transcript_path null: an ephemeral session) the call is
        # graded on its own, as the payload names it
        placement="id",
        name=name,
        arguments=payload.get("tool_input"),
        call_id=call_id,
        result=response,
        ok=ok,
    )


def render(call: HookCall, decision: Decision) -> HookOutput:
    """Codex's hook output for a decision (see the module docstring)."""

    def write(msg: str) -> dict[str, Any]:
        if call.phase == "pre":
            if decision.action is Action.STOP:
                # Codex cannot stop from PreToolUse (continue: false fails the hook
                # there): the call is refused, and the text says so rather than "stopping"
                msg = loop_message(Action.BLOCK, decision.loops, refused=True)
            return {"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": msg}}
        if decision.action is Action.WARN:
            return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                           "additionalContext": msg}}
        if decision.action is Action.BLOCK:
            return {"decision": "block", "reason": msg}
        return {"continue": False, "stopReason": msg, "reason": msg}

    return hook_output(decision, write)


def guard(payload: Mapping[str, Any], configs: Sequence[MaxRepeatConfig], *,
          policy: Policy | None = None, cache_dir: Path | None = None
          ) -> tuple[HookOutput, Decision]:
    """Judge one Codex hook call: what to print, and the decision behind it."""
    call = hook_call(payload)
    return judged(call, configs, partial(render, call), policy=policy, cache_dir=cache_dir)
