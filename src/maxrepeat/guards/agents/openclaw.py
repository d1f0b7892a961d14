"""``maxrepeat hook openclaw``: the loop guard as an OpenClaw plug-in.

OpenClaw (npm ``openclaw`` 2026.9.6) runs plug-ins in its own process; it has no command
hooks. ``maxrepeat hook install openclaw`` writes a plug-in (`._openclaw_plugin`) that runs
this command before each tool call (its ``before_tool_call`` hook) and after it, before the
model reads the result (its tool-result middleware), with one JSON object on standard
input::

    {"hook_event_name", "session_id", "transcript_path", "cwd", "tool_name",
     "tool_call_id", "tool_input",
     "tool_response": {"content", "isError", "details"}}       # tool_result only

``transcript_path`` is the agent's SQLite database (``~/.openclaw/agents/main/agent/
openclaw-agent.sqlite``, read with the ``openclaw`` reader, one session by
``session_id``). Measured with OpenClaw 2026.9.6: when either hook runs, OpenClaw has
written the model response holding the call (an ``assistant`` entry whose ``toolCall``
id is ``tool_call_id``) and not its result: placement ``id``, the result from
``tool_response`` read as the reader reads a logged result. The database is read whole at
every call (one session's rows: a SQLite query, not a log to resume line by line:
`._common.DatabaseFollower`).

What the guard prints (exit code 0, one JSON object, nothing when there is nothing to say),
which the plug-in carries out:

* ``tool_result`` warning: ``{"append": MESSAGE}`` (added to the result the model reads);
* ``tool_result`` block: ``{"decision": "block", "reason": MESSAGE}`` (the result the
  model reads, as an error);
* ``before_tool_call`` (``name`` / ``name-args`` modes) when the call would extend a loop
  to a block: the same (the tool does not run; the model reads the reason as the call's
  result);
* stop (either event): the same with ``"continue": false``: the plug-in aborts the run.

(The keys are those the verdict journal reads, `maxrepeat.guards.verdicts`.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...readers.openclaw import session_trajectory, tool_result
from ..agent_trust import Load, dig, problem, read_settings
from ..hookcall import HookCall, HookOutput
from ..policy import Decision
from . import Agent
from ._common import block_unless_warned, event_of, judging, logged_result, plugin_call
from ._openclaw_plugin import PLUGIN_ID, OpenclawWriter, config_path, plugin_dir

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "will_load"]

#: The plug-in events the guard answers.
EVENTS = ("before_tool_call", "tool_result")


def hook_call(payload: Mapping[str, Any]) -> HookCall:
    """The plug-in's payload as the guard's `HookCall` (`TrajectoryFormatError` when a
    field the guard needs is missing)."""
    return plugin_call(payload, EVENTS, "openclaw", partial(logged_result, tool_result))


def render(call: HookCall, decision: Decision) -> HookOutput:
    """The plug-in's instructions for a decision (see the module docstring)."""
    return block_unless_warned(call, decision, "append")


#: Judge one OpenClaw tool call: what the plug-in is told, and the decision behind it.
guard = judging(hook_call, render, database=session_trajectory)


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether OpenClaw runs the plug-in ``file``: in the folder OpenClaw reads for
    ``scope``, plug-ins not turned off, the plug-in not denied nor left out of an allow
    list, and its config entry enabled (OpenClaw loads workspace and untracked plug-ins
    only when enabled); for the project scope, the project is OpenClaw's workspace."""
    problems: list[ConfigError] = []
    folder = plugin_dir(scope, project, home, env)
    if file.resolve().parent != folder.resolve():
        problems.append(ConfigError(
            "OPENCLAW_STATE_DIR", f"the folder holding {file.parent} for OpenClaw to load "
            "the guard", str(env.get("OPENCLAW_STATE_DIR") or folder.parent.parent),
            hint="install again with the OPENCLAW_STATE_DIR openclaw runs with"))
    config = config_path(home, env)
    text, value = read_settings(config)
    plugins = dig(value, "plugins")
    if dig(plugins, "enabled") is False:
        problems.append(problem(config, text, '"enabled"', "plugins.enabled",
                                "true or absent", "false", "remove it, or set it to true"))
    deny, allow = dig(plugins, "deny"), dig(plugins, "allow")
    if isinstance(deny, list) and PLUGIN_ID in deny:
        problems.append(problem(config, text, '"deny"', "plugins.deny",
                                f"a list without {PLUGIN_ID}", PLUGIN_ID, "take it out"))
    if isinstance(allow, list) and allow and PLUGIN_ID not in allow:
        problems.append(problem(config, text, '"allow"', "plugins.allow",
                                f"a list holding {PLUGIN_ID}", "a list without it",
                                f'add "{PLUGIN_ID}"'))
    if scope == "project":
        space = dig(value, "agents", "defaults", "workspace")
        where = Path(os.path.expanduser(space)).resolve() if isinstance(space, str) else None
        if where != project.resolve():
            problems.append(problem(
                config, text, '"workspace"', "agents.defaults.workspace",
                f"{project} (OpenClaw reads plug-ins of its workspace only)",
                json.dumps(space) if space is not None else "nothing (~/.openclaw/workspace)",
                "set it to the project, or install with --user"))
    if dig(plugins, "entries", PLUGIN_ID, "enabled") is not True:
        problems.append(problem(config, text, f'"{PLUGIN_ID}"',
                                f"plugins.entries.{PLUGIN_ID}.enabled", "true",
                                "nothing", f"run maxrepeat hook install openclaw --{scope}"))
    notes = ("openclaw agent --local runs it; openclaw agent exec does not call plug-in "
             "hooks",)
    return Load(not problems, tuple(problems), notes)


AGENT = Agent(
    name="openclaw", title="OpenClaw", reader="openclaw", events=EVENTS, guard=guard,
    event_of=event_of, writer=OpenclawWriter(), will_load=will_load,
    stop_exit="the plug-in aborts the run: openclaw agent --local exits 1 ('agent run "
              "aborted')",
    warm=("maxrepeat.readers.openclaw",))
