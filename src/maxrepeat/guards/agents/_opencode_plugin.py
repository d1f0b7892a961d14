"""The OpenCode plug-in ``maxrepeat hook install opencode`` writes, and where it goes.

OpenCode (1.18) loads every ``*.js`` / ``*.ts`` file of ``.opencode/plugins/`` (the
project's) and of ``~/.config/opencode/plugins/`` (the user's: ``$XDG_CONFIG_HOME/opencode``)
at start, with no trust step; ``--pure`` (``OPENCODE_PURE``) loads none. A plug-in module
exports a function returning hooks; the shim uses two, both of which OpenCode 1.18.33
calls for its own tools, MCP tools and subagent tasks:

* ``tool.execute.before(input {tool, sessionID, callID}, output {args})``: a throw refuses
  the call: OpenCode records the thrown message as the call's error, which the model reads;
* ``tool.execute.after(input {tool, sessionID, callID, args}, output {title, output,
  metadata})``: ``output.output`` is what the model reads (and what OpenCode stores).

On each, the shim runs the guard command with one JSON object on standard input::

    {"hook_event_name": "tool.execute.before" | "tool.execute.after", "session_id",
     "transcript_path", "cwd", "tool_name", "tool_call_id", "tool_input",
     "tool_response": {"output", "metadata", "title"}}           # after only

(``transcript_path``: OpenCode's database, ``$OPENCODE_DB`` or
``$XDG_DATA_HOME/opencode/opencode.db``) and does what the JSON answer says
(`maxrepeat.guards.agents.opencode.render`):

* before the call, ``{"decision": "block", "reason": M}`` or ``{"continue": false,
  "stopReason": M}``: throws ``M``: the call does not run;
* after it, ``{"additionalContext": M}``, ``{"decision": "block", "reason": M}`` or
  ``{"continue": false, "stopReason": M}``: appends
  ``\\n\\n<maxrepeat-guard>M</maxrepeat-guard>`` to the output the model reads (the
  ``opencode`` reader takes it off again);
* ``"continue": false`` besides: the shim aborts the session through OpenCode's client
  (``client.session.abort``, not awaited): ``opencode run`` ends with ``Error: Aborted``
  and exit status 1.

A guard that cannot run (no ``maxrepeat`` on PATH, a non-zero exit, an answer that is not
JSON, 30 s without one) never blocks the call: the shim writes the reason to standard
error and lets it run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..shimfiles import ShimFile
from ._plugin_text import ask_function, head

if TYPE_CHECKING:
    from ..install import SettingsWriter

__all__ = ["OpencodeWriter", "FILE_NAME", "config_dir", "data_db", "shim_source"]

#: the plug-in's file name, in either folder
FILE_NAME: Final = "maxrepeat-guard.js"

_BODY: Final = r"""
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

function database() {
  const data = join(process.env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "opencode");
  const named = process.env.OPENCODE_DB;
  if (named) return isAbsolute(named) ? named : join(data, named);
  return join(data, "opencode.db");
}

""" + ask_function("30000") + r"""
export const MaxrepeatGuard = async ({ client, directory }) => {
  const base = (name, input, args) => ({
    hook_event_name: name, session_id: input.sessionID, transcript_path: database(),
    cwd: directory ?? process.cwd(), tool_name: input.tool, tool_call_id: input.callID,
    tool_input: args,
  });
  const abort = (input) => {
    try {
      Promise.resolve(client.session.abort({ path: { id: input.sessionID } })).catch(() => {});
    } catch (e) {
      process.stderr.write(`maxrepeat guard: cannot end the run: ${e}\n`);
    }
  };
  return {
    "tool.execute.before": async (input, output) => {
      let refusal = null;
      try {
        const answer = await ask(base("tool.execute.before", input, output?.args));
        if (answer?.continue === false) abort(input);
        if (answer?.continue === false || answer?.decision === "block") {
          refusal = String(answer.stopReason ?? answer.reason ?? "maxrepeat loop guard");
        }
      } catch (e) {
        process.stderr.write(`maxrepeat guard: ${e} (the call goes on)\n`);
      }
      if (refusal !== null) throw new Error(refusal);
    },
    "tool.execute.after": async (input, output) => {
      try {
        const own = { output: output?.output, metadata: output?.metadata, title: output?.title };
        const payload = { ...base("tool.execute.after", input, input.args), tool_response: own };
        const answer = await ask(payload);
        if (answer?.continue === false) abort(input);
        const note = answer?.additionalContext ?? answer?.reason ?? answer?.stopReason;
        if (typeof note === "string" && output) {
          const text = typeof output.output === "string" ? output.output : "";
          output.output = `${text}\n\n<maxrepeat-guard>${note}</maxrepeat-guard>`;
        }
      } catch (e) {
        process.stderr.write(`maxrepeat guard: ${e}\n`);
      }
    },
  };
};
"""


def shim_source(command: str) -> str:
    """The plug-in's text running ``command`` (the marker line names it too)."""
    return head("OpenCode", "opencode", command) + _BODY


def config_dir(home: Path, env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's user folder: ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``."""
    value = (env if env is not None else os.environ).get("XDG_CONFIG_HOME")
    base = Path(value) if value and os.path.isabs(value) else home / ".config"
    return base / "opencode"


def data_db(home: Path, env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's database (where the session log is): ``$OPENCODE_DB`` (absolute, or
    under the data folder), else ``$XDG_DATA_HOME/opencode/opencode.db``."""
    env = env if env is not None else os.environ
    value = env.get("XDG_DATA_HOME")
    data = (Path(value) if value and os.path.isabs(value) else home / ".local" / "share")
    named = env.get("OPENCODE_DB")
    return (data / "opencode" / named) if named else data / "opencode" / "opencode.db"


class OpencodeWriter:
    """OpenCode: the plug-in file in the project's ``.opencode/plugins/`` or the user's
    ``~/.config/opencode/plugins/``; no settings switch (OpenCode loads every file there)."""

    agent = "opencode"
    settings: SettingsWriter | None = None

    def path(self, scope: str, project: Path, home: Path) -> Path:
        base = config_dir(home) if scope == "user" else project / ".opencode"
        return base / "plugins" / FILE_NAME

    def files(self, scope: str, project: Path, home: Path, command: str) -> list[ShimFile]:
        data = shim_source(command).encode("utf-8")
        return [ShimFile(self.path(scope, project, home), data)]
