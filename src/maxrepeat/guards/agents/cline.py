"""``maxrepeat hook cline``: the loop guard as Cline CLI hook files.

Cline's CLI (npm ``cline`` 3.x, its runtime ``@cline/core``) runs every file named after
a hook event (``PreToolUse``, ``PostToolUse``, ...; no extension, or ``.sh``, ``.py``, ...)
it finds in ``~/Documents/Cline/Hooks/`` and ``$CLINE_DIR/hooks/`` (``~/.cline/hooks``)
for the user, and in ``<workspace>/.clinerules/hooks/`` and ``<workspace>/.cline/hooks/``
for a project, with no setting to turn them on (the CLI reads no hooks toggle). It starts
the interpreter of the file's ``#!`` line with one JSON object on standard input, before
(``hookName: "tool_call"``) and after (``"tool_result"``) each tool call, and waits::

    {"hookName", "taskId", "sessionContext": {"rootSessionId"}, "workspaceRoots",
     "agent_id", "parent_agent_id", "iteration",
     "tool_call": {"id", "name", "input"},                              # PreToolUse
     "tool_result": {"id", "name", "input", "output", "error"?, ...}}   # PostToolUse

The session log is ``<sessions>/<rootSessionId>/<rootSessionId>.messages.json`` under
``$CLINE_SESSION_DATA_DIR``, else ``$CLINE_DATA_DIR/sessions``, else
``$CLINE_DIR/data/sessions``, else ``~/.cline/data/sessions`` (the hook runs in Cline's
environment; ``cline --data-dir`` exports ``CLINE_DATA_DIR``). Measured with 3.0.65: when
either hook runs, Cline has written the model response holding the call, with the id the
payload names, and not its result (a response's results are written once all its calls
ran): placement ``id``, the result from ``tool_result.output`` as the log will keep it.

What the guard prints (exit code 0, one JSON object, nothing when there is nothing to say):

* ``PostToolUse`` warning: ``{"contextModification": MESSAGE}``: Cline adds it, in a
  ``<hook_context source="PostToolUse" ...>`` block, to a message after the results that
  the model reads with them;
* a block or a stop (either event): ``{"cancel": true, "errorMessage": MESSAGE}``. Cline
  has no per-call refusal for hook files: ``cancel`` ends the whole run (before the call
  runs, from ``PreToolUse``), ``cline`` exits 0 and writes the message to its own log
  (``$CLINE_DATA_DIR/logs/cline.log``) only; the model reads nothing. So the guard's
  refusal of a repeat is the end of the run, and its text says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import ConfigError, TrajectoryFormatError
from ...readers.cline import persisted, tool_result
from ..agent_trust import Load
from ..hookcall import HookCall, HookOutput, hook_output, payload_str, require
from ..policy import Action, Decision, loop_message
from ..shimfiles import ShimFile, command_in, marker_line, ours
from . import Agent
from ._common import judging

if TYPE_CHECKING:
    from ..install import SettingsWriter

__all__ = ["AGENT", "hook_call", "render", "guard", "EVENTS", "ClineWriter", "will_load",
           "session_log"]

#: The hook files the guard installs (Cline's event names).
EVENTS = ("PreToolUse", "PostToolUse")
_HOOK_NAMES = {"tool_call": "PreToolUse", "tool_result": "PostToolUse"}


def session_log(session: str, env: Mapping[str, str], home: Path) -> Path:
    """Where Cline keeps the message log of ``session`` (see the module docstring)."""
    sessions = env.get("CLINE_SESSION_DATA_DIR", "").strip()
    if not sessions:
        data = env.get("CLINE_DATA_DIR", "").strip() or os.path.join(
            env.get("CLINE_DIR", "").strip() or str(home / ".cline"), "data")
        sessions = os.path.join(data, "sessions")
    return Path(sessions) / session / f"{session}.messages.json"


def event_of(payload: Mapping[str, Any]) -> str:
    """The hook file the input is for (``PreToolUse`` / ``PostToolUse``), from Cline's
    ``hookName``."""
    return _HOOK_NAMES.get(str(payload.get("hookName")), "")


def hook_call(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> HookCall:
    """Cline's hook input as the guard's `HookCall` (`TrajectoryFormatError` when a field
    the guard needs is missing); the log found from ``env`` (default: this process's)."""
    event = event_of(payload)
    if not event:
        raise TrajectoryFormatError("<hook input>", "hookName must be tool_call or tool_result "
                                    f"(got {payload.get('hookName')!r}); install the guard "
                                    "as PreToolUse and PostToolUse only")
    call = payload.get("tool_call" if event == "PreToolUse" else "tool_result")
    call = call if isinstance(call, dict) else {}
    context = payload.get("sessionContext")
    session = payload_str(context, "rootSessionId") or payload_str(dict(payload), "taskId")
    env = os.environ if env is None else env
    log = session_log(session, env, Path(env.get("HOME") or Path.home())) if session else None
    result, ok = None, True
    if event == "PostToolUse":
        result, ok = tool_result(persisted(call.get("output")),
                                 call.get("error") is not None)
    return HookCall(
        phase="pre" if event == "PreToolUse" else "post",
        session=session,
        log=str(log) if log else None,
        reader="cline",
        placement="id",
        name=require(payload_str(call, "name"), "tool_call.name"),
        arguments=call.get("input"),
        call_id=payload_str(call, "id"),
        result=result,
        ok=ok,
    )


def render(call: HookCall, decision: Decision) -> HookOutput:
    """Cline's hook output for a decision (see the module docstring)."""

    def write(msg: str) -> dict[str, Any]:
        if decision.action is Action.WARN:
            return {"contextModification": msg}
        # cancel ends the run (no per-call refusal): the text says the run stops
        return {"cancel": True, "errorMessage": loop_message(
            Action.STOP, decision.loops, refused=call.phase == "pre")
            if decision.loops else msg}

    return hook_output(decision, write)


#: Judge one Cline hook call: what to print, and the decision behind it.
guard = judging(hook_call, render)


def _shim(command: str, event: str) -> bytes:
    """A hook file: a POSIX shell script that hands Cline's input to the guard. When the
    guard cannot start, the shell prints why on standard error and Cline, finding no
    JSON answer, lets the call run."""
    return (f"#!/bin/sh\n{marker_line(command, '#')}\n"
            f"# The maxrepeat loop guard's {event} hook for Cline, written by `maxrepeat hook "
            "install cline`;\n# `maxrepeat hook uninstall cline` removes it.\n"
            f"exec {command}\n").encode()


class ClineWriter:
    """Cline: the hook files ``PreToolUse`` and ``PostToolUse`` (mode 0755), in
    ``.clinerules/hooks/`` of the project or ``~/Documents/Cline/Hooks/`` of the user."""

    agent = "cline"
    settings: SettingsWriter | None = None

    def folder(self, scope: str, project: Path, home: Path) -> Path:
        """The hooks folder of ``scope``."""
        if scope == "user":
            return home / "Documents" / "Cline" / "Hooks"
        return project / ".clinerules" / "hooks"

    def path(self, scope: str, project: Path, home: Path) -> Path:
        return self.folder(scope, project, home) / EVENTS[0]

    def files(self, scope: str, project: Path, home: Path, command: str) -> list[ShimFile]:
        folder = self.folder(scope, project, home)
        return [ShimFile(folder / e, _shim(command, e), 0o755) for e in EVENTS]


def will_load(scope: str, file: Path, project: Path, home: Path,
              env: Mapping[str, str]) -> Load:
    """Whether Cline runs the guard in ``file``: both hook files there, readable, each
    naming the command; not installed in the other scope as well (Cline would run both
    and judge each call twice). Cline's CLI asks no trust and has no hooks setting."""
    writer = ClineWriter()
    problems: list[ConfigError] = []
    for event in EVENTS:
        path = file.parent / event
        try:
            data = ours(path)
        except ValueError as exc:
            data, why = None, str(exc)
        else:
            why = "nothing" if data is None else "a file without the guard's command"
        if data is None or command_in(data) is None:
            problems.append(ConfigError(str(path), f"the guard's {event} hook file", why,
                                        hint="run maxrepeat hook install cline again"))
    other = "user" if scope == "project" else "project"
    twin = writer.path(other, project, home)
    try:
        both = twin.resolve() != file.resolve() and ours(twin) is not None
    except ValueError:
        both = False
    if both:
        problems.append(ConfigError(str(twin), f"no guard in the {other} scope as well (Cline "
                                    "runs both: every call would be judged twice)",
                                    "a guard", hint=f"maxrepeat hook uninstall cline "
                                    f"{'--user' if other == 'user' else '--project'}"))
    notes = ("the guard reads the session from $CLINE_DATA_DIR (or ~/.cline/data): with "
             "cline --config DIR, export CLINE_DIR=DIR too",)
    return Load(not problems, tuple(problems), notes)


AGENT = Agent(
    name="cline", title="Cline CLI", reader="cline", events=EVENTS, guard=guard,
    event_of=event_of, writer=ClineWriter(), will_load=will_load,
    stop_exit="the run ends before the repeat runs (Cline's cancel); cline -y exits 0, the "
              "reason only in ~/.cline/data/logs/cline.log",
    warm=("maxrepeat.readers.cline",))
