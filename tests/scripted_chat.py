"""A scripted model speaking the OpenAI Chat Completions API, streamed, on 127.0.0.1.

OpenCode talks to a custom provider through ``@ai-sdk/openai-compatible`` (``provider`` in
``opencode.json`` with ``options.baseURL``), which posts ``/chat/completions`` with
``stream: true`` and reads server-sent ``chat.completion.chunk`` events. `ChatModel` plays
a fixed list of steps whatever the agent sends: a step is a list of tool calls (several:
parallel calls in one response) or a text. Requests that are not the agent's turn (a
session title, asked with no tools) get a short text and do not use up a step. Every
request body of a turn is kept (``requests``) so a test can check what the model was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatModel", "Step"]

#: one step: tool calls as (name, arguments) pairs, or a final text
Step = list[tuple[str, dict[str, Any]]] | str


def _chunk(i: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": f"chatcmpl-{i}", "object": "chat.completion.chunk", "created": 1,
            "model": "scripted", "choices": [{"index": 0, "delta": delta,
                                              "finish_reason": finish}]}


@dataclass
class ChatModel:
    """The scripted Chat Completions server (see the module docstring)."""

    steps: list[Step]
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: int = 0
    port: int = 0

    @property
    def url(self) -> str:
        """The base URL a provider is given (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream answering one request (a turn's step, or a side question's text)."""
        if not body.get("tools"):
            return self._text(10_000 + len(self.requests), "Scripted session")
        self.requests.append(body)
        i = self.served
        step = self.steps[i] if i < len(self.steps) else "done"
        self.served += 1
        if isinstance(step, str):
            return self._text(i, step)
        out = [_chunk(i, {"role": "assistant", "content": None})]
        for k, (name, args) in enumerate(step):
            out.append(_chunk(i, {"tool_calls": [{
                "index": k, "id": f"call_{i}_{k}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]}))
        return [*out, _chunk(i, {}, "tool_calls"), self._usage(i)]

    def _text(self, i: int, text: str) -> list[dict[str, Any]]:
        return [_chunk(i, {"role": "assistant", "content": text}), _chunk(i, {}, "stop"),
                self._usage(i)]

    @staticmethod
    def _usage(i: int) -> dict[str, Any]:
        return {"id": f"chatcmpl-{i}", "object": "chat.completion.chunk", "created": 1,
                "model": "scripted", "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

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

            def do_GET(self) -> None:  # model lists: one scripted model
                self._send(b'{"object": "list", "data": [{"id": "scripted", '
                           b'"object": "model"}]}', "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self.send_error(404)
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self.send_error(400)
                with lock:
                    chunks = model.chunks(body)
                data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
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
