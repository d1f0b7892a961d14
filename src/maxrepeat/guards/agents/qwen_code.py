"""``maxrepeat hook qwen-code``: the loop guard as a Qwen Code hook.

Qwen Code (npm ``@qwen-code/qwen-code``, measured with 0.24.4) runs the command hooks of
its ``settings.json`` before (``PreToolUse``) and after each tool call (``PostToolUse``,
or ``PostToolUseFailure`` when the call failed), with one JSON object on standard input::

    {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp",
     "permission_mode", "prompt_id", "tool_name", "tool_input", "tool_use_id",
     "tool_call_id",                               # the model's call id, as logged
     "tool_response": {"llmContent", "returnDisplay"},       # PostToolUse only
     "error", "is_interrupt"}                      # PostToolUseFailure only

``transcript_path`` is the chat recording (``~/.qwen/projects/<folder>/chats/<session>
.jsonl``, read with the ``qwen-code`` reader). Qwen Code writes a model response (all its
calls, ids included) before the first hook of its first call, and the results of a
response together once all its calls have finished (after their ``PostToolUse``): the
guard finds the current call in the log by ``tool_call_id`` and takes its result from the
payload (``tool_response.llmContent``, or ``error``).

What the guard prints (exit code 0, one JSON object, nothing when there is nothing to say):

* after the call (either event), a warning: ``{"hookSpecificOutput": {"hookEventName":
  EVENT, "additionalContext": MESSAGE}}``: Qwen Code appends it to the result the model
  reads (and logs), after a blank line;
* ``PostToolUse`` block or stop: ``{"continue": false, "stopReason": MESSAGE}``: Qwen
  Code replaces the call's result with the message, as an error the model reads;
  ``PostToolUseFailure`` takes no decision, only context: the message is appended to the
  error as a warning is;
* ``PreToolUse`` (``name`` / ``name-args`` modes) when the call would extend a loop to a
  block or a stop: ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": MESSAGE}}``: the call does
  not run; the model reads the message as its error.

No hook answer ends a Qwen Code run: ``continue: false`` refuses the call (before it) or
replaces its result (after it) and the model is asked again. A stop is therefore a
refusal of every later call until the model gives up (``qwen -p`` then exits 0).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...readers.qwen_code import tool_result
from ..agent_trust import Load, dig, problem, read_settings, toml_key
from ..agent_writers import GroupWriter
from ..hookcall import HookCall, HookOutput, hook_event, hook_output, payload_str, require
from ..policy import Action, Decision
from . import Agent
from ._common import event_of, judging, trust_level

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "QwenCodeWriter", "will_load"]

#: The hook events the guard handles (and `maxrepeat hook install qwen-code` registers).
EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def _result(payload: Mapping[str, Any], event: str) -> tuple[Any, bool]:
    if event == "PostToolUseFailure":
        return payload.get("error"), False
    response = payload.get("tool_response")
    return (response.get("llmContent") if isinstance(response, dict) else response), True


def hook_call(payload: Mapping[str, Any]) -> HookCall:
    """The hook input as the guard's `HookCall` (`TrajectoryFormatError` when a field
    the guard needs is missing)."""
    event = hook_event(payload, EVENTS)
    data = dict(payload)
    name = require(payload_str(data, "tool_name"), "tool_name")
    call_id = payload_str(data, "tool_call_id")
    result, ok = _result(payload, event) if event != "PreToolUse" else (None, True)
    return HookCall(
        phase="pre" if event == "PreToolUse" else "post",
        session=payload_str(data, "session_id"),
        log=payload_str(data, "transcript_path"),
        reader="qwen-code",
        placement="id" if call_id else "unanswered",
        name=name,
        arguments=payload.get("tool_input"),
        call_id=call_id,
        result=tool_result(name, result),
        ok=ok,
    )


def render(call: HookCall, decision: Decision) -> HookOutput:
    """Qwen Code's hook output for a decision (see the module docstring)."""

    def write(msg: str) -> dict[str, Any]:
        if call.phase == "pre":
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "deny",
                                           "permissionDecisionReason": msg}}
        if decision.action is not Action.WARN and call.ok:
            return {"continue": False, "stopReason": msg}
        event = "PostToolUse" if call.ok else "PostToolUseFailure"
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": msg}}

    return hook_output(decision, write)


