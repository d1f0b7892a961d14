"""Drive the real Cline CLI (npm ``cline``, 3.x) against a scripted model.

`ChatModel` is an HTTP server on 127.0.0.1 (`scripted_chat.ScriptedServer`) speaking the
OpenAI Chat Completions API, streamed (``POST .../chat/completions`` with server-sent
events), the wire API of Cline's ``openai-compatible`` provider. It plays a fixed list of turns
(`agent_harness.Turn`: a tool call, several parallel calls, or a final text), whatever the
agent sends; every request body is kept (``requests``).

`run_cline` runs ``cline -y`` once in a temporary HOME: Cline's state under
``HOME/.cline`` (its provider set to the scripted model with ``cline auth``), telemetry
and auto-update off, the session backend local (no background hub daemon), and returns
the session's message log (``HOME/.cline/data/sessions/<id>/<id>.messages.json``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agent_harness import NPM_BIN, AgentRun, Turn
from .scripted_chat import Answer, ScriptedServer, Step, chat_stream, sse

__all__ = ["ChatModel", "ClineRun", "CLINE", "SUBMIT", "cline_env", "run_cline",
           "shell_turn", "shell_turns"]

#: the installed ``cline`` command (``.npm-agents``, installed by scripts/test.sh)
CLINE = NPM_BIN / "cline"


def shell_turn(command: str) -> Turn:
    """One call of Cline's shell tool (``run_commands``) running ``command``."""
    return Turn(name="run_commands", arguments={"commands": [command]})


#: the turn that ends a run: Cline's ``-y`` run goes on (a ``[SYSTEM]`` reminder) until
#: the model calls ``submit_and_exit`` (its summary at least 10 characters)
SUBMIT = Turn(name="submit_and_exit", arguments={"summary": "the scripted work is done",
                                                  "verified": True})


def shell_turns(commands: Sequence[str | Sequence[str]]) -> list[Turn]:
    """A script running each command with Cline's shell tool (a list of commands: one
    response calling it once per command, in parallel), then submitting."""
    turns = [shell_turn(c) if isinstance(c, str) else Turn(
        name="run_commands", arguments={"parallel": [shell_turn(x) for x in c]})
        for c in commands]
    return [*turns, SUBMIT]


@dataclass
class ChatModel(ScriptedServer):
    """The scripted Chat Completions server (see the module docstring). A turn whose
    ``arguments`` hold ``"parallel"`` (a list of turns) answers with those calls at once."""

    turns: list[Turn]

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream of one completion: a role chunk, the content or the calls, the end."""
        i = self.served
        turn = self.turns[i] if i < len(self.turns) else SUBMIT
        self.served += 1
        calls = (turn.arguments or {}).get("parallel") or [turn]
        step: Step = turn.text or "" if turn.name is None else [
            (call.name or "", call.arguments or {}) for call in calls]
        return chat_stream(i, step, body.get("model", "scripted"), split=True)

    def get_body(self) -> bytes:  # the model list
        return json.dumps({"object": "list", "data": [
            {"id": "scripted", "object": "model", "owned_by": "me"}]}).encode()

    def answer(self, path: str, raw: bytes) -> Answer | int:
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"raw": raw.decode("utf-8", "replace")}
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404
        self.requests.append({"path": path, "body": body})
        return 200, sse(self.chunks(body), done=True), "text/event-stream"


#: what one run left: exit code, output, its HOME and its session's message log
ClineRun = AgentRun


def cline_env(home: Path) -> dict[str, str]:
    """The environment of a Cline run in ``home``: nothing of the caller's but PATH (this
    Python's ``bin`` first: ``maxrepeat`` as a user has it installed) and the locale;
    Cline's state in ``home/.cline``, no telemetry, no auto-update, no hub."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    keep["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{keep.get('PATH', '')}"
    return {**keep, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1", "CI": "true",
            "TERM": "dumb", "CLINE_NO_AUTO_UPDATE": "1", "CLINE_SESSION_BACKEND_MODE": "local",
            "OTEL_TELEMETRY_ENABLED": "false"}


def configure(home: Path, port: int) -> dict[str, str]:
    """Point Cline in ``home`` at the scripted model on ``port``, with telemetry and
    auto-update off in its global settings; the run's environment. ``providers.json`` is
    the file ``cline auth -p openai-compatible -k scripted -m scripted -b URL`` writes
    (written here directly: the command takes ~15 s on a busy machine)."""
    env = cline_env(home)
    settings = home / ".cline" / "data" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "global-settings.json").write_text(json.dumps(
        {"telemetryOptOut": True, "autoUpdateEnabled": False}), encoding="utf-8")
    provider = {"provider": "openai-compatible", "apiKey": "scripted", "model": "scripted",
                "baseUrl": f"http://127.0.0.1:{port}/v1"}
    (settings / "providers.json").write_text(json.dumps(
        {"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
         "providers": {"openai-compatible": {"settings": provider,
                                             "updatedAt": "2026-12-01T00:00:00.000Z",
                                             "tokenSource": "manual"}}}), encoding="utf-8")
    return env


def newest_log(home: Path) -> Path | None:
    """The newest session message log under ``home/.cline/data/sessions``."""
    found = sorted((home / ".cline" / "data" / "sessions").glob("*/*.messages.json"),
                   key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def run_cline(model: ChatModel, home: Path, prompt: str = "fix the build",
              timeout: float = 120, work: Path | None = None) -> ClineRun:
    """Run ``cline -y PROMPT`` once in ``work`` (default ``home/work``) against ``model``
    (serving); the guard, if any, installed beforehand by the caller."""
    work = work or home / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = configure(home, model.port)
    proc = subprocess.run([str(CLINE), "-y", "--json", prompt], cwd=work, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return ClineRun(proc.returncode, proc.stdout, proc.stderr, home, newest_log(home), env)
