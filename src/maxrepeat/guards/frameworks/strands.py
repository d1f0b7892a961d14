"""The loop guard as a Strands Agents hook provider (the ``maxrepeat[strands]`` extra).

``Agent(model=model, tools=[...], hooks=[loop_guard(config)])`` guards a Strands agent:
one wiring point, like Strands' own hook providers. Each invocation (``agent(...)``)
starts from nothing (``BeforeInvocationEvent``), whatever ended the last one; the state
is kept per agent, so one guard may serve several agents. The hooks:

* ``BeforeToolsEvent``: the assistant message asks for tool calls (one step, however
  many). When the policy says the step would be refused, the event is cancelled with the
  refusal, which Strands gives the model as each call's result (the tools do not run);
  when it says stop, the calls are answered with the stop message the same way, and the
  run stops at the next hook.
* ``BeforeModelCallEvent``: the step's tool results are in ``agent.messages``. At the
  warning level a text block naming the repeated action (or cycle) and its count is added
  to the message holding them, so the model reads it now and later; at ``stop_at``
  `LoopStoppedError` (a Strands ``EventLoopException``, which the event loop lets
  through as it is) is raised before the model is called.

`trajectory_from_messages` converts ``agent.messages`` the same way, for
``maxrepeat.grade`` afterwards. ``strands`` is imported only when a guard is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ...core.errors import MissingExtraError
from ...core.events import Trajectory
from .._live import (
    FrameworkClasses,
    Graders,
    LoopStopped,
    ResultsOfLatestRun,
    StepGuard,
    ToolCall,
    answers_of_open_step,
    load_graders,
)
from ..policy import Action, Decision, Policy
from ._records import turn_events

if TYPE_CHECKING:
    from strands.hooks import HookProvider

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class"]

_EXTRA = "strands"
FORMAT = "strands"
SOURCE = "<strands messages>"


def _blocks(message: Any, key: str) -> list[Any]:
    return [b[key] for b in message.get("content") or [] if isinstance(b, dict) and key in b]


def _calls(message: Any) -> list[ToolCall]:
    return [ToolCall(u.get("toolUseId"), u.get("name", ""), u.get("input"))
            for u in _blocks(message, "toolUse")]


def result_value(result: Any) -> Any:
    """What a Strands tool result says: its one text, else its content blocks.

    >>> result_value({"toolUseId": "t1", "status": "success", "content": [{"text": "ok"}]})
    'ok'
    """
    content = result.get("content") or []
    if len(content) == 1 and set(content[0]) == {"text"}:
        return content[0]["text"]
    return content


def _returns(message: Any) -> list[tuple[str, Any, bool]]:
    """(call id, value, success) of the tool results of a message."""
    return [(r.get("toolUseId"), result_value(r), r.get("status") == "success")
            for r in _blocks(message, "toolResult")]


def _asks(message: Any) -> bool:
    """Whether a message is the model's response (the one asking for the calls)."""
    return bool(message.get("role") == "assistant")


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from Strands messages (``agent.messages``): each assistant message
    with ``toolUse`` blocks is one turn; the ``toolResult`` blocks answering them are the
    results (a result of one text is that text)."""
    events = turn_events(messages, lambda m: _calls(m) if _asks(m) else None, _returns)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


@dataclass
class _Run:
    """One invocation's state."""

    guard: StepGuard
    #: the open step's call ids not answered yet: their results are read from the newest
    #: messages, so trimming the oldest (a conversation manager) loses no read position
    pending: set[str] = field(default_factory=set)
    refused: bool = False  # the open step was refused (its results are the refusal)
    stopping: Decision | None = None


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from strands.hooks import (
            BeforeInvocationEvent,
            BeforeModelCallEvent,
            BeforeToolsEvent,
            HookProvider,
            HookRegistry,
        )
        from strands.types.exceptions import EventLoopException
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "strands") from exc

    class LoopStoppedError(EventLoopException, LoopStopped):  # type: ignore[misc]
        """Raised out of the agent's call when the loop goes on up to ``stop_at``."""

        def __init__(self, decision: Any) -> None:
            LoopStopped.__init__(self, decision)
            self.original_exception = self
            self.request_state: dict[str, Any] = {}

    class MaxRepeatGuard(ResultsOfLatestRun, HookProvider):  # type: ignore[misc]
        """Warns, refuses and stops a Strands agent that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.runs: dict[int, _Run] = {}

        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeInvocationEvent, self.begin)
            registry.add_callback(BeforeModelCallEvent, self.before_model)
            registry.add_callback(BeforeToolsEvent, self.before_tools)

        def begin(self, event: Any) -> None:
            guard = StepGuard(self.graders, policy=self.policy, format=FORMAT, source=SOURCE)
            self.runs[id(event.agent)] = _Run(guard)

        def _run(self, agent: Any) -> _Run:
            run = self.runs.get(id(agent))
            if run is None:  # (an event loop driven without an invocation)
                guard = StepGuard(self.graders, policy=self.policy, format=FORMAT,
                                  source=SOURCE)
                run = self.runs[id(agent)] = _Run(guard)
            return run

        def _catch_up(self, run: _Run, messages: Sequence[Any]) -> bool:
            """Feed the open step's tool results; whether the step was refused."""
            refused, run.refused = run.refused, False
            if run.pending and not refused:
                for cid, value, ok in answers_of_open_step(
                        messages, run.pending, _asks, _returns):
                    run.guard.answer(cid, value, success=ok)
            run.pending = set()
            return refused

        def before_model(self, event: Any) -> None:
            run = self._run(event.agent)
            messages = event.agent.messages
            refused = self._catch_up(run, messages)
            decision = run.guard.finish()
            if run.stopping is not None:
                raise LoopStoppedError(run.guard.stop(run.stopping))
            if decision.action >= Action.STOP:
                raise LoopStoppedError(run.guard.stop(decision))
            if decision.action >= Action.WARN and not refused and decision.message \
                    and messages and messages[-1].get("role") == "user":
                messages[-1]["content"].append({"text": decision.message})

        def before_tools(self, event: Any) -> None:
            calls = _calls(event.message)
            if not calls:
                return
            run = self._run(event.agent)
            self._catch_up(run, event.agent.messages)
            ahead = run.guard.start(calls)
            run.pending = {c.id for c in calls if c.id is not None}
            if ahead.action >= Action.BLOCK:
                event.cancel = run.guard.refuse(ahead)  # each call's result; none runs
                run.refused = True
                run.pending = set()
            if ahead.action >= Action.STOP:
                run.stopping = ahead

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The ``EventLoopException`` and `LoopStopped` a Strands guard stops a run with."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> HookProvider:
    """A Strands hook provider guarding an agent against loops.

    Needs ``strands-agents`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig(max=3))).__name__
    'MaxRepeatGuard'

    In an agent: ``Agent(model=model, tools=[...], hooks=[guard])``.
    """
    provider: HookProvider = _CLASSES.loop_guard(graders, policy)
    return provider
