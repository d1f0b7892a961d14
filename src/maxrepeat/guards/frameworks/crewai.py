"""The loop guard for CrewAI agents (the ``maxrepeat[crewai]`` extra).

CrewAI's execution hooks are process-wide, and so is the guard: making it,
``guard = loop_guard(MaxRepeatConfig.preset("live"))``, is the one wiring point; every
agent run from then on is guarded, until ``guard.remove()``. Each agent invocation (one
task of one agent, the messages its executor starts anew) has its own state, so a crew
kicked off again starts clean whatever ended the last kickoff. The hooks:

* ``PRE_TOOL_CALL``: the first call of a model response to reach it opens the step: the
  response is read from the agent executor's messages and judged before any call runs.
  Refused (or stopped), each call of the step is blocked (CrewAI does not run it) and
  ``POST_TOOL_CALL`` gives the model the refusal (or the stop message) as its result.
* ``PRE_MODEL_CALL``: the step's results are in the executor's messages. At the warning
  level a user message naming the repeated action (or cycle) and its count is appended
  there, so the model reads it now and later; at ``stop_at`` `LoopStoppedError` (a
  CrewAI ``HookAborted``, which CrewAI lets through as it is) is raised before the model
  is called, out of ``crew.kickoff()``.

An agent that ran before the guard was made keeps CrewAI's model hooks as they were at
its first task (when its executor was made): the guard's tool hook adds its model hook to
that executor at the agent's first tool call, so no agent is half guarded.

`trajectory_from_messages` converts the executor's messages
(``agent.agent_executor.messages``) for ``maxrepeat.grade`` afterwards. ``crewai`` is
imported only when a guard is made.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final

from ...core.errors import LoopStopped, MissingExtraError
from ...core.events import Trajectory
from .._live import FrameworkClasses, Graders, ResultsOfLatestRun, StepGuard, ToolCall, load_graders
from ..policy import Action, Decision, Policy
from ._records import openai_calls, turn_events

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class"]

_EXTRA = "crewai"
FORMAT = "crewai"
SOURCE = "<crewai messages>"
_RUNS_KEPT: Final = 64  # agent invocations remembered per guard


def _calls(message: Any) -> list[ToolCall]:
    return openai_calls(message.get("tool_calls"))


def _response_calls(message: Any) -> list[ToolCall] | None:
    return _calls(message) if message.get("role") == "assistant" else None


def _returns(message: Any) -> list[tuple[str, Any, bool]]:
    if message.get("role") != "tool" or not message.get("tool_call_id"):
        return []
    return [(message["tool_call_id"], message.get("content"), True)]


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from a CrewAI agent executor's messages (OpenAI-style dicts,
    ``agent.agent_executor.messages``): each assistant message with ``tool_calls`` is one
    turn; the ``tool`` messages answering it are the results.

    >>> calls = [{"id": "c1", "function": {"name": "ls", "arguments": "{}"}}]
    >>> traj = trajectory_from_messages([{"role": "assistant", "tool_calls": calls},
    ...                                  {"role": "tool", "tool_call_id": "c1", "content": "a"}])
    >>> [e.type for e in traj.events]
    ['turn_start', 'tool_call', 'tool_result', 'turn_end']
    """
    events = turn_events(messages, _response_calls, _returns, results_in_turn_only=True)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


class _Run:
    """One agent invocation's state: its `StepGuard` and the open step."""

    def __init__(self, graders: Graders, policy: Policy | None, first: Any) -> None:
        self.guard = StepGuard(graders, policy=policy, format=FORMAT, source=SOURCE)
        self.first = first  # the invocation's first message (kept: its id is the key)
        self.message: Any = None  # the model response of the open step
        self.ids: list[str] = []  # its calls' ids
        self.refusal: str | None = None  # what its calls are answered with, if refused
        self.stopping: Decision | None = None  # a stop decided before the calls

    def open(self, messages: Sequence[Any]) -> None:
        """The calls of the latest model response start: a new step unless it is open."""
        last = next((m for m in reversed(messages) if m.get("role") == "assistant"
                     and m.get("tool_calls")), None)
        if last is None or last is self.message:
            return
        self.close(messages)  # (only when no model call came between: none does)
        calls = _calls(last)
        self.message, self.ids = last, [c.id for c in calls if c.id is not None]
        ahead = self.guard.start(calls)
        if ahead.action >= Action.BLOCK:  # (the stop message, at stop_at)
            self.refusal = self.guard.refuse(ahead)
        if ahead.action >= Action.STOP:
            self.stopping = self.guard.stop(ahead)

    def close(self, messages: Sequence[Any]) -> tuple[Decision, bool]:
        """Feed the open step's results: the decision after it, and whether it was
        refused (a no-op decision when no step is open)."""
        if self.message is None:
            return self.guard.finish(), False
        refused = self.refusal is not None
        since: list[Any] = []  # the messages after the step's response, newest first
        for message in reversed(messages):  # (from the end: the history is not re-read)
            if message is self.message:
                break
            since.append(message)
        else:
            since = []  # the response is no longer in the messages
        for message in reversed(since):
            if not refused and message.get("role") == "tool" \
                    and message.get("tool_call_id") in self.ids:
                self.guard.answer(message["tool_call_id"], message.get("content"))
        self.message, self.ids, self.refusal = None, [], None
        return self.guard.finish(), refused


