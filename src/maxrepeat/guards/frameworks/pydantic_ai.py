"""The loop guard as a pydantic-ai capability (the ``maxrepeat[pydantic-ai]`` extra).

``Agent(model, tools=[...], capabilities=[loop_guard(MaxRepeatConfig(max=3))])`` guards a
pydantic-ai agent; each run gets its own state (``for_run``). The capability's hooks:

* ``after_model_request``: the model asked for tool calls (one step, however many). When
  the policy says the step would be refused, ``before_tool_execute`` skips each call with
  ``SkipToolExecution`` and the refusal as its result; when it says stop,
  `LoopStoppedError` (an ``AgentRunError``) is raised before they run.
* ``before_model_request``: the step's tool returns are in the history; at the warning
  level a ``UserPromptPart`` naming the repeated action (or cycle) and its count is added
  to the last request of the run's history, so the model reads it now and later.

`trajectory_from_messages` converts ``result.all_messages()`` the same way, for
``maxrepeat.grade`` afterwards. ``pydantic_ai`` is imported only when a guard is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ...core.errors import MissingExtraError
from ...core.events import Trajectory
from .._live import (
    FrameworkClasses,
    Graders,
    LoopStopped,
    StepGuard,
    ToolCall,
    answers_of_open_step,
    load_graders,
)
from ..policy import Action, Policy
from ._records import turn_events

if TYPE_CHECKING:
    from pydantic_ai.capabilities import AbstractCapability

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class"]

_EXTRA = "pydantic-ai"
FORMAT = "pydantic-ai"
SOURCE = "<pydantic-ai messages>"


def _args(part: Any) -> Any:
    as_dict = getattr(part, "args_as_dict", None)
    if callable(as_dict):
        try:
            return as_dict()
        except ValueError:  # arguments that are not a JSON object: keep the text
            return part.args
    return getattr(part, "args", None)


def _calls(response: Any) -> list[ToolCall]:
    return [ToolCall(p.tool_call_id, p.tool_name, _args(p))
            for p in response.parts if getattr(p, "part_kind", None) == "tool-call"]


def _returns(request: Any) -> list[tuple[str, Any, bool]]:
    """(call id, content, success) of the tool returns and retry prompts of a request."""
    out = []
    for p in request.parts:
        kind = getattr(p, "part_kind", None)
        if kind == "tool-return":
            out.append((p.tool_call_id, p.content,
                        getattr(p, "outcome", "success") == "success"))
        elif kind == "retry-prompt" and getattr(p, "tool_name", None) is not None:
            out.append((p.tool_call_id, p.content, False))
    return out


def _asks(message: Any) -> bool:
    """Whether a message is the model's response (the one asking for the calls)."""
    return getattr(message, "kind", None) == "response"


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from pydantic-ai messages (``result.all_messages()``): each
    ``ModelResponse`` with tool calls is one turn; the ``ToolReturnPart`` (and tool
    ``RetryPromptPart``) values answering them are the results."""
    events = turn_events(messages, lambda m: _calls(m) if _asks(m) else None, _returns)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from pydantic_ai.capabilities import AbstractCapability
        from pydantic_ai.exceptions import AgentRunError, SkipToolExecution
        from pydantic_ai.messages import UserPromptPart
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "pydantic_ai") from exc

    class LoopStoppedError(AgentRunError, LoopStopped):  # type: ignore[misc]
        """Raised out of ``agent.run`` when the loop goes on up to ``stop_at``."""

        def __init__(self, decision: Any) -> None:
            LoopStopped.__init__(self, decision)
            self.message = decision.message or "maxrepeat loop guard stopped the run"

    class MaxRepeatGuard(AbstractCapability[Any]):  # type: ignore[misc]
        """Warns, refuses and stops a pydantic-ai agent that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.guard = StepGuard(self.graders, policy=policy, format=FORMAT, source=SOURCE)
            # the open step's call ids not answered yet: their returns are read from the
            # newest messages, so a history processor trimming the oldest loses no position
            self.pending: set[str] = set()
            self.refused: dict[str, str] = {}
            self.stopping: Any = None

        async def for_run(self, ctx: Any) -> Any:
            return MaxRepeatGuard(self.graders, self.policy)

        def _catch_up(self, messages: Sequence[Any]) -> bool:
            """Feed the open step's tool returns; whether the step was refused."""
            refused = bool(self.refused)
            if self.pending:
                for cid, content, ok in answers_of_open_step(
                        messages, self.pending, _asks, _returns):
                    self.guard.answer(cid, content, success=ok)
            self.pending, self.refused = set(), {}
            return refused

        async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
            refused = self._catch_up(ctx.messages)
            decision = self.guard.finish()
            if decision.action >= Action.STOP:
                raise LoopStoppedError(self.guard.stop(decision))
            if decision.action >= Action.WARN and not refused and decision.message:
                part = UserPromptPart(decision.message)
                last = ctx.messages[-1] if ctx.messages else None
                if last is not None and getattr(last, "kind", None) == "request":
                    last.parts = [*last.parts, part]
                    if request_context.messages and request_context.messages[-1] is not last:
                        request_context.messages[-1].parts = [
                            *request_context.messages[-1].parts, part]
            return request_context

        async def after_model_request(self, ctx: Any, *, request_context: Any,
                                      response: Any) -> Any:
            self._catch_up(ctx.messages)
            calls = _calls(response)
            if calls:
                ahead = self.guard.start(calls)
                self.pending = {c.id for c in calls if c.id is not None}
                if ahead.action >= Action.STOP:
                    # Raised when the first call is about to run: by then the response
                    # is in the run's history, so the messages hold the stopped step.
                    self.stopping = self.guard.stop(ahead)
                elif ahead.action >= Action.BLOCK:
                    text = self.guard.refuse(ahead)
                    self.refused = {c.id: text for c in calls if c.id is not None}
                    self.pending = set()
            return response

        async def before_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any,
                                      args: Any) -> Any:
            if self.stopping is not None:
                raise LoopStoppedError(self.stopping)
            text = self.refused.get(call.tool_call_id)
            if text is not None:
                raise SkipToolExecution(text)
            return args

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The ``AgentRunError`` and `LoopStopped` a pydantic-ai guard stops a run with."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> AbstractCapability[Any]:
    """A pydantic-ai capability guarding against loops.

    Needs ``pydantic_ai`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig(max=3))).__name__
    'MaxRepeatGuard'

    In an agent: ``Agent(model, tools=[...], capabilities=[guard])``.
    """
    capability: AbstractCapability[Any] = _CLASSES.loop_guard(graders, policy)
    return capability
