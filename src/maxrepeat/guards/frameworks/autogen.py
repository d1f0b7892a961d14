"""The loop guard for AutoGen's ``AssistantAgent`` (the ``maxrepeat[autogen]`` extra).

``agent = guard.agent("dev", model_client=client, tools=[...], max_tool_iterations=20)``
takes the arguments of ``autogen_agentchat.agents.AssistantAgent`` and makes one whose
model client and tools the guard watches: the one wiring point, so no half-wired agent
exists. Each run of an agent (a new task) starts clean; agents of one guard count apart.

* The model client: each response with function calls is one step, judged before the
  calls run. When the policy says the step would be refused, its calls are answered with
  the refusal (an error result) instead of running; when it says stop, they are answered
  with the stop message, and `LoopStoppedError` is raised out of ``agent.run`` before the
  next model request (the stopped step is then in the agent's ``model_context``). Before
  the next model request the step's results are fed; at the warning level the message is
  added to what the model is sent, there and in every later request of the run, after the
  results it follows.
* The tools (``tools=`` or ``workbench=``) sit behind one workbench that answers a
  refused call with the refusal, without running it.

`trajectory_from_messages` converts the agent's record (``model_context`` messages, or the
``ToolCallRequestEvent`` / ``ToolCallExecutionEvent`` of a ``TaskResult``) for
``maxrepeat.grade``. AutoGen is imported only when a guard is made.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Final

from ...core.errors import MissingExtraError
from ...core.events import Trajectory
from .._live import (
    FrameworkClasses,
    Graders,
    LoopStopped,
    ResultsOfRun,
    StepGuard,
    ToolCall,
    load_graders,
)
from ..policy import Action, Decision, Policy
from ._records import json_arguments, turn_events

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class"]

_EXTRA = "autogen"
FORMAT = "autogen"
SOURCE = "<autogen messages>"


def _items(message: Any) -> list[Any]:
    content = getattr(message, "content", None)
    return content if isinstance(content, list) else []


def _calls(message: Any) -> list[ToolCall]:
    """The function calls of a model response (or of a ``ToolCallRequestEvent``)."""
    return [ToolCall(c.id, c.name, json_arguments(c.arguments)) for c in _items(message)
            if hasattr(c, "arguments") and hasattr(c, "id")]


def _results(message: Any) -> list[tuple[str, Any, bool]]:
    """(call id, content, success) of the function results a message holds."""
    return [(r.call_id, r.content, not r.is_error) for r in _items(message)
            if hasattr(r, "call_id") and hasattr(r, "is_error")]


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from an AutoGen run: ``await agent.model_context.get_messages()``
    (each ``AssistantMessage`` with function calls is one turn, the
    ``FunctionExecutionResultMessage`` after it its results) or ``TaskResult.messages``
    (``ToolCallRequestEvent`` / ``ToolCallExecutionEvent``)."""
    # a message without calls (the model's text, a result) leaves the open turn open
    events = turn_events(messages, lambda m: _calls(m) or None, _results)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


class _Run:
    """One run's state: the step guard, what the model client saw, the refusals."""

    def __init__(self, graders: Sequence[Any], policy: Policy | None) -> None:
        self.guard = StepGuard(graders, policy=policy, format=FORMAT, source=SOURCE)
        self.waiting: set[str] = set()  # the open step's calls whose results are unread
        self.refused: dict[str, str] = {}
        self.warnings: list[tuple[int, str]] = []
        self.stopping: Decision | None = None

    def _read(self, messages: Sequence[Any]) -> None:
        """Feed the open step's results: the messages after its calls, read from the end
        back (a trimmed context sends the last messages), each result once, by call id."""
        found: list[tuple[str, Any, bool]] = []
        for message in reversed(messages):
            if not self.waiting or _calls(message):
                break
            new = [r for r in _results(message) if r[0] in self.waiting]
            self.waiting -= {r[0] for r in new}
            found[:0] = new
        self.waiting = set()
        for cid, content, ok in found:
            self.guard.answer(cid, content, success=ok)

    def before_request(self, messages: Sequence[Any]) -> Decision:
        """Feed the results that arrived since the last response; end that step."""
        self._read(messages)
        refused, self.refused = bool(self.refused), {}
        decision = self.guard.finish()
        if decision.action >= Action.STOP:
            self.stopping = self.guard.stop(decision)
        elif decision.action >= Action.WARN and decision.message and not refused:
            self.warnings.append((len(messages), decision.message))
        return decision

    def after_response(self, result: Any) -> None:
        calls = _calls(result)
        if not calls:
            return
        ahead = self.guard.start(calls)
        self.waiting = {str(c.id) for c in calls}
        if ahead.action >= Action.STOP:
            # the calls are answered with the stop message (raising out of a tool call
            # would hang AutoGen's tool loop); the next model request raises
            self.stopping = self.guard.stop(ahead)
        if ahead.action >= Action.BLOCK:
            text = self.guard.refuse(ahead)
            self.refused = {str(c.id): text for c in calls}
            self.waiting = set()


class _Agent:
    """One agent's current run, apart from other agents' (``guard.run``: the latest)."""

    def __init__(self, guard: Any) -> None:
        self.guard, self.run = guard, _Run(guard.graders, guard.policy)

    def restart(self) -> None:  # a new task: the last run, a stop included, is forgotten
        self.run = self.guard.run = _Run(self.guard.graders, self.guard.policy)


def _modules() -> tuple[Any, Any, Any]:
    try:
        agents = importlib.import_module("autogen_agentchat.agents")
        models = importlib.import_module("autogen_core.models")
        tools = importlib.import_module("autogen_core.tools")
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "autogen_agentchat") from exc
    return agents, models, tools


