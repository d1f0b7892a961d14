"""``maxrepeat hook copilot-cli``: the loop guard as a GitHub Copilot CLI hook.

Copilot CLI runs command hooks (``~/.copilot/hooks/*.json``, ``.github/hooks/*.json``)
with one camelCase JSON object on standard input, which names neither the event nor the
session log; the guard tells the event by the object's shape::

    preToolUse          {"sessionId", "timestamp", "cwd", "toolName", "toolArgs"}
    postToolUse         {... "toolArgs", "toolResult": {"resultType", "textResultForLlm"}}
    postToolUseFailure  {... "toolArgs", "error"}
    permissionRequest   {"hookName": "permissionRequest", "sessionId", "toolName",
                         "toolInput", ...}

The session log is ``$COPILOT_HOME/session-state/<sessionId>/events.jsonl`` (``COPILOT_HOME``
defaults to ``~/.copilot``), read with the ``copilot-cli`` reader. When the hook runs the
call is already in it (the assistant message's tool request) without its result, and the
payload names no call id: the current call is the latest unanswered call of that tool
name and arguments; its result comes from the payload (``textResultForLlm``, with the
shell id taken out of its closing line as the reader takes it out of the log's).

What the guard prints (exit code 0):

* after a call (``postToolUse``, ``postToolUseFailure``), warning, block or stop:
  ``{"additionalContext": MESSAGE}`` (Copilot appends it to the tool result the model
  reads; a command hook cannot replace or block a finished call);
* ``preToolUse`` (``name`` / ``name-args`` modes) when the call would extend a loop to a
  block: ``{"permissionDecision": "deny", "permissionDecisionReason": MESSAGE}`` (the
  call does not run; the model reads the reason as its result);
* ``permissionRequest`` when the call would extend a loop to a stop:
  ``{"behavior": "deny", "message": MESSAGE, "interrupt": true}``: the agent stops. At
  the stop level ``preToolUse`` lets the call through to this event, which Copilot fires
  next (for every tool that needs a permission: shell, writes, MCP; not for reads), and
  keeps its decision for it: ``permissionRequest`` names the call with fewer arguments,
  and the log may not show it yet.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..core.config import MaxRepeatConfig
from ..core.errors import TrajectoryFormatError
from ..readers._agent_chrome import copilot_cli_result
from .agentlog import judged
from .hookcall import UNKNOWN, HookCall, HookOutput, hook_output, payload_str, require
from .policy import Action, Decision, Policy

__all__ = ["hook_call", "render", "guard", "EVENTS", "event_of", "session_log"]

#: The hook events the guard handles (and `maxrepeat hook install copilot-cli` registers).
EVENTS = ("preToolUse", "postToolUse", "postToolUseFailure", "permissionRequest")


def event_of(payload: Mapping[str, Any]) -> str:
    """Which of `EVENTS` a payload belongs to (by its shape)."""
    if payload.get("hookName") == "permissionRequest":
        return "permissionRequest"
    if "toolResult" in payload:
        return "postToolUse"
    if "error" in payload:
        return "postToolUseFailure"
    if "toolArgs" in payload:
        return "preToolUse"
    raise TrajectoryFormatError(
        "<hook input>", "must be a Copilot CLI preToolUse, postToolUse, postToolUseFailure "
        "or permissionRequest hook input (camelCase: toolName, toolArgs, ...)")


def session_log(session: str, environ: Mapping[str, str] | None = None) -> str:
    """The events log of a session: ``$COPILOT_HOME/session-state/<id>/events.jsonl``."""
    env = os.environ if environ is None else environ
    home = env.get("COPILOT_HOME") or os.path.join(Path.home(), ".copilot")
    return os.path.join(home, "session-state", session, "events.jsonl")


def hook_call(payload: Mapping[str, Any],
              environ: Mapping[str, str] | None = None) -> HookCall:
    """The hook input as the guard's `HookCall`."""
    event = event_of(payload)
    data = dict(payload)
    session = require(payload_str(data, "sessionId"), "sessionId")
    if "/" in session or "\\" in session or session in (".", ".."):
        raise TrajectoryFormatError("<hook input>", f"sessionId must be an id (got {session!r})")
    result: Any = None
    ok = True
    if event == "postToolUse":
        res = payload.get("toolResult")
        res = res if isinstance(res, dict) else {}
        result = copilot_cli_result(res.get("textResultForLlm"))
        ok = res.get("resultType", "success") == "success"
    elif event == "postToolUseFailure":
        result, ok = copilot_cli_result(payload.get("error")), False
    return HookCall(
        phase="post" if event.startswith("post") else "pre",
        session=session,
        log=session_log(session, environ),
        reader="copilot-cli",
        placement="unanswered",
        name=require(payload_str(data, "toolName"), "toolName"),
        # permissionRequest's toolInput is a reduced copy of the arguments
        arguments=UNKNOWN if event == "permissionRequest" else payload.get("toolArgs"),
        result=result,
        ok=ok,
        stop={"preToolUse": "hold", "permissionRequest": "take"}.get(event, ""),
    )


def render(event: str, decision: Decision) -> HookOutput:
    """Copilot CLI's hook output for a decision at ``event`` (see the module docstring)."""

    def write(msg: str) -> dict[str, Any] | None:
        if event == "permissionRequest":
            if decision.action is Action.STOP:
                return {"behavior": "deny", "message": msg, "interrupt": True}
            return None
        if event == "preToolUse":
            if decision.action is Action.BLOCK:
                return {"permissionDecision": "deny", "permissionDecisionReason": msg}
            return None  # the stop happens at permissionRequest
        return {"additionalContext": msg}

    return hook_output(decision, write)


def guard(payload: Mapping[str, Any], configs: Sequence[MaxRepeatConfig], *,
          policy: Policy | None = None, cache_dir: Path | None = None,
          environ: Mapping[str, str] | None = None) -> tuple[HookOutput, Decision]:
    """Judge one Copilot CLI hook call: what to print, and the decision behind it."""
    event = event_of(payload)
    call = hook_call(payload, environ)
    return judged(call, configs, partial(render, event), policy=policy, cache_dir=cache_dir)
