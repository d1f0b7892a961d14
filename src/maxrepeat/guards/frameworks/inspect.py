"""The ``max-repeat`` loop guard for Inspect AI's ``react()`` agent (the
``maxrepeat[inspect]`` extra): `loop_guard` gives ``on_continue`` and ``approval`` hooks.

Messages are converted to events as the Inspect log reader converts them
(`maxrepeat.readers.inspect_log.events_from_messages`), so the guard's results equal
``maxrepeat grade`` of the log afterwards. The Inspect scorer is
`maxrepeat.scorers.inspect`. ``inspect_ai`` is imported only when a guard is made.
"""

from __future__ import annotations

import weakref
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
    """One sample's guard and how far its messages were read: the last message read,
    found again from the end by identity or id (``react()`` truncating the history drops
    the oldest and keeps the others' ids), never by an index."""

    def __init__(self, key: str, guard: StepGuard, owner: Any) -> None:
        self.key = key
        self.guard = guard
        self.owner = owner  # the sample's store, weakly: another store is another run
        self.last: Any = None  # the last message read
        self.started: set[str] = set()  # call ids the approver already fed
        self.pending: set[str] = set()  # the open step's call ids not answered yet
        self.refused: set[str] = set()
        self.refusal = ""
        self.asked: Any = None  # the assistant message whose calls are answered now

    def _after_last(self, messages: Sequence[Any]) -> int:
        """Where the messages not read yet start (0 when none was read or the last one
        read is gone)."""
        k = len(messages) if self.last is not None else 0
        while k > 0 and not _same(messages[k - 1], self.last):
            k -= 1
        return k

    def holds_last(self, messages: Sequence[Any]) -> bool:
        """Whether ``messages`` still hold the last message read (the same run)."""
        return self.last is not None and self._after_last(messages) > 0

    def unread(self, messages: Sequence[Any], stop_at: Any = None) -> Sequence[Any]:
        """The messages after the last one read (all when it is gone), up to ``stop_at``."""
        new = messages[self._after_last(messages):]
        for index, message in enumerate(new):
            if message is stop_at:
                return new[:index]
        return new


def _same(message: Any, other: Any) -> bool:
    key = getattr(message, "id", None)
    return message is other or (key is not None and key == getattr(other, "id", None))


def _store() -> Any:
    """The running sample's store: Inspect gives each sample (and epoch) its own."""
    try:
        from inspect_ai.util import store

        return store()
    except (ImportError, RuntimeError):  # pragma: no cover - outside a sample
        return None


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
    serves a whole task, and a run by its sample's store (an epoch reusing the input is
    another run); a ``truncation`` that drops that first message keeps the run's state.
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
        self.by_store: OrderedDict[int, _Sample] = OrderedDict()  # each store's latest
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
        owner = _store()
        sample = self.samples.get(key)
        if sample is None:  # a new sample, or a truncation dropped its first message
            sample = self.by_store.get(id(owner))
            sample = sample if sample is not None and sample.holds_last(messages) else None
        if sample is None or (owner is not None and sample.owner is not None
                              and sample.owner() is not owner):  # another run
            sample = self._new(key, owner)
        self.samples[sample.key] = sample  # (again, if a long eval forgot the key)
        self.samples.move_to_end(sample.key)
        return sample.key, sample

    def _new(self, key: str, owner: Any) -> _Sample:
        guard = StepGuard(self.graders, policy=self.policy, format="inspect",
                          source="<inspect sample>")
        sample = self.samples[key] = _Sample(key, guard,
                                             None if owner is None else weakref.ref(owner))
        self.by_store[id(owner)] = sample
        self.by_store.move_to_end(id(owner))
        for kept in (self.samples, self.by_store):
            if len(kept) > _KEPT_SAMPLES:  # a long eval: forget the oldest
                kept.popitem(last=False)
        return sample

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
        ids = {c.id for c in calls if c.id is not None}
        sample.started |= ids
        sample.pending = ids
        if ahead.action >= Action.BLOCK:
            sample.refusal = sample.guard.refuse(ahead)
            sample.refused |= ids
            sample.pending = set()
            return sample.refusal
        return None

    def _catch_up(self, sample: _Sample, messages: Sequence[Any], stop_at: Any = None) -> None:
        """Feed what the messages not read yet add: the calls of a response the approver
        did not judge, the open step's results (each once, so a rereading after a
        truncation counts nothing twice)."""
        for message in sample.unread(messages, stop_at):
            role = getattr(message, "role", None)
            if role == "assistant":
                sample.asked = message
                calls = self._calls(message)
                if calls and not any(c.id in sample.started for c in calls):
                    sample.guard.start(calls)
                    sample.pending = {c.id for c in calls if c.id is not None}
                    sample.started |= sample.pending
            elif role == "tool" and sample.asked is not None and sample.pending:
                # Converted with the message that asked, as the log reader converts them.
                for e in events_from_messages([sample.asked, message]):
                    if e.type == "tool_result" and e.data.tool_call_id in sample.pending:
                        sample.pending.discard(e.data.tool_call_id)
                        sample.guard.answer(e.data.tool_call_id, e.data.result,
                                            success=e.data.success)
            sample.last = message

    async def on_continue(self, state: Any) -> bool | str:
        """``react()``'s ``on_continue``: True, a warning to add, or False to stop."""
        key, sample = self._sample(state.messages)
        self.wired["on_continue"] = True
        if not self.wired["approval"] and any(
                getattr(m, "tool_calls", None) for m in state.messages):
            raise _unwired("approval=guard.approval")
        refused = bool(sample.refused)
        self._catch_up(sample, state.messages)
        sample.refused, sample.pending = set(), set()
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
