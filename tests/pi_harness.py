"""Drive the real Pi coding agent (``pi -p``) against a scripted model.

`ChatModel` is an HTTP server on 127.0.0.1 (a free port, `scripted_chat.ScriptedServer`)
speaking the OpenAI Chat Completions API, streamed (``POST .../chat/completions``,
server-sent events), which Pi talks to through a custom provider of ``models.json``
(``"api": "openai-completions"``). It plays a fixed script whatever the agent sends:
answer k is the k-th entry, a list of tool calls ``(name, arguments)`` made in one
response (parallel calls) or a final text. Every request body is kept (``requests``) so
that a test can check what the agent sent the model after the guard spoke.

`run_pi` runs ``pi -p`` from ``.npm-agents`` (installed by ``scripts/test.sh``) in a
project folder with a temporary HOME (Pi's agent folder ``HOME/.pi/agent``), the provider
pointed at the server, startup network operations off (``PI_OFFLINE``), and returns where
Pi wrote its session log.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .scripted_chat import Answer, ScriptedServer, Step, chat_stream, sse

ROOT = Path(__file__).resolve().parent.parent
PI = Path(os.environ.get("MAXREPEAT_NPM_AGENTS", ROOT / ".npm-agents")) / "node_modules" \
    / ".bin" / "pi"


def bash(*commands: str) -> list[Step]:
    """A script running each command with Pi's ``bash`` tool, one response each."""
    return [[("bash", {"command": c})] for c in commands]


@dataclass
class ChatModel(ScriptedServer):
    """The scripted Chat Completions server (see the module docstring)."""

    script: list[Step]

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The streamed chunks of the next scripted answer."""
        i = self.served
        step: Step = self.script[i] if i < len(self.script) else "done"
        self.served += 1
        return chat_stream(i, step, body.get("model", "scripted"), split=True)

    def answer(self, path: str, raw: bytes) -> Answer | int:
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, b"{}", "application/json"
        body = json.loads(raw)
        self.requests.append(body)
        return 200, sse(self.chunks(body), done=True), "text/event-stream"


@dataclass
class PiRun:
    """What one ``pi -p`` run left: exit code, output, and Pi's session log."""

    returncode: int
    stdout: str
    stderr: str
    log: Path | None


def pi_env(home: Path, bindir: Path | None = None) -> dict[str, str]:
    """The environment Pi runs in: ``home`` as HOME, no network at startup (``PI_OFFLINE``:
    no update check, no install telemetry), ``bindir`` (the ``maxrepeat`` command's) first
    on PATH."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    path = keep.get("PATH", "/usr/bin:/bin")
    if bindir is not None:
        path = f"{bindir}{os.pathsep}{path}"
    return {**keep, "PATH": path, "HOME": str(home), "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "NO_COLOR": "1",
            "TERM": "dumb", "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config")}


def configure(home: Path, port: int) -> None:
    """Pi's provider ``scripted`` (model ``scripted-1``) at the server, in
    ``HOME/.pi/agent/models.json``, chosen as the default in its ``settings.json``."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"scripted": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions",
        "apiKey": "scripted", "compat": {"supportsDeveloperRole": False,
                                         "supportsReasoningEffort": False},
        "models": [{"id": "scripted-1", "reasoning": False}]}}}
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "scripted", "defaultModel": "scripted-1",
                "enableInstallTelemetry": False}
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def sessions(home: Path) -> list[Path]:
    """Pi's session logs under ``HOME/.pi/agent/sessions``, oldest first."""
    return sorted((home / ".pi" / "agent" / "sessions").glob("*/*.jsonl"),
                  key=lambda p: p.stat().st_mtime)


def run_pi(model: ChatModel, home: Path, work: Path, prompt: str = "fix the build",
           env: dict[str, str] | None = None, timeout: float = 90) -> PiRun:
    """``pi -p PROMPT`` in ``work`` against ``model`` (configured by `configure`)."""
    configure(home, model.port)
    before = set(sessions(home))
    proc = subprocess.run([str(PI), "-p", prompt], cwd=work, env=env or pi_env(home),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    new = [p for p in sessions(home) if p not in before]
    return PiRun(proc.returncode, proc.stdout, proc.stderr, new[-1] if new else None)
