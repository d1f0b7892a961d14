"""The loop guard as LangChain agent middleware (the ``maxrepeat[langchain]`` extra).

``create_agent(model, tools, middleware=[loop_guard(MaxRepeatConfig(max=3))])`` guards a
LangChain v1 agent (a LangGraph graph). The middleware's hooks see every step:

* ``after_model``: the model asked for tool calls (one step, however many calls). When the
  policy says the step would be refused, the calls get the refusal as their
  ``ToolMessage`` (status ``error``) and do not run; when it says stop,
  `LoopStoppedError` is raised before they run.
* ``before_model``: the step's ``ToolMessage`` results are in; when the loop is at the
  warning level, a ``HumanMessage`` naming the repeated action (or cycle) and its count is
  added to the conversation, so the model reads it on this call and every later one.

Runs are told apart by their LangGraph thread and the first message of the conversation,
so one middleware serves many threads. `trajectory_from_messages` converts a conversation the same
way, for ``maxrepeat.grade`` afterwards. ``langchain`` is imported only when a guard is made.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ...core.errors import MissingExtraError
from ...core.events import Trajectory
from .._live import FrameworkClasses, Graders, LoopStopped, StepGuard, ToolCall, load_graders
from ..policy import Action, Decision, Policy
from ._records import turn_events

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware

__all__ = ["loop_guard", "LoopStoppedError", "trajectory_from_messages"]

_EXTRA = "langchain"
FORMAT = "langchain"
#: conversations whose guard state is kept (the least recently active one is dropped)
KEPT_RUNS = 1024
SOURCE = "<langchain messages>"


class LoopStoppedError(LoopStopped):
    """Raised out of ``agent.invoke`` when the loop goes on up to the policy's
    ``stop_at``; ``results`` are the graders' results for the run so far."""


def _kind(message: Any) -> str:
    kind = getattr(message, "type", None)
    if isinstance(message, dict):
        kind = message.get("type") or message.get("role")
    return {"assistant": "ai", "user": "human"}.get(str(kind), str(kind))


def _get(message: Any, key: str, default: Any = None) -> Any:
    if isinstance(message, dict):
        return message.get(key, default)
    return getattr(message, key, default)


def _calls(message: Any) -> list[ToolCall]:
    return [ToolCall(c.get("id"), c["name"], c.get("args", {}))
            for c in _get(message, "tool_calls") or ()]


def _returns(message: Any) -> list[tuple[str, Any, bool]]:
    if _kind(message) != "tool":
        return []
    return [(_get(message, "tool_call_id"), _get(message, "content"),
             _get(message, "status") != "error")]


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from a LangChain conversation (message objects or their dicts):
    each ``AIMessage`` with tool calls is one turn, the ``ToolMessage`` values answering
    them (by ``tool_call_id``) are the results, ``status="error"`` a failure.

    >>> from maxrepeat import grade, MaxRepeatConfig
    >>> msgs = [{"type": "human", "content": "hi"}]
    >>> for i in range(3):
    ...     msgs.append({"type": "ai", "content": "", "tool_calls": [
    ...         {"id": f"c{i}", "name": "ls", "args": {}}]})
    ...     msgs.append({"type": "tool", "tool_call_id": f"c{i}", "content": "a.txt"})
    >>> grade(trajectory_from_messages(msgs), MaxRepeatConfig(max=2)).metadata.occurrences
    3
    """
    events = turn_events(messages, lambda m: _calls(m) if _kind(m) == "ai" else None,
                         _returns)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


class _Run:
    """One conversation's guard and how far its messages were read."""

    def __init__(self, guard: StepGuard) -> None:
        self.guard = guard
        self.seen = 0
        self.refused: set[str] = set()
        self.lock = threading.Lock()


