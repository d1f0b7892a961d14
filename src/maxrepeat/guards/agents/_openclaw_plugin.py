"""The OpenClaw plug-in ``maxrepeat hook install openclaw`` writes, where it goes, and the
config switch that enables it.

OpenClaw (2026.9) loads native plug-ins in its own process: a folder with a manifest
``openclaw.plugin.json`` (JSON5) and an entry module (``index.js``) exporting ``{id,
register(api)}``. It finds them in the agent workspace's ``.openclaw/extensions/`` (the
project's: the project is OpenClaw's workspace, ``agents.defaults.workspace``) and in the
state folder's ``extensions/`` (the user's: ``~/.openclaw/extensions``,
``$OPENCLAW_STATE_DIR`` when set), and runs one only when its config
(``~/.openclaw/openclaw.json``, ``$OPENCLAW_CONFIG_PATH``) enables it:
``plugins.entries.maxrepeat-guard.enabled`` (workspace and untracked plug-ins are off
otherwise). The manifest asks to be loaded with the agent runtime
(``activation.onAgentHarnesses``) and declares the tool-result middleware it registers
(``contracts.agentToolResultMiddleware``), without which OpenClaw rejects it. Measured
with 2026.9.6: ``openclaw agent --local`` loads the plug-in's hooks (the Gateway untested);
``openclaw agent exec`` registers it for discovery only and never calls its hooks.

The plug-in is a shim: it runs the guard command with one JSON object on standard input
before each tool call (``before_tool_call`` hook) and after it, before the model reads
the result (tool-result middleware)::

    {"hook_event_name": "before_tool_call" | "tool_result", "session_id",
     "transcript_path", "cwd", "tool_name", "tool_call_id", "tool_input",
     "tool_response": {"content", "isError", "details"}}       # tool_result only

``transcript_path`` is the agent's database (``$OPENCLAW_STATE_DIR/agents/<agent>/agent/
openclaw-agent.sqlite``). The shim does what the JSON answer says
(`maxrepeat.guards.agents.openclaw.render`):

* ``{"decision": "block", "reason": M}`` before the call: OpenClaw does not run the tool
  and gives the model ``M`` as the call's result (recorded with ``details.status``
  ``"blocked"``); after the call: ``M`` replaces the result the model reads (as an
  error);
* ``{"append": M}`` (``tool_result``): ``M`` is added to the result the model reads; the
  tool's own result is kept in the result's ``details.maxrepeatGuard`` (also when
  replaced), where the ``openclaw`` reader takes it back from;
* ``"continue": false`` besides: the shim aborts the session's run
  (``abortAgentHarnessRun`` of ``openclaw/plugin-sdk/agent-harness-runtime``) once the
  call's result is stored (its ``tool_result_persist`` hook; 5 s at most): aborting at
  once would store OpenClaw's abort in place of the refusal.

A guard that cannot run (no ``maxrepeat`` on PATH, a non-zero exit, an answer that is not
JSON, 12 s without one: OpenClaw gives a ``before_tool_call`` handler 15 s and blocks the
call when one fails) never blocks the call: the shim writes the reason to standard error
and lets it run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..shimfiles import ShimFile, marker_line
from ._plugin_text import ask_function, head

if TYPE_CHECKING:
    from ..install import SettingsWriter

__all__ = ["OpenclawWriter", "OpenclawSwitch", "PLUGIN_ID", "state_dir", "config_path",
           "plugin_dir", "shim_source"]

#: the plug-in's id (its folder's name, its manifest's id, its config entry)
PLUGIN_ID: Final = "maxrepeat-guard"

_MANIFEST: Final = {
    "id": PLUGIN_ID,
    "name": "maxrepeat loop guard",
    "description": "Warns, refuses and stops repeated tool calls (maxrepeat hook openclaw).",
    "activation": {"onStartup": True, "onAgentHarnesses": ["openclaw"],
                   "onCapabilities": ["hook"]},
    "configSchema": {"type": "object", "additionalProperties": False},
    "contracts": {"agentToolResultMiddleware": ["openclaw"]},
}

_BODY: Final = r"""
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { join } from "node:path";

