"""The ``max-repeat`` loop guard for Inspect AI's ``react()`` agent (the
``maxrepeat[inspect]`` extra): `loop_guard` gives ``on_continue`` and ``approval`` hooks.

Messages are converted to events as the Inspect log reader converts them
(`maxrepeat.readers.inspect_log.events_from_messages`), so the guard's results equal
``maxrepeat grade`` of the log afterwards. The Inspect scorer is
`maxrepeat.scorers.inspect`. ``inspect_ai`` is imported only when a guard is made.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ...core.errors import MissingExtraError
from ...readers.inspect_log import events_from_messages
from .._live import Graders, StepGuard, ToolCall, load_graders
from ..policy import Action, Decision, Policy

__all__ = ["loop_guard", "LoopGuard"]

_EXTRA = "inspect"
_KEPT_SAMPLES = 1024  # samples whose guard state is kept (the least recently active dropped)


class _Sample:
    """One sample's guard and how far its messages were read."""

    def __init__(self, guard: StepGuard) -> None:
        self.guard = guard
        self.seen = 0
        self.started: set[str] = set()  # call ids the approver already fed
        self.refused: set[str] = set()
        self.refusal = ""
        self.asked: Any = None  # the assistant message whose calls are answered now


class LoopGuard:
    """The loop guard for Inspect's ``react()`` agent: ``on_continue`` and ``approval``.

    ``react(tools=..., on_continue=guard.on_continue, approval=guard.approval)``:

    * ``approval`` (before the calls of a model response run): when the policy says the
      step would be refused, each call is rejected with the refusal as the explanation
      (what the model reads); when it says stop, they are rejected too and the agent stops
      at ``on_continue``. Otherwise the guard's approver escalates to the next policy (the
      list ends with Inspect's auto approver; put your own policies after the first).
    * ``on_continue`` (after the calls ran): at the warning level it returns the message
      naming the repeated action (or cycle) and its count, which ``react()`` adds as a user
      message; at ``stop_at`` it returns ``False``, ending the agent, after putting the
      results in the sample's store under ``"maxrepeat"`` (``inspect view`` shows them).

    Both are needed: an agent given only one fails at its first step, naming the other.
    Samples are told apart by their first message after the system prompt, so one guard
    serves a whole task.
    Messages are converted as the Inspect log reader converts them, so the results equal
    ``maxrepeat grade`` of the log afterwards.
    """

    def __init__(self, graders: Graders, policy: Policy | None = None) -> None:
        try:
            from inspect_ai.approval import ApprovalPolicy, auto_approver
        except ImportError as exc:
            raise MissingExtraError(_EXTRA, "inspect_ai") from exc
        self.graders = load_graders(graders)  # a config file is read once
        self.policy = policy
        StepGuard(graders, policy=policy)  # checks graders and policy now
        self.samples: OrderedDict[str, _Sample] = OrderedDict()
        self.stopped: dict[str, Decision] = {}
        self.wired = {"approval": False, "on_continue": False}  # which hooks were called
        self.approval = [ApprovalPolicy(_approver(self), "*"),
                         ApprovalPolicy(auto_approver(), "*")]

    def _sample(self, messages: Sequence[Any]) -> tuple[str, _Sample]:
        # The first message that is not the system prompt: react() inserts one system
        # message object (one id) into every sample it runs.
        first = next((m for m in messages if getattr(m, "role", None) != "system"),
                     messages[0] if messages else None)
        key = str(getattr(first, "id", None) or id(first))
        sample = self.samples.get(key)
        if sample is None or sample.seen > len(messages):
            sample = self.samples[key] = _Sample(StepGuard(self.graders, policy=self.policy,
                                                           format="inspect",
                                                           source="<inspect sample>"))
            if len(self.samples) > _KEPT_SAMPLES:  # a long eval: forget the oldest
                self.samples.popitem(last=False)
        self.samples.move_to_end(key)
        return key, sample

    @staticmethod
    def _calls(message: Any) -> list[ToolCall]:
        return [ToolCall(e.data.tool_call_id, e.data.tool_name, e.data.arguments)
                for e in events_from_messages([message]) if e.type == "tool_call"]

    def approve(self, history: Sequence[Any]) -> str | None:
        """The refusal for the calls of the last assistant message, or None."""
        _, sample = self._sample(history)
        last = next((m for m in reversed(history) if getattr(m, "role", None) == "assistant"),
                    None)
        calls = self._calls(last) if last is not None else []
        if not calls:
            return None
        self.wired["approval"] = True
        if calls[0].id in sample.started:  # a later call of a response already judged
            return sample.refusal if calls[0].id in sample.refused else None
        if sample.started and not self.wired["on_continue"]:  # a second response
            raise _unwired("on_continue=guard.on_continue")
        self._catch_up(sample, history, stop_at=last)
        ahead = sample.guard.start(calls)
        sample.started.update(c.id for c in calls if c.id is not None)
        if ahead.action >= Action.BLOCK:
            sample.refusal = sample.guard.refuse(ahead)
            sample.refused.update(c.id for c in calls if c.id is not None)
            return sample.refusal
        return None

    def _catch_up(self, sample: _Sample, messages: Sequence[Any], stop_at: Any = None) -> None:
        for index in range(sample.seen, len(messages)):
            message = messages[index]
            if message is stop_at:
                break
            role = getattr(message, "role", None)
            if role == "assistant":
                sample.asked = message
                calls = self._calls(message)
                if calls and calls[0].id not in sample.started:
                    sample.guard.start(calls)
                    sample.started.update(c.id for c in calls if c.id is not None)
            elif role == "tool" and sample.asked is not None:
                # Converted with the message that asked, as the log reader converts them.
                for e in events_from_messages([sample.asked, message]):
                    if e.type == "tool_result" and e.data.tool_call_id not in sample.refused:
                        sample.guard.answer(e.data.tool_call_id, e.data.result,
                                            success=e.data.success)
            sample.seen = index + 1

    async def on_continue(self, state: Any) -> bool | str:
        """``react()``'s ``on_continue``: True, a warning to add, or False to stop."""
        key, sample = self._sample(state.messages)
        self.wired["on_continue"] = True
        if not self.wired["approval"] and any(
                getattr(m, "tool_calls", None) for m in state.messages):
            raise _unwired("approval=guard.approval")
        refused = bool(sample.refused) and any(
            getattr(m, "tool_call_id", None) in sample.refused
            for m in state.messages[sample.seen:])
        self._catch_up(sample, state.messages)
        sample.refused = set()
        decision = sample.guard.finish()
        if decision.action >= Action.STOP:
            stopped = sample.guard.stop(decision)
            self.stopped[key] = stopped
            try:
                from inspect_ai.util import store

                store().set("maxrepeat", [r.to_dict() for r in stopped.results])
            except (ImportError, RuntimeError):  # pragma: no cover - outside a sample
                pass
            return False
        if decision.action >= Action.WARN and decision.message and not refused:
            return decision.message
        return True


def _unwired(missing: str) -> RuntimeError:
    return RuntimeError(f"maxrepeat loop guard: the react() agent is missing {missing}: "
                        "the guard needs on_continue=guard.on_continue and "
                        "approval=guard.approval (its policy first in the list)")


def _approver(guard: LoopGuard) -> Any:
    from inspect_ai.approval import Approval, approver

    @approver(name="maxrepeat")
    def make() -> Any:
        async def approve(message: str, call: Any, view: Any, history: list[Any]) -> Any:
            text = guard.approve(history)
            if text is None:
                return Approval(decision="escalate", explanation="no loop")
            return Approval(decision="reject", explanation=text)

        return approve

    return make()


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> LoopGuard:
    """A loop guard for ``react()`` (see `LoopGuard`); raises `MissingExtraError` without
    ``inspect_ai``.

    >>> from maxrepeat import MaxRepeatConfig
    >>> guard = loop_guard(MaxRepeatConfig(max=3))
    >>> callable(guard.on_continue), len(guard.approval)
    (True, 2)
    """
    return LoopGuard(graders, policy)
