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

import json
import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

from ...core.config import MaxRepeatConfig
from ...core.errors import TrajectoryFormatError
from ...readers._agent_chrome import copilot_cli_result
from ..agent_trust import Load, dig, problem, read_settings
from ..agent_writers import append_entries, hooks_of, is_guard, without
from ..agentlog import judged
from ..hookcall import UNKNOWN, HookCall, HookOutput, hook_output, payload_str, require
from ..policy import Action, Decision, Policy
from . import Agent

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "event_of", "session_log",
           "CopilotCliWriter", "will_load"]

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


class CopilotCliWriter:
    """Copilot CLI: the ``hooks`` of ``settings.json`` (user), or a hooks file of its own
    in ``.github/hooks/`` (project); one ``{"type": "command", "bash": ...}`` handler per
    event (``preToolUse``, ``postToolUse``, ``postToolUseFailure``, ``permissionRequest``)."""

    agent = "copilot-cli"
    events: Final = EVENTS
    #: the handler key that holds the command
    command_key = "bash"

    def __init__(self) -> None:
        # the shared machinery asks for the path before it edits the file: a hooks file
        # of our own (project scope) carries Copilot's "version": 1, settings.json not
        self._own_file = False

    def path(self, scope: str, project: Path, home: Path) -> Path:
        self._own_file = scope != "user"
        if scope == "user":
            base = os.environ.get("COPILOT_HOME")
            return (Path(base) if base else home / ".copilot") / "settings.json"
        return project / ".github" / "hooks" / "maxrepeat.json"

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        out = self.remove(settings)
        hooks_of(out)
        if self._own_file and "version" not in out:
            out = {"version": 1, **out}
        append_entries(out, self.events,
                lambda: {"type": "command", "bash": command, "timeoutSec": 30})
        return out

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        out = without(settings, lambda handlers: [h for h in handlers if not (
            isinstance(h, dict) and is_guard(h.get("bash"), self.agent))])
        if set(out) == {"version"} and "hooks" in settings:
            return {}  # only our own hooks file's header is left
        return out

    def commands(self, settings: dict[str, Any]) -> dict[str, list[str]]:
        """The guard commands ``settings`` hold, each with the events it is registered for."""
        found: dict[str, list[str]] = {}
        hooks = settings.get("hooks")
        for event, handlers in (hooks.items() if isinstance(hooks, dict) else ()):
            for handler in handlers if isinstance(handlers, list) else ():
                command = handler.get("bash") if isinstance(handler, dict) else None
                if is_guard(command, self.agent) and event not in found.setdefault(command, []):
                    found[command].append(event)
        return found


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether Copilot CLI reads the guard: a project's hooks only in a trusted folder
    (or with ``COPILOT_ALLOW_ALL=true`` for ``copilot -p``)."""
    if scope != "project":
        return Load(True)
    config = Path(env.get("COPILOT_HOME") or home / ".copilot") / "config.json"
    text, value = read_settings(config)
    folders = [dig(value, key) for key in ("trustedFolders", "trusted_folders")]
    listed = [Path(f).resolve() for group in folders if isinstance(group, list)
              for f in group if isinstance(f, str)]
    folder = project.resolve()
    if folder in listed or any(folder.is_relative_to(f) for f in listed):
        return Load(True)
    note = ("an interactive session asks you to trust the folder; for copilot -p trust it "
            "once, or set COPILOT_ALLOW_ALL=true",)
    if env.get("COPILOT_ALLOW_ALL") == "true":
        return Load(True, (), ("loads with COPILOT_ALLOW_ALL=true (set here)",) + note)
    return Load(False, (problem(
        config, text, '"trustedFolders"', "trustedFolders", f"a list holding {folder} for "
        "Copilot CLI to read .github/hooks/ with -p", json.dumps([str(f) for f in listed]),
        "start copilot in the folder and trust it, or run copilot -p with "
        "COPILOT_ALLOW_ALL=true"),), note)


AGENT = Agent(
    name="copilot-cli", title="Copilot CLI", reader="copilot-cli", events=EVENTS, guard=guard,
    event_of=event_of, writer=CopilotCliWriter(), will_load=will_load,
    stop_exit="the run is interrupted; copilot -p exits 0",
    warm=("maxrepeat.readers.copilot_cli",))
