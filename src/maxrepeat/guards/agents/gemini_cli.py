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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...readers._agent_chrome import gemini_cli_result
from ..agent_trust import Load, dig, problem, read_settings, toml_key
from ..agent_writers import GroupWriter
from ..hookcall import HookCall, HookOutput, hook_event, hook_output, payload_str, require
from ..policy import Action, Decision
from . import Agent
from ._common import event_of, judging, trust_level

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "GeminiCliWriter", "will_load"]

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


#: Judge one Gemini CLI hook call: what to print, and the decision behind it.
guard = judging(hook_call, render)


class GeminiCliWriter(GroupWriter):
    """Gemini CLI: the ``hooks`` of ``settings.json`` (user or project), matcher ``*``."""

    agent = "gemini-cli"
    events: tuple[str, ...] = EVENTS

    def path(self, scope: str, project: Path, home: Path) -> Path:
        if scope == "user":
            return home / ".gemini" / "settings.json"
        return project / ".gemini" / "settings.json"

    def group(self, command: str) -> dict[str, Any]:
        return {"matcher": "*", "hooks": [{"type": "command", "command": command,
                                           "name": "maxrepeat-loop-guard", "timeout": 30000}]}


def _gemini_settings(env: Mapping[str, str], home: Path) -> list[Path]:
    system = Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json")
    defaults = Path(env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
                    or system.parent / "system-defaults.json")
    return [system, defaults, home / ".gemini" / "settings.json"]


def _gemini_trusted(folder: Path, home: Path, env: Mapping[str, str]
                    ) -> tuple[bool, Path, str]:
    """Whether Gemini CLI trusts ``folder``, its trusted-folders file and the level of
    the rule that decides (the longest that covers the folder)."""
    path = Path(env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                or home / ".gemini" / "trustedFolders.json")
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        return env["GEMINI_CLI_TRUST_WORKSPACE"] == "true", path, "GEMINI_CLI_TRUST_WORKSPACE"
    level = trust_level(path, folder)
    return level in ("TRUST_FOLDER", "TRUST_PARENT"), path, level


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether Gemini CLI runs the guard: the folder trusted (when folder trust is on),
    hooks enabled and the guard not disabled in any settings layer."""
    problems = []
    layers = _gemini_settings(env, home) + [project / ".gemini" / "settings.json"]
    trust_on = True
    for path in layers[:3]:
        on = dig(read_settings(path)[1], "security", "folderTrust", "enabled")
        trust_on = on if isinstance(on, bool) else trust_on
    trusted, rules, level = _gemini_trusted(project, home, env)
    if trust_on and not trusted:
        folder = toml_key(str(project.resolve()))
        text = read_settings(rules)[0]
        problems.append(problem(
            rules, text, folder, folder, '"TRUST_FOLDER" for Gemini CLI to run any settings '
            "hook there (gemini -p does not even start)", json.dumps(level) if level else
            "nothing", f"trust the folder when gemini asks, or add {folder}: \"TRUST_FOLDER\" "
            "to that file, or run gemini -p with GEMINI_CLI_TRUST_WORKSPACE=true"))
    if scope == "project" and project.resolve() == home.resolve():
        problems.append(ConfigError("project", "a folder other than your home folder for "
                                    "Gemini CLI to read its .gemini/settings.json",
                                    str(project), hint="install with --user"))
    for path in layers if trusted or not trust_on else layers[:3]:
        text, value = read_settings(path)
        editable = "" if path != layers[0] and path != layers[1] else \
            " (system settings, which maxrepeat hook install does not edit: ask the " \
            "administrator)"
        if dig(value, "hooksConfig", "enabled") is False:
            problems.append(problem(path, text, '"enabled"', "hooksConfig.enabled", "true "
                                     "or absent", "false", "set it to true" + editable))
        disabled = dig(value, "hooksConfig", "disabled")
        if isinstance(disabled, list) and "maxrepeat-loop-guard" in disabled:
            problems.append(problem(path, text, '"maxrepeat-loop-guard"',
                                     "hooksConfig.disabled", "a list without "
                                     '"maxrepeat-loop-guard"', json.dumps(disabled),
                                     "remove it" + editable))
    return Load(not problems, tuple(problems))


AGENT = Agent(
    name="gemini-cli", title="Gemini CLI", reader="gemini-cli", events=EVENTS, guard=guard,
    event_of=event_of, writer=GeminiCliWriter(), will_load=will_load,
    stop_exit="the agent loop ends; gemini -p exits 0 with the stop reason on stderr",
    warm=("maxrepeat.readers.gemini_cli", "maxrepeat.readers._gemini_cli_resume"))
