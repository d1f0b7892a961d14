"""The loop guard for the Claude Agent SDK (the ``maxrepeat[claude-agent-sdk]`` extra).

``guard = loop_guard(MaxRepeatConfig.preset("live"))`` and then
``async for message in guard.query(prompt=task, options=ClaudeAgentOptions(...))`` in
place of ``claude_agent_sdk.query``: the one wiring point. It adds the guard's in-process
hook callbacks to the options (next to any hooks of your own) and raises
`LoopStoppedError` when the guard stopped the run. Each ``guard.query`` starts clean.

Claude Code calls the callbacks:

* ``PreToolUse`` for each tool call, before it runs. The calls of one model response
  (one step) reach the guard one at a time; each is judged with the calls of its step
  before it. A call the policy would refuse is denied (``permissionDecision: "deny"``):
  the model gets the refusal as the call's result, the tool does not run. At the stop
  level the call is denied and the run ends (``continue: false``); ``guard.query`` then
  raises `LoopStoppedError` carrying the results.
* ``PostToolBatch`` once the calls of a step have their results, before the next model
  request: the results are fed and the step ends; at the warning level the message goes
  to the model as the batch's ``additionalContext``. In ``observation`` mode (a result is
  not known before the call) blocking and stopping happen here too.

Calls of sub-agents (hooks with an ``agent_id``) are not watched. `trajectory_from_messages`
converts the messages ``guard.query`` yielded (``guard.messages``) for ``maxrepeat.grade``.
``claude_agent_sdk`` is imported only when a guard is made.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from ...core.errors import MissingExtraError
from ...core.events import Trajectory, tool_call, tool_result, turn_end, turn_start
from .._live import (
    FrameworkClasses,
    Graders,
    LoopStopped,
    ResultsOfRun,
    StepGuard,
    ToolCall,
    load_graders,
)
from ..policy import Action, Decision, Escalation, Policy

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class"]

_EXTRA = "claude-agent-sdk"
FORMAT = "claude-agent-sdk"
SOURCE = "<claude-agent-sdk messages>"
#: how Claude Code prefixes a ``PreToolUse`` deny reason in the call's result
_DENIED = "PreToolUse:{} hook error: "


def _content(value: Any) -> Any:
    """A tool result as one value: text blocks joined, anything else as it is."""
    if isinstance(value, list) and value and all(
            isinstance(b, dict) and b.get("type") == "text" for b in value):
        return "\n".join(str(b.get("text", "")) for b in value)
    return value


def _result(name: str, value: Any) -> Any:
    """The result the guard judges: a refusal's text without Claude Code's prefix."""
    value = _content(value)
    prefix = _DENIED.format(name)
    if isinstance(value, str) and value.startswith(prefix):
        return value[len(prefix):]
    return value


def _blocks(message: Any) -> list[Any]:
    content = getattr(message, "content", None)
    return content if isinstance(content, list) else []


def _events(messages: Sequence[Any]) -> list[Any]:
    events: list[Any] = []
    names: dict[str, str] = {}
    step: Any = None  # the message id of the open step
    for message in messages:
        if getattr(message, "parent_tool_use_id", None) is not None:
            continue  # a sub-agent's message
        for block in _blocks(message):
            kind = type(block).__name__
            if kind == "ToolUseBlock":
                mid = getattr(message, "message_id", None) or id(message)
                if mid != step:
                    events += [turn_end()] if step is not None else []
                    events.append(turn_start())
                    step = mid
                names[block.id] = block.name
                events.append(tool_call(block.name, block.id, block.input))
            elif kind == "ToolResultBlock" and block.tool_use_id in names:
                events.append(tool_result(block.tool_use_id,
                                          _result(names[block.tool_use_id], block.content),
                                          not block.is_error))
    return [*events, turn_end()] if step is not None else events


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from the messages of a Claude Agent SDK run (``guard.messages``, or
    those ``claude_agent_sdk.query`` yields): the ``ToolUseBlock`` values of one model
    response (one ``message_id``) are one turn; the ``ToolResultBlock`` values answering
    them are the results (a refusal's as the guard wrote it)."""
    return Trajectory(events=tuple(_events(messages)), id=id, source=SOURCE, format=FORMAT)