const KEY = "maxrepeatGuard";
const WAIT_MS = 12000;
let abortRun = null;
import("openclaw/plugin-sdk/agent-harness-runtime").then(
  (m) => { abortRun = m.abortAgentHarnessRun ?? null; },
  (e) => process.stderr.write(`maxrepeat guard: no run abort (${e}); a stop refuses\n`));

""" + ask_function("WAIT_MS") + r"""
function database(ctx) {
  const state = process.env.OPENCLAW_STATE_DIR
    || join(process.env.OPENCLAW_HOME || homedir(), ".openclaw");
  return join(state, "agents", ctx?.agentId || "main", "agent", "openclaw-agent.sqlite");
}

function base(name, ctx, toolName, toolCallId, input) {
  return {
    hook_event_name: name, session_id: ctx?.sessionId ?? null,
    transcript_path: database(ctx), cwd: process.cwd(), tool_name: toolName,
    tool_call_id: toolCallId ?? null, tool_input: input ?? null,
  };
}

function abortNow(sessionId) {
  try {
    if (!(abortRun && sessionId && abortRun(sessionId))) {
      process.stderr.write("maxrepeat guard: cannot end the run\n");
    }
  } catch (e) {
    process.stderr.write(`maxrepeat guard: cannot end the run: ${e}\n`);
  }
}

// A stop ends the run once the call's result (the refusal, or the result with the
// guard's words) is stored: aborting at once would store an abort in its place.
const stopping = new Map();

function stop(ctx, toolCallId) {
  const sessionId = ctx?.sessionId;
  if (!toolCallId) return abortNow(sessionId);
  const timer = setTimeout(() => { stopping.delete(toolCallId); abortNow(sessionId); }, 5000);
  stopping.set(toolCallId, { sessionId, timer });
}

function stored(toolCallId) {
  const due = stopping.get(toolCallId);
  if (!due) return;
  stopping.delete(toolCallId);
  clearTimeout(due.timer);
  // once this write is done, before the run's next step (which would ask the model)
  queueMicrotask(() => abortNow(due.sessionId));
}

export default {
  id: "maxrepeat-guard",
  name: "maxrepeat loop guard",
  description: "Hands each tool call to the maxrepeat guard command.",
  register(api) {
    api.on("before_tool_call", async (event, ctx) => {
      try {
        const id = event.toolCallId ?? ctx?.toolCallId;
        const answer = await ask(base("before_tool_call", ctx, event.toolName, id,
                                      event.params));
        if (answer?.continue === false) stop(ctx, id);
        if (answer?.decision === "block") {
          return { block: true, blockReason: String(answer.reason ?? "") };
        }
      } catch (e) {
        process.stderr.write(`maxrepeat guard: ${e} (the call goes on)\n`);
      }
      return undefined;
    }, { timeoutMs: 14000 });
    api.registerAgentToolResultMiddleware(async (event, ctx) => {
      try {
        const r = event.result ?? {};
        const own = { content: r.content, isError: event.isError ?? r.isError ?? false,
                      details: r.details ?? null };
        const answer = await ask({ ...base("tool_result", ctx, event.toolName,
                                           event.toolCallId, event.args),
                                   tool_response: own });
        if (answer?.continue === false) stop(ctx, event.toolCallId);
        const replace = answer?.decision === "block";
        const words = replace ? answer.reason : answer?.append;
        if (typeof words !== "string") return undefined;
        const text = { type: "text", text: words };
        const kept = r.details && typeof r.details === "object" ? r.details : {};
        const details = { ...kept, [KEY]: own };
        if (replace) return { result: { ...r, content: [text], details, isError: true } };
        return { result: { ...r, content: [...(r.content ?? []), text], details } };
      } catch (e) {
        process.stderr.write(`maxrepeat guard: ${e}\n`);
        return undefined;
      }
    }, { runtimes: ["openclaw"] });
    api.on("tool_result_persist", (event) => {
      stored(event.toolCallId);
      return undefined;
    });
  },
};
"""


def shim_source(command: str) -> str:
    """The plug-in's entry module running ``command`` (the marker line names it too)."""
    return head("OpenClaw", "openclaw", command) + _BODY


