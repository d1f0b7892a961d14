"""``maxrepeat hook pi``: the loop guard for the Pi coding agent, through an extension.

Pi has no command hooks; its extensions subscribe to events. ``maxrepeat hook install pi``
writes a small TypeScript extension (`._pi_extension`) that runs this command with one
JSON object on standard input before (``tool_call``) and after (``tool_result``) each tool
call::

    {"hook_event_name", "session_id", "transcript_path", "cwd", "tool_name",
     "tool_call_id", "tool_input",
     "tool_response": {"content", "isError", "details"}}     # tool_result only

``transcript_path`` is the session log (``~/.pi/agent/sessions/--<cwd>--/*.jsonl``, read
with the ``pi`` reader). Measured with Pi 0.73.1: when either event runs, Pi has written
the model response holding the call (Pi drains its event queue into the log before
``tool_call``), with the id the payload names, and not its result (a response's results
are written once all its calls have finished): placement ``id``, the result from
``tool_response`` read as the reader reads a logged result.

What the guard prints (exit code 0, one JSON object, nothing when there is nothing to say),
which the extension carries out (the words of Claude Code's hooks):

* ``tool_result`` warning: ``{"additionalContext": MESSAGE}`` (added to the result the
  model reads);
* ``tool_result`` block: ``{"decision": "block", "reason": MESSAGE}`` (the reason replaces
  the result the model reads, as an error);
* ``tool_call`` (``name`` / ``name-args`` modes) when the call would extend a loop to a
  block: ``{"decision": "block", "reason": MESSAGE}`` (the tool does not run; Pi records
  the reason as the call's error result, which the model reads);
* stop (either event): the same block with ``"continue": false``: the run ends after this
  tool batch (``pi -p`` exits 1, ``Request was aborted.`` on standard error).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...readers.pi import tool_result
from ..agent_trust import Load, dig, problem, read_settings
from ..hookcall import HookCall, HookOutput
from ..policy import Decision
from . import Agent
from ._common import block_unless_warned, event_of, judging, logged_result, plugin_call
from ._pi_extension import PiWriter, agent_dir

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "will_load"]

#: The events the guard handles (the extension's ``pi.on`` subscriptions).
EVENTS = ("tool_call", "tool_result")


def hook_call(payload: Mapping[str, Any]) -> HookCall:
    """The extension's input as the guard's `HookCall` (`TrajectoryFormatError` when a
    field the guard needs is missing)."""
    return plugin_call(payload, EVENTS, "pi", partial(logged_result, tool_result),
                       session_required=False)


def render(call: HookCall, decision: Decision) -> HookOutput:
    """The answer the extension carries out (see the module docstring)."""
    return block_unless_warned(call, decision, "additionalContext")


#: Judge one Pi tool event: what to print, and the decision behind it.
guard = judging(hook_call, render)


def _matches(file: Path, pattern: str, base: Path) -> bool:
    """Whether a Pi resource pattern names ``file`` (as Pi matches them: the path
    relative to the settings' folder, the file name, or the whole path)."""
    try:
        rel = file.relative_to(base).as_posix()
    except ValueError:
        rel = file.as_posix()
    return any(fnmatch.fnmatchcase(p, pattern) for p in (rel, file.name, file.as_posix()))


def _disabled(file: Path, patterns: Any, base: Path) -> str | None:
    """The pattern of a settings ``extensions`` list that turns ``file`` off (``!glob``
    not undone by ``+path``, or ``-path``), or None."""
    if not isinstance(patterns, list):
        return None
    words = [p for p in patterns if isinstance(p, str)]
    exact = {file.as_posix(), _rel(file, base)}
    off = next((p for p in words if p.startswith("!") and _matches(file, p[1:], base)), None)
    if off is not None and any(p[1:] in exact for p in words if p.startswith("+")):
        off = None
    return next((p for p in words if p.startswith("-") and p[1:] in exact), off)


def _rel(file: Path, base: Path) -> str:
    try:
        return file.relative_to(base).as_posix()
    except ValueError:
        return file.as_posix()


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether Pi loads the extension ``file``: in the extensions folder Pi reads for
    ``scope`` (the user's moves with ``PI_CODING_AGENT_DIR``) and not turned off by a
    pattern of that scope's ``settings.json`` ``extensions`` list. Pi asks no trust."""
    base = agent_dir(home, dict(env)) if scope == "user" else project / ".pi"
    problems = []
    if file.resolve().parent != (base / "extensions").resolve():
        problems.append(ConfigError(
            "PI_CODING_AGENT_DIR", f"the folder holding {file.parent} for Pi to load the "
            "guard", str(env.get("PI_CODING_AGENT_DIR") or base), hint="install again with "
            "the PI_CODING_AGENT_DIR pi runs with"))
    settings = base / "settings.json"
    text, value = read_settings(settings)
    off = _disabled(file.resolve(), dig(value, "extensions"), base.resolve())
    if off is not None:
        problems.append(problem(settings, text, off, "extensions", "no pattern turning "
                                f"off {file.name}", f'"{off}"', "remove the pattern"))
    notes = ("not when pi runs with --no-extensions (-ne)",)
    return Load(not problems, tuple(problems), notes)


AGENT = Agent(
    name="pi", title="Pi", reader="pi", events=EVENTS, guard=guard, event_of=event_of,
    writer=PiWriter(), will_load=will_load,
    stop_exit="the run ends after the tool batch; pi -p exits 1 with 'Request was aborted.' "
              "on stderr",
    warm=("maxrepeat.readers.pi",))
