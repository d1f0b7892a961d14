"""``maxrepeat hook opencode``: the loop guard as an OpenCode plug-in.

OpenCode (``opencode-ai`` 1.18.33) has no command hooks: ``maxrepeat hook install
opencode`` writes a plug-in (`._opencode_plugin`) that runs this command before
(``tool.execute.before``) and after (``tool.execute.after``) each tool call, with one JSON
object on standard input::

    {"hook_event_name", "session_id", "transcript_path", "cwd", "tool_name",
     "tool_call_id", "tool_input",
     "tool_response": {"output", "metadata", "title"}}           # after only

``transcript_path`` is OpenCode's SQLite database (``~/.local/share/opencode/opencode.db``,
read with the ``opencode`` reader, one session by ``session_id``). When either hook runs,
OpenCode has already written the call (a ``tool`` part, ``callID`` = ``tool_call_id``,
status ``pending`` before the call, ``running`` after it) but not its result: the guard
takes the call from the database by its id and, after the call, the result from
``tool_response`` (``output``; a shell command with a non-zero ``metadata.exit`` failed,
as the reader has it). The database is read whole at every call (one session's rows: a
SQLite query, not a log to resume line by line: `._common.DatabaseFollower`).

What the guard prints (exit code 0, one JSON object, nothing when there is nothing to say;
the keys of Claude Code's hook output, which the verdict journal reads), and what the
plug-in does with it:

* after the call, a warning: ``{"additionalContext": MESSAGE}``; a block:
  ``{"decision": "block", "reason": MESSAGE}``: the message is added to the output the
  model reads, inside ``<maxrepeat-guard>`` tags the reader takes off;
* before the call (``name`` / ``name-args`` modes), when it would extend a loop to a block:
  ``{"decision": "block", "reason": MESSAGE}``: the plug-in throws it, the call does not
  run, and the model reads the message as the call's error;
* a stop: ``{"continue": false, "stopReason": MESSAGE}``: before the call, thrown as a
  refusal; after it, added to the output; and the plug-in aborts the session:
  ``opencode run`` ends (``Error: Aborted``, exit status 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...readers.opencode import session_trajectory, strip_note
from ..agent_trust import Load
from ..hookcall import HookCall, HookOutput, hook_output
from ..policy import Action, Decision
from . import Agent
from ._common import event_of, judging, plugin_call
from ._opencode_plugin import OpencodeWriter

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "will_load"]

#: The plug-in hooks the guard answers.
EVENTS = ("tool.execute.before", "tool.execute.after")


def _result(response: Any) -> tuple[Any, bool]:
    """The result the database will hold for ``tool_response``, and whether it is a
    success (a shell command that exited non-zero is not)."""
    if not isinstance(response, dict):
        return response, True
    output = response.get("output")
    meta = response.get("metadata")
    code = meta.get("exit") if isinstance(meta, dict) else None
    ok = not (isinstance(code, int) and not isinstance(code, bool) and code != 0)
    return (strip_note(output) if isinstance(output, str) else output), ok


def hook_call(payload: Mapping[str, Any]) -> HookCall:
    """The plug-in's payload as the guard's `HookCall`."""
    return plugin_call(payload, EVENTS, "opencode", _result)


def render(call: HookCall, decision: Decision) -> HookOutput:
    """The plug-in's instructions for a decision (see the module docstring)."""

    def write(msg: str) -> dict[str, Any]:
        if decision.action is Action.STOP:
            return {"continue": False, "stopReason": msg}
        if call.phase == "pre" or decision.action is Action.BLOCK:
            return {"decision": "block", "reason": msg}
        return {"additionalContext": msg}

    return hook_output(decision, write)


#: Judge one OpenCode tool call: what the plug-in is told, and the decision behind it.
guard = judging(hook_call, render, database=session_trajectory)


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether OpenCode loads the plug-in: plug-ins not turned off (``--pure``), and for
    the project's, project configuration not turned off."""
    problems = []
    if env.get("OPENCODE_PURE"):
        problems.append(ConfigError(
            "OPENCODE_PURE", "unset for OpenCode to load any plug-in (opencode --pure sets "
            "it)", repr(env["OPENCODE_PURE"]), hint="run opencode without --pure and "
            "without OPENCODE_PURE"))
    if scope == "project" and env.get("OPENCODE_DISABLE_PROJECT_CONFIG"):
        problems.append(ConfigError(
            "OPENCODE_DISABLE_PROJECT_CONFIG", "unset for OpenCode to read the project's "
            ".opencode/", repr(env["OPENCODE_DISABLE_PROJECT_CONFIG"]),
            hint="unset it, or install with --user"))
    return Load(not problems, tuple(problems))


AGENT = Agent(
    name="opencode", title="OpenCode", reader="opencode", events=EVENTS, guard=guard,
    event_of=event_of, writer=OpencodeWriter(), will_load=will_load,
    stop_exit="opencode run ends at the stop (the plug-in aborts the session): "
              "Error: Aborted, exit status 1",
    warm=("maxrepeat.readers.opencode",))