def _manifest(command: str) -> str:
    """The plug-in's manifest (JSON5: the marker is a comment)."""
    return (marker_line(command, "//") + "\n"
            + json.dumps(_MANIFEST, indent=2, ensure_ascii=False) + "\n")


def state_dir(home: Path, env: Any = None) -> Path:
    """OpenClaw's state folder: ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw`` (the home
    is ``$OPENCLAW_HOME`` when set)."""
    env = os.environ if env is None else env
    if env.get("OPENCLAW_STATE_DIR"):
        return Path(os.path.expanduser(env["OPENCLAW_STATE_DIR"]))
    return Path(env.get("OPENCLAW_HOME") or home) / ".openclaw"


def config_path(home: Path, env: Any = None) -> Path:
    """OpenClaw's config file: ``$OPENCLAW_CONFIG_PATH``, else ``openclaw.json`` in the
    state folder."""
    env = os.environ if env is None else env
    if env.get("OPENCLAW_CONFIG_PATH"):
        return Path(os.path.expanduser(env["OPENCLAW_CONFIG_PATH"]))
    return state_dir(home, env) / "openclaw.json"


def plugin_dir(scope: str, project: Path, home: Path, env: Any = None) -> Path:
    """The plug-in's folder for ``scope``."""
    root = state_dir(home, env) if scope == "user" else project / ".openclaw"
    return root / "extensions" / PLUGIN_ID


class OpenclawSwitch:
    """The config switch: ``plugins.entries.maxrepeat-guard.enabled: true`` in OpenClaw's
    config (the user's, for either scope: OpenClaw has no project config)."""

    agent = "openclaw"
    command_key = "command"

    def path(self, scope: str, project: Path, home: Path) -> Path:
        return config_path(home)

    def add(self, settings: dict[str, Any], command: str) -> dict[str, Any]:
        plugins = settings.get("plugins")
        if plugins is not None and not isinstance(plugins, dict):
            raise ValueError("plugins must be an object to enable the guard's plug-in")
        plugins = dict(plugins or {})
        entries = plugins.get("entries")
        if entries is not None and not isinstance(entries, dict):
            raise ValueError("plugins.entries must be an object to enable the plug-in")
        entries = dict(entries or {})
        entry = entries.get(PLUGIN_ID)
        entries[PLUGIN_ID] = {**(entry if isinstance(entry, dict) else {}), "enabled": True}
        plugins["entries"] = entries
        return {**settings, "plugins": plugins}

    def remove(self, settings: dict[str, Any]) -> dict[str, Any]:
        plugins = settings.get("plugins")
        entries = plugins.get("entries") if isinstance(plugins, dict) else None
        if not isinstance(plugins, dict) or not isinstance(entries, dict) \
                or PLUGIN_ID not in entries:
            return settings
        entries = {k: v for k, v in entries.items() if k != PLUGIN_ID}
        plugins = {k: v for k, v in plugins.items() if k != "entries"}
        if entries:
            plugins["entries"] = entries
        out = {k: v for k, v in settings.items() if k != "plugins"}
        if plugins:
            out["plugins"] = plugins
        return out

    def commands(self, settings: dict[str, Any]) -> dict[str, list[str]]:
        return {}


class OpenclawWriter:
    """OpenClaw: the plug-in folder (manifest and entry module) in the project's
    ``.openclaw/extensions/`` or the user's ``~/.openclaw/extensions/``, and the config
    switch that enables it."""

    agent = "openclaw"
    settings: SettingsWriter | None = OpenclawSwitch()

    def path(self, scope: str, project: Path, home: Path) -> Path:
        return plugin_dir(scope, project, home) / "index.js"

    def files(self, scope: str, project: Path, home: Path, command: str) -> list[ShimFile]:
        folder = plugin_dir(scope, project, home)
        return [ShimFile(folder / "openclaw.plugin.json", _manifest(command).encode("utf-8")),
                ShimFile(folder / "index.js", shim_source(command).encode("utf-8"))]
