"""A scripted Anthropic Messages API server on 127.0.0.1, for driving real agent CLIs.

The "model" follows a script: answer k (k = how many assistant messages the request's
conversation already holds) is the k-th entry, a list of tool calls ``(name, input)`` made
in one response (parallel calls) or a final text. Requests without tools (titles,
summaries) get a short text. Every request body is kept in ``requests`` so a test can
check what the agent sent the model (for example the guard's message).

Streaming (server-sent events) and plain JSON answers are both spoken, as the agent asks.
``pause`` holds a streamed response open that many seconds after its last content block,
as a slow network or a long answer would: Claude Code runs a tool as soon as its block
has streamed but writes the response to its transcript once it has ended, so its hooks
then run before the transcript holds their call.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = list[tuple[str, dict[str, Any]]] | str


class ScriptedModel:
    """``with ScriptedModel(script) as model:`` serves on ``model.url`` until the block ends."""

    def __init__(self, script: Sequence[Step], tool: str = "Bash", pause: float = 0.0) -> None:
        self.script = list(script)
        self.pause = pause
        self.tool = tool
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count()
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(404, b"{}")

            def do_HEAD(self) -> None:
                self._send(404, b"")

            def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(size) or b"{}")
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._send(200, b'{"input_tokens": 10}')
                    return
                with model._lock:
                    model.requests.append(body)
                    blocks, stop = model._answer(body)
                    mid = f"msg_{next(model._ids):04d}"
                message = {"id": mid, "type": "message", "role": "assistant",
                           "model": body.get("model", "scripted"), "content": [],
                           "stop_reason": None, "stop_sequence": None,
                           "usage": {"input_tokens": 5, "output_tokens": 1}}
                if not body.get("stream"):
                    message.update(content=blocks, stop_reason=stop)
                    self._send(200, json.dumps(message).encode())
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self._event("message_start", {"type": "message_start", "message": message})
                for i, b in enumerate(blocks):
                    if b["type"] == "text":
                        start = {"type": "text", "text": ""}
                        delta = {"type": "text_delta", "text": b["text"]}
                    else:
                        start = {**b, "input": {}}
                        delta = {"type": "input_json_delta",
                                 "partial_json": json.dumps(b["input"])}
                    self._event("content_block_start", {"type": "content_block_start",
                                                        "index": i, "content_block": start})
                    self._event("content_block_delta", {"type": "content_block_delta",
                                                        "index": i, "delta": delta})
                    self._event("content_block_stop", {"type": "content_block_stop",
                                                       "index": i})
                if model.pause and stop == "tool_use":
                    self.wfile.flush()
                    time.sleep(model.pause)
                self._event("message_delta", {"type": "message_delta",
                                              "delta": {"stop_reason": stop,
                                                        "stop_sequence": None},
                                              "usage": {"output_tokens": 3}})
                self._event("message_stop", {"type": "message_stop"})
                self.wfile.flush()
                self.close_connection = True

            def _event(self, name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        tools = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
        if self.tool not in tools:
            return [{"type": "text", "text": "ok"}], "end_turn"
        k = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        step: Step = self.script[k] if k < len(self.script) else "done"
        if isinstance(step, str):
            return [{"type": "text", "text": step}], "end_turn"
        return [{"type": "tool_use", "id": f"toolu_{next(self._ids):04d}", "name": name,
                 "input": args} for name, args in step], "tool_use"

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The requests of the scripted conversation (those that offered the tool)."""
        return [r for r in self.requests
                if any(isinstance(t, dict) and t.get("name") == self.tool
                       for t in r.get("tools", []))]

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
