"""The Pi extension ``maxrepeat hook install pi`` writes, and where it goes.

Pi (0.73) loads every ``*.ts`` file of ``.pi/extensions/`` (the project's) and of
``~/.pi/agent/extensions/`` (the user's; ``$PI_CODING_AGENT_DIR/extensions`` when that is
set) at start, with no trust step. The extension is a shim: on each ``tool_call`` (before
the tool runs) and ``tool_result`` (after it, before the model reads the result) event it
runs the guard command with one JSON object on standard input::

    {"hook_event_name": "tool_call" | "tool_result", "session_id", "transcript_path",
     "cwd", "tool_name", "tool_call_id", "tool_input",
     "tool_response": {"content", "isError", "details"}}       # tool_result only

and does what the JSON answer says (`maxrepeat.guards.agents.pi.render`; the words of
Claude Code's hooks, so that ``hook status`` reads the verdicts as for every agent):

* ``{"decision": "block", "reason": M}``: at ``tool_call``, Pi does not run the tool and
  records ``M`` as the call's error result, which the model reads; at ``tool_result``,
  ``M`` replaces the result the model reads (as an error);
* ``{"additionalContext": M}`` (``tool_result``): ``M`` is added to the result the model
  reads, as a text block of its own;
* ``"continue": false`` besides: the shim calls ``ctx.abort()`` (not awaited: Pi's abort
  waits for the agent to be idle, which it is not inside a handler), Pi's run ends after
  the tool batch and ``pi -p`` exits 1 (``Request was aborted.``).

Whenever the result changes, the tool's own result is kept in the result's
``details.maxrepeatGuard``, where the ``pi`` reader takes it back from.

A guard that cannot run (no ``maxrepeat`` on PATH, a non-zero exit, an answer that is not
JSON, 30 s without one) never blocks the call: the shim writes the reason to standard
error and lets it run. (A ``tool_call`` handler that throws would block it in Pi.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..shimfiles import ShimFile
from ._plugin_text import ask_function, head

if TYPE_CHECKING:
    from ..install import SettingsWriter

__all__ = ["PiWriter", "FILE_NAME", "agent_dir", "shim_source"]

#: the extension's file name, in either folder
FILE_NAME: Final = "maxrepeat-guard.ts"

_BODY: Final = r"""
import { spawn } from "node:child_process";

const KEY = "maxrepeatGuard";

""" + ask_function("30000", typescript=True) + r"""
function base(event: any, ctx: any, name: string): Record<string, unknown> {
  const sm = ctx?.sessionManager;
  return {
    hook_event_name: name, session_id: sm?.getSessionId?.() ?? null,
    transcript_path: sm?.getSessionFile?.() ?? null, cwd: ctx?.cwd ?? process.cwd(),
    tool_name: event.toolName, tool_call_id: event.toolCallId, tool_input: event.input,
  };
}

function abort(ctx: any): void {
  try {
    Promise.resolve(ctx.abort()).catch(() => {});
  } catch (e) {
    process.stderr.write(`maxrepeat guard: cannot end the run: ${e}\n`);
  }
}

export default function (pi: any) {
  pi.on("tool_call", async (event: any, ctx: any) => {
    try {
      const answer = await ask(base(event, ctx, "tool_call"));
      if (answer?.continue === false) abort(ctx);
      if (answer?.decision === "block") {
        return { block: true, reason: String(answer.reason ?? "") };
      }
    } catch (e) {
      process.stderr.write(`maxrepeat guard: ${e} (the call goes on)\n`);
    }
    return undefined;
  });
  pi.on("tool_result", async (event: any, ctx: any) => {
    try {
      const own = { content: event.content, isError: event.isError, details: event.details };
      const answer = await ask({ ...base(event, ctx, "tool_result"), tool_response: own });
      if (answer?.continue === false) abort(ctx);
      const block = answer?.decision === "block";
      const words = block ? answer.reason : answer?.additionalContext;
      if (typeof words !== "string") return undefined;
      const text = { type: "text", text: words };
      const kept = event.details && typeof event.details === "object" ? event.details : {};
      const details = { ...kept, [KEY]: own };
      if (block) return { content: [text], details, isError: true };
      return { content: [...(event.content ?? []), text], details };
    } catch (e) {
      process.stderr.write(`maxrepeat guard: ${e}\n`);
      return undefined;
    }
  });
}
"""


def shim_source(command: str) -> str:
    """The extension's text running ``command`` (the marker line names it too)."""
    return head("Pi", "pi", command) + _BODY


def agent_dir(home: Path, env: dict[str, str] | os._Environ[str] | None = None) -> Path:
    """Pi's user folder: ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``."""
    value = (env if env is not None else os.environ).get("PI_CODING_AGENT_DIR")
    if value:
        return Path(os.path.expanduser(value))
    return home / ".pi" / "agent"


class PiWriter:
    """Pi: the extension file in the project's ``.pi/extensions/`` or the user's
    ``~/.pi/agent/extensions/``; no settings switch (Pi loads every file there)."""

    agent = "pi"
    settings: SettingsWriter | None = None

    def path(self, scope: str, project: Path, home: Path) -> Path:
        base = agent_dir(home) if scope == "user" else project / ".pi"
        return base / "extensions" / FILE_NAME

    def files(self, scope: str, project: Path, home: Path, command: str) -> list[ShimFile]:
        return [ShimFile(self.path(scope, project, home),
                         shim_source(command).encode("utf-8"))]
