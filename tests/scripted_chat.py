"""A scripted model speaking the OpenAI Chat Completions API, streamed, on 127.0.0.1.

OpenCode talks to a custom provider through ``@ai-sdk/openai-compatible`` (``provider`` in
``opencode.json`` with ``options.baseURL``), which posts ``/chat/completions`` with
``stream: true`` and reads server-sent ``chat.completion.chunk`` events. `ChatModel` plays
a fixed list of steps whatever the agent sends: a step is a list of tool calls (several:
parallel calls in one response) or a text. Requests that are not the agent's turn (a
session title, asked with no tools) get a short text and do not use up a step. Every
request body of a turn is kept (``requests``) so a test can check what the model was sent.

The server itself is `ScriptedServer`, which every scripted model of the tests serves
through (the agent harnesses' Chat Completions, Responses and Gemini models, and
`tests/scripted_anthropic.py`'s Messages API): a model says what a GET and a POST are
answered with, the server does the HTTP on 127.0.0.1. The
streams are built by `chat_stream` (Chat Completions chunks), `responses_stream` (the
Responses API's event envelope) and `sse` (server-sent events).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, TypeVar

__all__ = ["Answer", "ChatModel", "ScriptedServer", "Step", "Streamed", "chat_stream",
           "responses_stream", "sse"]

#: one step: tool calls as (name, arguments) pairs, or a final text
Step = list[tuple[str, dict[str, Any]]] | str
#: an HTTP answer: status, body, content type
Answer = tuple[int, bytes, str]
#: an answer written part by part as the parts come (each flushed; the connection then
#: closes): status, parts, content type
Streamed = tuple[int, Iterator[bytes], str]
_S = TypeVar("_S", bound="ScriptedServer")


def sse(events: list[dict[str, Any]], named: bool = False, done: bool = False) -> bytes:
    """Server-sent events, one per dict (``event:`` lines from ``type`` when ``named``,
    a closing ``data: [DONE]`` when ``done``)."""
    out = [(f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n"
           for e in events]
    return "".join(out).encode() + (b"data: [DONE]\n\n" if done else b"")


def _chunk(i: int, delta: dict[str, Any], finish: str | None = None,
           model: str = "scripted") -> dict[str, Any]:
    return {"id": f"chatcmpl-{i}", "object": "chat.completion.chunk", "created": 1,
            "model": model, "choices": [{"index": 0, "delta": delta,
                                         "finish_reason": finish}]}


def chat_stream(i: int, step: Step, model: str = "scripted",
                split: bool = False) -> list[dict[str, Any]]:
    """The Chat Completions chunks of answer ``i``: a role chunk, the text or the tool
    calls, the finish, the usage. ``split``: the role chunk's content is empty and the
    text comes in a chunk of its own (otherwise the text rides in the role chunk)."""
    text = step if isinstance(step, str) else None
    out = [_chunk(i, {"role": "assistant",
                      "content": "" if split else text}, model=model)]
    if text is not None and split:
        out.append(_chunk(i, {"content": text}, model=model))
    for k, (name, args) in enumerate([] if isinstance(step, str) else step):
        out.append(_chunk(i, {"tool_calls": [{
            "index": k, "id": f"call_{i}_{k}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}]}, model=model))
    out.append(_chunk(i, {}, "stop" if text is not None else "tool_calls", model=model))
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return [*out, {"id": f"chatcmpl-{i}", "object": "chat.completion.chunk", "created": 1,
                   "model": model, "choices": [], "usage": usage}]


def responses_stream(i: int, model: str, items: list[dict[str, Any]],
                     middle: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A Responses API stream of response ``i``: ``response.created``, the ``middle``
    events (the output items'), ``response.completed`` with ``items`` as its output, each
    event numbered (``sequence_number``)."""
    base = {"id": f"resp_{i}", "object": "response", "created_at": 1,
            "status": "in_progress", "model": model, "output": [], "usage": None}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    out = [{"type": "response.created", "response": dict(base)}, *middle,
           {"type": "response.completed",
            "response": dict(base, status="completed", output=items, usage=usage)}]
    for n, event in enumerate(out):
        event["sequence_number"] = n
    return out


@dataclass(kw_only=True)
class ScriptedServer:
    """An HTTP server on 127.0.0.1 (a free port, in ``port``) for a scripted model: a
    GET is answered with `get_body` (JSON, status ``get_status``), a HEAD with
    ``head_status``, a POST with `answer` (called under a lock; a bare status code: that
    error; `Streamed` parts are written after the lock is let go). A model keeps the
    request bodies of its turns (``requests``) and counts its answers (``served``)."""

    get_status: ClassVar[int] = 200
    head_status: ClassVar[int] = 501  # (http.server's own answer to a HEAD)
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: int = 0
    port: int = 0

    def get_body(self) -> bytes:
        """What a GET (a model list) is answered with."""
        return b'{"object": "list", "data": []}'

    def answer(self, path: str, raw: bytes) -> Answer | Streamed | int:
        """The answer to a POST of ``raw`` to ``path`` (a status code: that error)."""
        raise NotImplementedError

    @contextmanager
    def serving(self: _S) -> Iterator[_S]:
        """Serve on 127.0.0.1 (a free port, in ``port``) for the ``with`` block."""
        model = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, data: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(model.get_status, model.get_body(), "application/json")

            def do_HEAD(self) -> None:
                self._send(model.head_status, b"", "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with lock:
                    answer = model.answer(self.path, raw)
                if isinstance(answer, int):
                    return self.send_error(answer)
                code, body, ctype = answer
                if isinstance(body, bytes):
                    return self._send(code, body, ctype)
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("connection", "close")
                self.end_headers()
                for part in body:
                    self.wfile.write(part)
                    self.wfile.flush()
                self.close_connection = True

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
class ChatModel(ScriptedServer):
    """The scripted Chat Completions server (see the module docstring)."""

    steps: list[Step]

    @property
    def url(self) -> str:
        """The base URL a provider is given (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream answering one request (a turn's step, or a side question's text)."""
        if not body.get("tools"):
            return chat_stream(10_000 + len(self.requests), "Scripted session")
        self.requests.append(body)
        i = self.served
        step = self.steps[i] if i < len(self.steps) else "done"
        self.served += 1
        return chat_stream(i, step)

    def get_body(self) -> bytes:  # model lists: one scripted model
        return b'{"object": "list", "data": [{"id": "scripted", "object": "model"}]}'

    def answer(self, path: str, raw: bytes) -> Answer | int:
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404
        try:
            body = json.loads(raw)
        except ValueError:
            return 400
        return 200, sse(self.chunks(body), done=True), "text/event-stream"
