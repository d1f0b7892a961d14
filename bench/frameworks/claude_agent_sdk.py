"""The Claude Agent SDK: ``guard.query`` through the SDK's own control protocol, with a
scripted ``Transport`` playing the Claude Code CLI's side of it.

Why not the CLI: the real agent loop is the Claude Code binary (a Node process) talking
to a model server, one HTTP round trip and a few control messages a call, its context
re-sent each request; 10,000 calls of it would take hours here and measure Node, not
the guard. The guard lives in the SDK, and the SDK calls it only through the control
protocol, so this drives that surface whole: ``claude_agent_sdk.query(transport=...)``
(the SDK's documented custom-transport hook) runs the SDK's real ``Query``, which sends
``initialize`` with the guard's hook callback ids and answers each ``hook_callback``
request by calling the guard, as it does for the CLI. The scripted CLI, for each call:
the assistant message with the ``tool_use`` block, the ``PreToolUse`` hook (a deny
would fail the run), the tool, the user message with the ``tool_result``, the
``PostToolBatch`` hook; then the final text and the ``result`` message. Without a
config the same messages flow with no hooks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from . import Driver, Session, register


def _transport(session: Session, edit: Any) -> Any:
    import anyio
    from claude_agent_sdk import Transport

    class ScriptedCLI(Transport):  # type: ignore[misc]
        """The CLI's side of the control protocol, scripted."""

        def __init__(self) -> None:
            self.send, self.inbox = anyio.create_memory_object_stream[dict[str, Any]](100)
            self.hooks: dict[str, list[str]] = {}
            self.waiting: dict[str, Any] = {}
            self.answers: dict[str, Any] = {}
            self.count = 0
            self.playing: Any = None

        async def connect(self) -> None:
            pass

        def is_ready(self) -> bool:
            return True

        async def end_input(self) -> None:
            pass

        async def close(self) -> None:
            self.send.close()

        async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
            async with self.inbox:
                async for message in self.inbox:
                    yield message

        async def write(self, data: str) -> None:
            for line in data.splitlines():
                message = json.loads(line)
                if message["type"] == "control_request":  # initialize: the hook ids
                    for event, matchers in (message["request"].get("hooks") or {}).items():
                        self.hooks[event] = [i for m in matchers for i in m["hookCallbackIds"]]
                    await self.send.send({"type": "control_response", "response": {
                        "subtype": "success", "request_id": message["request_id"],
                        "response": {}}})
                elif message["type"] == "control_response":
                    rid = message["response"]["request_id"]
                    self.answers[rid] = message["response"].get("response") or {}
                    self.waiting.pop(rid).set()
                elif message["type"] == "user":  # the prompt: the run begins
                    self.playing = asyncio.get_running_loop().create_task(self.play())

        async def hook(self, event: str, data: dict[str, Any], tool_use_id: Any) -> Any:
            out: dict[str, Any] = {}
            for cid in self.hooks.get(event, []):
                self.count += 1
                rid = f"h{self.count}"
                self.waiting[rid] = anyio.Event()
                await self.send.send({"type": "control_request", "request_id": rid,
                                      "request": {"subtype": "hook_callback", "callback_id": cid,
                                                  "input": {"hook_event_name": event,
                                                            "session_id": "s", **data},
                                                  "tool_use_id": tool_use_id}})
                await self.waiting[rid].wait()
                out.update(self.answers.pop(rid))
            return out

        async def say(self, role: str, content: list[dict[str, Any]]) -> None:
            await self.send.send({"type": role, "session_id": "s", "parent_tool_use_id": None,
                                  "message": {"role": role, "model": "scripted",
                                              "content": content}})

        async def play(self) -> None:
            for i, (name, args) in enumerate(session.calls):
                session.step()
                cid = f"c{i}"
                await self.say("assistant", [{"type": "tool_use", "id": cid, "name": name,
                                              "input": args}])
                pre = await self.hook("PreToolUse", {"tool_name": name, "tool_input": args,
                                                     "tool_use_id": cid}, cid)
                if pre.get("hookSpecificOutput", {}).get("permissionDecision") == "deny":
                    raise AssertionError(f"call {i} refused: {pre}")
                text = edit(**args)
                blocks = [{"type": "text", "text": text}]
                await self.say("user", [{"type": "tool_result", "tool_use_id": cid,
                                         "content": blocks}])
                await self.hook("PostToolBatch", {"tool_calls": [{
                    "tool_use_id": cid, "tool_name": name, "tool_input": args,
                    "tool_response": blocks}]}, None)
            session.step()
            await self.say("assistant", [{"type": "text", "text": "done"}])
            await self.send.send({"type": "result", "subtype": "success", "duration_ms": 0,
                                  "duration_api_ms": 0, "is_error": False,
                                  "num_turns": len(session.calls) + 1, "session_id": "s",
                                  "result": "done"})
            await self.send.aclose()

    return ScriptedCLI()


def run(session: Session, config: Any) -> None:
    from claude_agent_sdk import query

    from maxrepeat.guards.frameworks.claude_agent_sdk import loop_guard

    def edit(path: str, text: str) -> str:
        return session.tool(path)

    async def go() -> None:
        transport = _transport(session, edit)
        if config is not None:
            messages = loop_guard(config).query(prompt="go", transport=transport)
        else:
            messages = query(prompt="go", transport=transport)
        async for _ in messages:
            pass
        transport.playing.result()  # the script's own failure, if any

    asyncio.run(go())


def hooks() -> list[tuple[Any, str]]:
    from maxrepeat.guards.frameworks import claude_agent_sdk

    cls = claude_agent_sdk._CLASSES.guard
    return [(cls, "_pre"), (cls, "_batch")]


register(Driver("claude-agent-sdk", "claude_agent_sdk", run, hooks,
                surface="the SDK's control protocol, a scripted CLI transport"))
