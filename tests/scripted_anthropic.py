"""A scripted Anthropic Messages API model on 127.0.0.1, for driving real agent CLIs.

The "model" follows a script: answer k (k = how many assistant messages the request's
conversation already holds) is the k-th entry, a list of tool calls ``(name, input)`` made
in one response (parallel calls) or a final text. Requests without tools (titles,
summaries) get a short text. Every request body is kept in ``requests`` so a test can
check what the agent sent the model (for example the guard's message).

Streaming (server-sent events) and plain JSON answers are both spoken, as the agent asks.
``pause`` holds a streamed response open that many seconds after its last content block,
as a slow network or a long answer would: Claude Code runs a tool as soon as its block
has streamed but writes the response to its transcript once it has ended, so its hooks
then run before the transcript holds their call. ``latency`` waits that many seconds
before a streamed response's first byte, as a real model takes to answer.

The HTTP is `tests/scripted_chat.py`'s `ScriptedServer` (``with model.serving():``); this
module holds the Messages API, and `claude_folders`: the folders and environment of a
Claude Code run against it.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from tests.scripted_chat import Answer, ScriptedServer, Step, Streamed, sse

__all__ = ["ScriptedModel", "Step", "claude_folders"]


def claude_folders(tmp: Path, path: str) -> tuple[Path, Path, Path, dict[str, str]]:
    """A Claude Code run's project, config folder and home in ``tmp`` (made), and its
    environment: ``path`` as ``PATH``, a dummy API key, no telemetry, update, error report
    or other traffic but the model's, caches in ``tmp/cache``. The caller adds
    ``ANTHROPIC_BASE_URL`` (the model's `ScriptedModel.url`)."""
    project, config, home = tmp / "project", tmp / "claude-config", tmp / "home"
    for d in (project, config, home):
        d.mkdir(parents=True, exist_ok=True)
    env = {"PATH": path, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(config),
           "ANTHROPIC_API_KEY": "sk-ant-dummy", "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "XDG_CACHE_HOME": str(tmp / "cache")}
    return project, config, home, env


@dataclass
class ScriptedModel(ScriptedServer):
    """``with ScriptedModel(script).serving() as model:`` serves on ``model.url`` until the
    block ends; ``tool`` is the tool whose offer marks the scripted conversation."""

    get_status: ClassVar[int] = 404
    head_status: ClassVar[int] = 404
    script: list[Step]
    tool: str = "Bash"
    pause: float = 0.0
    latency: float = 0.0
    _ids: Iterator[int] = field(default_factory=itertools.count, init=False, repr=False)

    @property
    def url(self) -> str:
        """The base URL the agent is given (``ANTHROPIC_BASE_URL``)."""
        return f"http://127.0.0.1:{self.port}"

    def get_body(self) -> bytes:
        return b"{}"

    def answer(self, path: str, raw: bytes) -> Answer | Streamed | int:
        body = json.loads(raw or b"{}")
        if not path.startswith("/v1/messages") or "count_tokens" in path:
            return 200, b'{"input_tokens": 10}', "application/json"
        self.requests.append(body)
        blocks, stop = self._blocks(body)
        message = {"id": f"msg_{next(self._ids):04d}", "type": "message",
                   "role": "assistant", "model": body.get("model", "scripted"), "content": [],
                   "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 5, "output_tokens": 1}}
        if not body.get("stream"):
            message.update(content=blocks, stop_reason=stop)
            return 200, json.dumps(message).encode(), "application/json"
        return 200, self._stream(message, blocks, stop), "text/event-stream"

    def _stream(self, message: dict[str, Any], blocks: list[dict[str, Any]],
                stop: str) -> Iterator[bytes]:
        """The streamed message: its content blocks, then (after ``pause`` seconds, for a
        tool call) its end."""
        if self.latency:
            time.sleep(self.latency)  # (before the first byte, as a model's time to answer)
        events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
        for i, b in enumerate(blocks):
            start: dict[str, Any]
            delta: dict[str, Any]
            if b["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": b["text"]}
            else:
                start = {**b, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
            events += [{"type": "content_block_start", "index": i, "content_block": start},
                       {"type": "content_block_delta", "index": i, "delta": delta},
                       {"type": "content_block_stop", "index": i}]
        yield sse(events, named=True)
        if self.pause and stop == "tool_use":
            time.sleep(self.pause)
        yield sse([{"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 3}},
                   {"type": "message_stop"}], named=True)

    def _blocks(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
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
