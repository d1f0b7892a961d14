"""Drive the real Cline CLI (npm ``cline``, 3.x) against a scripted model.

`ChatModel` is an HTTP server on 127.0.0.1 (a free port) speaking the OpenAI Chat
Completions API, streamed (``POST .../chat/completions`` with server-sent events), the
wire API of Cline's ``openai-compatible`` provider. It plays a fixed list of turns
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
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .agent_harness import NPM_BIN, Turn

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
class ChatModel:
    """The scripted Chat Completions server (see the module docstring). A turn whose
    ``arguments`` hold ``"parallel"`` (a list of turns) answers with those calls at once."""

    turns: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: int = 0
    port: int = 0

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream of one completion: a role chunk, the content or the calls, the end."""
        i = self.served
        turn = self.turns[i] if i < len(self.turns) else SUBMIT
        self.served += 1
        base = {"id": f"chatcmpl-{i}", "object": "chat.completion.chunk", "created": 1,
                "model": body.get("model", "scripted")}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": ""})]
        if turn.name is None:
            out += [chunk({"content": turn.text or ""}), chunk({}, "stop")]
        else:
            calls = (turn.arguments or {}).get("parallel") or [turn]
            for k, call in enumerate(calls):
                out.append(chunk({"tool_calls": [{
                    "index": k, "id": f"call_{i}_{k}", "type": "function",
                    "function": {"name": call.name,
                                 "arguments": json.dumps(call.arguments or {})}}]}))
            out.append(chunk({}, "tool_calls"))
        out.append({**base, "choices": [], "usage": {"prompt_tokens": 10,
                                                      "completion_tokens": 5,
                                                      "total_tokens": 15}})
        return out

    @contextmanager
    def serving(self) -> Iterator[ChatModel]:
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

            def do_GET(self) -> None:  # the model list
                self._send(json.dumps({"object": "list", "data": [
                    {"id": "scripted", "object": "model", "owned_by": "me"}]}).encode(),
                    "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self.send_error(404)
                with lock:
                    model.requests.append({"path": self.path, "body": body})
                    events = model.chunks(body)
                data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
                self._send(data + b"data: [DONE]\n\n", "text/event-stream")

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


@dataclass
class ClineRun:
    """What one run left: exit code, output, its HOME and its session's message log."""

    returncode: int
    stdout: str
    stderr: str
    home: Path
    log: Path | None
    env: dict[str, str] = field(default_factory=dict)


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