class _Guard:
    """The hooks' logic, free of LangChain types (the middleware class delegates here)."""

    def __init__(self, graders: Graders, policy: Policy | None) -> None:
        self.graders = load_graders(graders)  # a config file is read once
        self.policy = policy
        StepGuard(graders, policy=policy)  # checks the graders and policy now
        self.runs: OrderedDict[str, _Run] = OrderedDict()
        self.lock = threading.Lock()

    def run(self, messages: Sequence[Any], thread: str = "") -> _Run:
        first = messages[0] if messages else None
        key = f"{thread}\x00{_get(first, 'id') or id(first)}"
        with self.lock:
            run = self.runs.get(key)
            if run is None or run.seen > len(messages):
                run = self.runs[key] = _Run(StepGuard(self.graders, policy=self.policy,
                                                      format=FORMAT, source=SOURCE))
                if len(self.runs) > KEPT_RUNS:  # a long-lived agent: forget the oldest
                    self.runs.popitem(last=False)
            self.runs.move_to_end(key)
            return run

    def catch_up(self, run: _Run, messages: Sequence[Any], upto: int) -> None:
        """Feed messages[seen:upto]: results answer the open step, an AI message with
        calls (one this guard did not see asked) opens the next."""
        for message in messages[run.seen:upto]:
            kind = _kind(message)
            if kind == "tool":
                cid = _get(message, "tool_call_id")
                if cid in run.refused:
                    run.refused.discard(cid)
                    continue
                run.guard.answer(cid, _get(message, "content"),
                                 success=_get(message, "status") != "error")
            elif kind == "ai":
                run.guard.finish()
                calls = _calls(message)
                if calls:
                    run.guard.start(calls)
        run.seen = max(run.seen, upto)

    def before_model(self, messages: Sequence[Any], thread: str = "") -> str | None:
        """The message to add before this model call, if any."""
        run = self.run(messages, thread)
        with run.lock:
            was_refused = bool(run.refused)
            self.catch_up(run, messages, len(messages))
            decision = run.guard.finish()
            self._stop_if(run, decision)
            if decision.action >= Action.WARN and not was_refused:
                return decision.message
            return None

    def after_model(self, messages: Sequence[Any],
                    thread: str = "") -> tuple[list[ToolCall], str] | None:
        """The calls to refuse and the refusal text, or None to run them."""
        if not messages or _kind(messages[-1]) != "ai":
            return None
        run = self.run(messages, thread)
        with run.lock:
            self.catch_up(run, messages, len(messages) - 1)
            run.guard.finish()
            calls = _calls(messages[-1])
            run.seen = len(messages)
            if not calls:
                return None
            ahead = run.guard.start(calls)
            if ahead.action >= Action.STOP:
                raise LoopStoppedError(run.guard.stop(ahead))
            if ahead.action >= Action.BLOCK:
                text = run.guard.refuse(ahead)
                run.refused.update(c.id for c in calls if c.id is not None)
                return calls, text
            return None

    def _stop_if(self, run: _Run, decision: Decision) -> None:
        if decision.action >= Action.STOP:
            raise LoopStoppedError(run.guard.stop(decision))


def _thread() -> str:
    """The LangGraph thread of the running graph ("" without a checkpointer's thread)."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("configurable", {}).get("thread_id") or "")
    except (ImportError, RuntimeError):
        return ""


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from langchain.agents.middleware import AgentMiddleware
        from langchain_core.messages import HumanMessage, ToolMessage
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "langchain") from exc

    class MaxRepeatMiddleware(AgentMiddleware):  # type: ignore[misc]
        """Warns, refuses and stops a LangChain agent that repeats itself."""

        def __init__(self, logic: _Guard) -> None:
            super().__init__()
            self.logic = logic

        def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            text = self.logic.before_model(state["messages"], _thread())
            if text is None:
                return None
            return {"messages": [HumanMessage(content=text)]}

        async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return self.before_model(state, runtime)

        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            refused = self.logic.after_model(state["messages"], _thread())
            if refused is None:
                return None
            calls, text = refused
            return {"messages": [ToolMessage(content=text, tool_call_id=c.id, name=c.name,
                                             status="error") for c in calls]}

        async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return self.after_model(state, runtime)

    return MaxRepeatMiddleware, LoopStoppedError  # (a plain class: no framework base)


_CLASSES: Final = FrameworkClasses(_build)


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> AgentMiddleware:
    """LangChain agent middleware guarding against loops.

    ``graders``: a `MaxRepeatConfig`, several, or a YAML config file path. ``policy``:
    when to warn, refuse and stop (default `Policy()`: 1, 2 and 3 occurrences above
    ``max``). Raises `MissingExtraError` without ``langchain``.

    >>> from maxrepeat import MaxRepeatConfig
    >>> guard = loop_guard(MaxRepeatConfig(max=3, match="name-args"))
    >>> type(guard).__name__
    'MaxRepeatMiddleware'

    In an agent: ``create_agent(model, tools, middleware=[guard])``.
    """
    middleware: AgentMiddleware = _CLASSES.guard(_Guard(graders, policy))
    return middleware
