"""``maxrepeat hook gemini-cli``: the loop guard as a Gemini CLI hook.

Gemini CLI runs command hooks before (``BeforeTool``) and after (``AfterTool``) each tool
call, with one JSON object on standard input::

    {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp",
     "tool_name", "tool_input",
     "tool_response": {"llmContent", "returnDisplay", "error"?}}   # AfterTool only

``transcript_path`` is the chat log (``~/.gemini/tmp/<project>/chats/session-*.jsonl``,
read with the ``gemini-cli`` reader). Gemini CLI writes a model message's tool calls to
that log only once they have all finished, so when the hook runs the current call is not
in it yet: the guard adds it from the payload (name and arguments are spelled as the log
will spell them; the result is ``llmContent``, or ``error`` when the call failed, with
the process id lines of a shell result taken off as the reader takes them off the log's;
the reader also drops the ``<hook_context>`` Gemini CLI appends there after this hook).

What the guard prints (exit code 0, one JSON object, nothing when there is nothing to say):

* ``AfterTool`` warning: ``{"hookSpecificOutput": {"hookEventName": "AfterTool",
  "additionalContext": MESSAGE}}`` (appended to the tool result the model reads); after a
  failed call, whose error Gemini CLI sends without additional context,
  ``{"decision": "deny", "reason": ERROR + CONTEXT}`` (the error's text, then the warning
  as Gemini CLI wraps a hook's additional context: ``\n\n<hook_context>MESSAGE
  </hook_context>`` with ``<`` and ``>`` escaped, which the reader drops from the logged
  result, so that grading the log sees the error alone, as the guard did);
* ``AfterTool`` block: ``{"decision": "deny", "reason": MESSAGE}`` (the reason replaces
  the result the model reads);
* stop (either event): ``{"continue": false, "stopReason": MESSAGE}`` (the agent loop ends);
* ``BeforeTool`` (``name`` / ``name-args`` modes) when the call would extend a loop to a
  block: ``{"decision": "deny", "reason": MESSAGE}`` (the call does not run; the model
  reads the reason as the tool error).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..core.config import MaxRepeatConfig
from ..readers._agent_chrome import gemini_cli_result
from .agentlog import judged
from .hookcall import HookCall, HookOutput, hook_event, hook_output, payload_str, require
from .policy import Action, Decision, Policy

__all__ = ["hook_call", "render", "guard", "EVENTS"]

#: The hook events the guard handles (and `maxrepeat hook install gemini-cli` registers).
EVENTS = ("BeforeTool", "AfterTool")


def _result(response: Any) -> tuple[Any, bool]:
    if not isinstance(response, dict):
        return response, True
    error = response.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        return message if message is not None else error, False
    return response.get("llmContent"), True


def hook_call(payload: Mapping[str, Any]) -> HookCall:
    """The hook input as the guard's `HookCall`."""
    event = hook_event(payload, EVENTS)
    data = dict(payload)
    name = require(payload_str(data, "tool_name"), "tool_name")
    result, ok = _result(payload.get("tool_response"))
    return HookCall(
        phase="pre" if event == "BeforeTool" else "post",
        session=payload_str(data, "session_id"),
        log=payload_str(data, "transcript_path"),
        reader="gemini-cli",
        placement="absent",
        name=name,
        arguments=payload.get("tool_input"),
        result=gemini_cli_result(name, result),
        ok=ok,
    )


def render(call: HookCall, decision: Decision) -> HookOutput:
    """Gemini CLI's hook output for a decision (see the module docstring)."""

    def write(msg: str) -> dict[str, Any]:
        if decision.action is Action.STOP:
            return {"continue": False, "stopReason": msg}
        if call.phase == "pre" or decision.action is Action.BLOCK:
            return {"decision": "deny", "reason": msg}
        if not call.ok:
            # Gemini CLI drops additionalContext from a failed call's response (it sends
            # the error alone): the warning goes in a reason that keeps the error's text,
            # the warning wrapped as Gemini CLI wraps additional context (it is logged as
            # the call's result: the reader drops the wrapper as after a successful call)
            error = call.result if isinstance(call.result, str) else json.dumps(call.result)
            context = msg.replace("<", "&lt;").replace(">", "&gt;")
            return {"decision": "deny",
                    "reason": f"{error}\n\n<hook_context>{context}</hook_context>"}
        return {"hookSpecificOutput": {"hookEventName": "AfterTool",
                                       "additionalContext": msg}}

    return hook_output(decision, write)


def guard(payload: Mapping[str, Any], configs: Sequence[MaxRepeatConfig], *,
          policy: Policy | None = None, cache_dir: Path | None = None
          ) -> tuple[HookOutput, Decision]:
    """Judge one Gemini CLI hook call: what to print, and the decision behind it."""
    call = hook_call(payload)
    return judged(call, configs, partial(render, call), policy=policy, cache_dir=cache_dir)