#: Judge one Qwen Code hook call: what to print, and the decision behind it.
guard = judging(hook_call, render)


class QwenCodeWriter(GroupWriter):
    """Qwen Code: the ``hooks`` of ``.qwen/settings.json`` (project) or
    ``~/.qwen/settings.json`` (user), one matcher group ``*`` per event."""

    agent = "qwen-code"
    events: tuple[str, ...] = EVENTS

    def path(self, scope: str, project: Path, home: Path) -> Path:
        if scope == "user":
            return home / ".qwen" / "settings.json"
        return project / ".qwen" / "settings.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"matcher": "*", "hooks": [{"type": "command", "command": command,
                                           "timeout": 30}]}

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        """The settings without the guard; a file left holding only the ``$version``
        Qwen Code stamps on every settings file it loads goes with the guard (install
        made it: the user's own file is restored from its backup)."""
        out = super().remove(settings)
        return {} if set(out) == {"$version"} and set(settings) != {"$version"} else out


def _trusted(folder: Path, home: Path, env: Mapping[str, str]) -> tuple[bool, Path, str]:
    """Whether Qwen Code trusts ``folder`` (its trusted-folders file, the level of the
    longest rule covering it)."""
    path = Path(env.get("QWEN_CODE_TRUSTED_FOLDERS_PATH")
                or home / ".qwen" / "trustedFolders.json")
    level = trust_level(path, folder)
    return level in ("TRUST_FOLDER", "TRUST_PARENT"), path, level


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether Qwen Code runs the guard: hooks not disabled (``disableAllHooks``) in any
    settings layer it reads, and, for a project install with folder trust on, the folder
    trusted (Qwen Code reads no project settings in a folder it does not trust)."""
    system = Path(env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or "/etc/qwen-code/settings.json")
    layers = [system, home / ".qwen" / "settings.json"]
    trust_on = any(dig(read_settings(p)[1], "security", "folderTrust", "enabled") is True
                   for p in layers)
    trusted, rules, level = _trusted(project, home, env)
    problems = []
    if trust_on and not trusted and scope == "project":
        folder = toml_key(str(project.resolve()))
        problems.append(problem(
            rules, read_settings(rules)[0], folder, folder, '"TRUST_FOLDER" for Qwen Code '
            "to read the project's .qwen/settings.json (security.folderTrust.enabled is "
            "true)", json.dumps(level) if level else "nothing",
            f"trust the folder when qwen asks, or add {folder}: \"TRUST_FOLDER\" to that "
            "file, or install with --user"))
    if scope == "project" and project.resolve() == home.resolve():
        problems.append(ConfigError("project", "a folder other than your home folder for "
                                    "Qwen Code to read its .qwen/settings.json",
                                    str(project), hint="install with --user"))
    if trusted or not trust_on:
        layers.append(project / ".qwen" / "settings.json")
    for path in layers:
        text, value = read_settings(path)
        if dig(value, "disableAllHooks") is True:
            where = " (system settings: ask the administrator)" if path == system else ""
            problems.append(problem(path, text, '"disableAllHooks"', "disableAllHooks",
                                     "false or absent for Qwen Code to run hooks", "true",
                                     "remove it, or set it to false" + where))
    notes = ("qwen --bare and --safe-mode run no hooks",)
    return Load(not problems, tuple(problems), notes)


AGENT = Agent(
    name="qwen-code", title="Qwen Code", reader="qwen-code", events=EVENTS, guard=guard,
    event_of=event_of, writer=QwenCodeWriter(), will_load=will_load,
    stop_exit="no hook answer ends a Qwen Code run: every later call is refused before it "
              "runs, and qwen -p exits 0 once the model stops calling tools",
    warm=("maxrepeat.readers.qwen_code",))