def _build() -> tuple[type[Any], type[LoopStopped]]:
    agents, models, tl = _modules()

    class LoopStoppedError(LoopStopped):
        """Raised out of ``agent.run`` when the loop goes on up to ``stop_at``."""

    client_base: Any = models.ChatCompletionClient
    workbench_base: Any = tl.Workbench

    class GuardedClient(client_base):  # type: ignore[misc]
        """The agent's model client, watched step by step."""

        def __init__(self, guard: Any, inner: Any) -> None:
            self._guard, self._inner = guard, inner

        def _request(self, messages: Sequence[Any]) -> list[Any]:
            if messages and isinstance(messages[-1], models.UserMessage):
                self._guard.restart()  # a new task: a new run
            run = self._guard.run
            if run.stopping is None:
                run.before_request(messages)
            if run.stopping is not None:
                raise LoopStoppedError(run.stopping)
            if not run.warnings:
                return list(messages) if not isinstance(messages, list) else messages
            out = list(messages)
            for where, text in reversed(run.warnings):
                out.insert(where, models.UserMessage(content=text, source="maxrepeat"))
            return out

        async def create(self, messages: Sequence[Any], **kwargs: Any) -> Any:
            result = await self._inner.create(self._request(messages), **kwargs)
            self._guard.run.after_response(result)
            return result

        async def create_stream(self, messages: Sequence[Any],
                                **kwargs: Any) -> AsyncIterator[Any]:
            async for chunk in self._inner.create_stream(self._request(messages), **kwargs):
                if isinstance(chunk, models.CreateResult):
                    self._guard.run.after_response(chunk)
                yield chunk

        async def close(self) -> None:
            await self._inner.close()

        def actual_usage(self) -> Any:
            return self._inner.actual_usage()

        def total_usage(self) -> Any:
            return self._inner.total_usage()

        def count_tokens(self, messages: Sequence[Any], **kwargs: Any) -> int:
            return int(self._inner.count_tokens(messages, **kwargs))

        def remaining_tokens(self, messages: Sequence[Any], **kwargs: Any) -> int:
            return int(self._inner.remaining_tokens(messages, **kwargs))

        @property
        def capabilities(self) -> Any:
            return self._inner.model_info

        @property
        def model_info(self) -> Any:
            return self._inner.model_info

    class GuardedWorkbench(workbench_base):  # type: ignore[misc]
        """The agent's tools behind one workbench that refuses or stops a call."""

        def __init__(self, guard: Any, inner: Sequence[Any]) -> None:
            self._guard, self._inner = guard, list(inner)
            self._where: dict[str, Any] = {}  # tool name: its workbench, as last listed

        async def list_tools(self) -> list[Any]:
            listed = [(t, wb) for wb in self._inner for t in await wb.list_tools()]
            self._where = {t["name"]: wb for t, wb in reversed(listed)}
            return [t for t, _ in listed]

        async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None,
                            cancellation_token: Any = None, call_id: str | None = None) -> Any:
            text = self._guard.run.refused.get(str(call_id))
            if text is not None:
                return tl.ToolResult(name=name, is_error=True,
                                        result=[tl.TextResultContent(content=text)])
            if name not in self._where:
                await self.list_tools()
            wb = self._where.get(name)
            if wb is not None:
                return await wb.call_tool(name, arguments, cancellation_token, call_id)
            return tl.ToolResult(name=name, is_error=True, result=[
                tl.TextResultContent(content=f"Tool {name} not found.")])

        async def start(self) -> None:
            for wb in self._inner:
                await wb.start()

        async def stop(self) -> None:
            for wb in self._inner:
                await wb.stop()

        async def reset(self) -> None:
            for wb in self._inner:
                await wb.reset()

        async def save_state(self) -> Mapping[str, Any]:
            return {"workbenches": [await wb.save_state() for wb in self._inner]}

        async def load_state(self, state: Mapping[str, Any]) -> None:
            for wb, saved in zip(self._inner, state.get("workbenches", []), strict=False):
                await wb.load_state(saved)

    class MaxRepeatGuard(ResultsOfRun):
        """Warns, refuses and stops an AutoGen ``AssistantAgent`` that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.run = _Run(self.graders, policy)

        def agent(self, name: str, model_client: Any, *, tools: Sequence[Any] | None = None,
                  workbench: Any = None, **kwargs: Any) -> Any:
            """An ``AssistantAgent`` (same arguments) whose model client and tools the
            guard watches."""
            benches = list(workbench) if isinstance(workbench, Sequence) else (
                [workbench] if workbench is not None else [])
            if tools:  # as AssistantAgent makes them: a function's docstring describes it
                benches.insert(0, tl.StaticWorkbench([
                    t if isinstance(t, tl.BaseTool) else tl.FunctionTool(
                        t, description=t.__doc__ or "") for t in tools]))
            own = _Agent(self)
            return agents.AssistantAgent(name, GuardedClient(own, model_client),
                                         workbench=GuardedWorkbench(own, benches), **kwargs)

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The `LoopStopped` an AutoGen guard raises out of ``agent.run`` to stop a run."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """A loop guard for AutoGen ``AssistantAgent`` runs.

    Needs ``autogen_agentchat`` (else `MissingExtraError`); ``graders``: configs or a config file.

    In a program: ``agent = guard.agent("dev", model_client=client, tools=[...])``
    (tests/guards/frameworks/test_guard_autogen.py runs it: the extra needs a venv of its own
    here, so no docstring example).
    """
    return _CLASSES.loop_guard(graders, policy)