class _Run:
    """One run's state: the step guard, the open step's calls and the stop."""

    def __init__(self, graders: Sequence[Any], policy: Policy | None) -> None:
        self.guard = StepGuard(graders, policy=policy, format=FORMAT, source=SOURCE)
        ahead = [m for m in self.guard.monitors if not m.config.observes]
        self.ahead = Escalation(ahead, self.guard.policy) if ahead else None
        self.open: list[str] = []
        self.refused: set[str] = set()
        self.stopped: Decision | None = None

    def _judge(self, call: ToolCall) -> Decision:
        """The decision if ``call`` joined the open step (or began one) and it ended."""
        if not self.open:
            return self.guard.start([call])
        ahead = Decision(Action.NONE, None, ())
        if self.ahead is not None:
            ahead = self.ahead.would_exceed([tool_call(call.name, call.id, call.arguments),
                                             turn_end()])
        for m in self.guard.monitors:
            m.feed(tool_call(call.name, call.id, call.arguments))
        return ahead

    def pre(self, data: dict[str, Any]) -> dict[str, Any]:
        call = ToolCall(str(data["tool_use_id"]), str(data["tool_name"]),
                        data.get("tool_input"))
        ahead = self._judge(call)
        self.open.append(str(call.id))
        if self.stopped is None and ahead.action < Action.BLOCK:
            return {}
        if self.stopped is None and ahead.action >= Action.STOP:
            self.stopped = self.guard.stop(ahead)
        decision = self.stopped or ahead
        text = self.guard.refusal(decision)
        self.guard.answer(call.id, text, success=False)
        self.refused.add(str(call.id))
        out: dict[str, Any] = {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": text}}
        if self.stopped is not None:
            out.update(continue_=False, stopReason=text)
        return out

    def batch(self, data: dict[str, Any]) -> dict[str, Any]:
        for call in data.get("tool_calls") or []:
            cid = str(call.get("tool_use_id"))
            if cid in self.open and cid not in self.refused:
                self.guard.answer(cid, _result(str(call.get("tool_name")),
                                               call.get("tool_response")))
        self.open, self.refused = [], set()
        decision = self.guard.finish()
        if self.stopped is not None or decision.action >= Action.STOP:
            self.stopped = self.stopped or self.guard.stop(decision)
            return {"continue_": False, "stopReason": self.guard.refusal(self.stopped)}
        if decision.action >= Action.WARN and decision.message:
            return {"hookSpecificOutput": {"hookEventName": "PostToolBatch",
                                           "additionalContext": decision.message}}
        return {}


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:  # through importlib: typed the same with or without the extra installed
        sdk = importlib.import_module("claude_agent_sdk")
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "claude_agent_sdk") from exc
    sdk_error: Any = sdk.ClaudeSDKError

    class LoopStoppedError(sdk_error, LoopStopped):  # type: ignore[misc]
        """Raised out of ``guard.query`` when the loop goes on up to ``stop_at``."""

        def __init__(self, decision: Any) -> None:
            LoopStopped.__init__(self, decision)

    class MaxRepeatGuard(ResultsOfRun):
        """Warns, refuses and stops a Claude Agent SDK run that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.run = _Run(self.graders, policy)
            self.messages: list[Any] = []

        async def _pre(self, data: Any, tool_use_id: Any, context: Any) -> Any:
            if data.get("agent_id") is not None:
                return {}
            return self.run.pre(data)

        async def _batch(self, data: Any, tool_use_id: Any, context: Any) -> Any:
            if data.get("agent_id") is not None:
                return {}
            return self.run.batch(data)

        def _options(self, options: Any = None) -> Any:
            """``options`` (a ``ClaudeAgentOptions``) with the guard's hooks added."""
            base = options if options is not None else sdk.ClaudeAgentOptions()
            hooks: dict[Any, list[Any]] = {k: list(v) for k, v in (base.hooks or {}).items()}
            hooks.setdefault("PreToolUse", []).append(sdk.HookMatcher(hooks=[self._pre]))
            hooks.setdefault("PostToolBatch", []).append(sdk.HookMatcher(hooks=[self._batch]))
            return dataclasses.replace(base, hooks=hooks)

        async def query(self, *, prompt: Any, options: Any = None,
                        **kwargs: Any) -> AsyncIterator[Any]:
            """``claude_agent_sdk.query`` with the guard: yields the run's messages (kept
            in ``messages``) and raises `LoopStoppedError` when the guard stopped it."""
            self.run = _Run(self.graders, self.policy)
            self.messages = []
            run = self.run
            async for message in sdk.query(prompt=prompt, options=self._options(options),
                                           **kwargs):
                self.messages.append(message)
                yield message
            if run.stopped is not None:
                raise LoopStoppedError(run.stopped)

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The ``ClaudeSDKError`` and `LoopStopped` that ``guard.query`` raises to stop a run."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """A loop guard for Claude Agent SDK runs.

    Needs ``claude_agent_sdk`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig(max=3))).__name__
    'MaxRepeatGuard'

    In a run: ``async for message in guard.query(prompt=task, options=options)``.
    """
    return _CLASSES.loop_guard(graders, policy)