def _executor_messages(executor: Any) -> list[Any] | None:
    messages = getattr(executor, "messages", None)
    return messages if isinstance(messages, list) and messages else None


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from crewai.hooks.dispatch import HookAborted, InterceptionPoint, register, unregister
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "crewai") from exc

    class LoopStoppedError(HookAborted, LoopStopped):  # type: ignore[misc]
        """Raised out of ``crew.kickoff()`` when the loop goes on up to ``stop_at``."""

        def __init__(self, decision: Any) -> None:
            LoopStopped.__init__(self, decision)
            self.reason = str(self)
            self.source = "maxrepeat"

    class MaxRepeatGuard(ResultsOfLatestRun):
        """Warns, refuses and stops CrewAI agents that repeat themselves."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.runs: OrderedDict[int, _Run] = OrderedDict()  # the latest used last
            self._lock = threading.Lock()
            self._removed = False
            self._hooks: list[tuple[Any, Callable[[Any], Any]]] = [
                (InterceptionPoint.PRE_MODEL_CALL, self.before_model),
                (InterceptionPoint.PRE_TOOL_CALL, self.before_tool),
                (InterceptionPoint.POST_TOOL_CALL, self.after_tool)]
            for point, hook in self._hooks:
                register(point, hook)

        def remove(self) -> None:
            """Unregister the guard: no agent run is guarded by it any more."""
            self._removed = True
            for point, hook in self._hooks:
                unregister(point, hook)

        def __enter__(self) -> MaxRepeatGuard:
            return self

        def __exit__(self, *exc: object) -> None:
            self.remove()

        def _run(self, messages: list[Any]) -> _Run:
            key = id(messages[0])
            run = self.runs.get(key)
            if run is None or run.first is not messages[0]:
                run = self.runs[key] = _Run(self.graders, self.policy, messages[0])
            self.runs.move_to_end(key)  # the latest: its results are the guard's
            while len(self.runs) > _RUNS_KEPT:
                self.runs.popitem(last=False)
            return run

        def before_model(self, context: Any) -> None:
            messages = _executor_messages(getattr(context, "executor", None))
            if self._removed or messages is None:
                return
            with self._lock:
                run = self._run(messages)
                decision, refused = run.close(messages)
                if run.stopping is not None:
                    raise LoopStoppedError(run.guard.stop(run.stopping))
                if decision.action >= Action.STOP:
                    raise LoopStoppedError(run.guard.stop(decision))
                if decision.action >= Action.WARN and not refused and decision.message:
                    messages.append({"role": "user", "content": decision.message})

        def before_tool(self, context: Any) -> bool | None:
            executor = getattr(context.agent, "agent_executor", None)
            messages = _executor_messages(executor)
            if self._removed or messages is None:
                return None
            hooks = getattr(executor, "before_llm_call_hooks", None)
            if isinstance(hooks, list) and self.before_model not in hooks:
                hooks.append(self.before_model)  # an agent made before the guard
            with self._lock:
                run = self._run(messages)
                run.open(messages)
                return False if run.refusal is not None else None  # False: not run

        def after_tool(self, context: Any) -> str | None:
            messages = _executor_messages(getattr(context.agent, "agent_executor", None))
            if self._removed or messages is None:
                return None
            with self._lock:
                return self._run(messages).refusal

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)

stop_error_class: Final = _CLASSES.stop_error_class
"""The exception a CrewAI guard raises to stop a run (CrewAI's ``HookAborted`` and a
`LoopStopped`)."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """A guard against loops for every CrewAI agent run in this process, from now on
    (``guard.remove()``, or leaving a ``with`` block, unregisters it).

    ``graders``: a `MaxRepeatConfig`, several, or a YAML config file path; ``policy``:
    when to warn, refuse and stop. Raises `MissingExtraError` without ``crewai``.

    Made before the crew's agents (``guard = loop_guard(MaxRepeatConfig.preset("live"))``)
    or as ``with loop_guard(config) as guard:`` around a kickoff; ``guard.results`` are
    the graders' results for the latest agent invocation.
    """
    return _CLASSES.loop_guard(graders, policy)
