"""The loop guard for Agno agents (the ``maxrepeat[agno]`` extra): one tool hook,
``Agent(model=model, tools=[...], tool_hooks=[loop_guard(MaxRepeatConfig.preset("live"))])``.

* A model response's tool calls are one step: at the first of them to reach the hook,
  the guard reads the response from ``run_context.messages`` and judges the step before
  any call runs: refused, each call returns the refusal instead of running; stopped, each
  raises `LoopStoppedError` (Agno's ``StopAgentRun``) and Agno ends the run after it.
* After a step's last call, at the warning level, a note naming the repeated action (or
  cycle) and its count is appended to that call's result. In ``observation`` mode the
  note warns, then blocks; at ``stop_at`` the last result (and the note) is given to Agno
  as a ``StopAgentRun``, which ends the run after the step.

Agno returns a run's errors in its ``RunOutput``: ``guard.stop_error(result)`` is the
`LoopStoppedError` that stopped that run, or None. A guard on one tool (``@tool(tool_hooks=
[guard])``) ends the run at its first call, and ``stop_error`` raises `TypeError` naming
the agent's ``tool_hooks``. Each run (``run_id``) starts from
nothing. `trajectory_from_messages` converts ``result.messages`` (without the notes).
``agno`` is imported only when a guard is made.
"""

from __future__ import annotations

import inspect
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

from ...core.errors import MissingExtraError
from ...core.events import Trajectory
from .._live import FrameworkClasses, Graders, LoopStopped, StepGuard, ToolCall, load_graders
from ..policy import Action, Decision, Policy
from ._records import openai_calls, turn_events

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class", "NOTE_MARK"]

_EXTRA = "agno"
FORMAT = "agno"
SOURCE = "<agno messages>"
#: where a guard's note starts in a tool result
NOTE_MARK: Final = "\n\n[maxrepeat] "
_RUNS_KEPT: Final = 64  # runs remembered (their stop errors) per guard


def _calls(message: Any) -> list[ToolCall]:
    return openai_calls(getattr(message, "tool_calls", None))


def _content(message: Any) -> Any:
    content = getattr(message, "content", None)
    return content.split(NOTE_MARK, 1)[0] if isinstance(content, str) else content


def _returns(message: Any) -> list[tuple[str, Any, bool]]:
    if getattr(message, "role", None) != "tool" or not getattr(message, "tool_call_id", None):
        return []
    return [(message.tool_call_id, _content(message),
             not getattr(message, "tool_call_error", False))]


def _response_calls(message: Any) -> list[ToolCall] | None:
    return _calls(message) if getattr(message, "role", None) == "assistant" else None


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from Agno messages (``result.messages`` of a ``RunOutput``): each
    assistant message with tool calls is one turn; the tool messages answering it are the
    results (without the guard's notes)."""
    events = turn_events(messages, _response_calls, _returns, results_in_turn_only=True)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


def _text(result: Any) -> Any:
    """A tool's return value as the model reads it (Agno sends ``str`` of it, or the
    ``content`` of a ``ToolResult``)."""
    return result.content if type(result).__name__ == "ToolResult" else str(result)


def _with_note(result: Any, note: str) -> Any:
    if type(result).__name__ == "ToolResult":
        return result.model_copy(update={"content": result.content + NOTE_MARK + note})
    return f"{result}{NOTE_MARK}{note}"


def _last_response(messages: Sequence[Any]) -> Any:
    """The run's last assistant message with tool calls (the calls now running)."""
    return next((m for m in reversed(messages) if getattr(m, "role", None) == "assistant"
                 and getattr(m, "tool_calls", None)), None)


def _tail(messages: Sequence[Any], message: Any) -> list[Any]:
    """The messages after ``message`` (all of them when it is None)."""
    out: list[Any] = []
    for m in reversed(messages):
        if m is message:
            break
        out.append(m)
    return out[::-1]


class _Step:
    """One model response's tool calls, as they go through the hook."""

    def __init__(self, message: Any, calls: list[ToolCall]) -> None:
        self.message = message
        self.waiting = list(calls)  # not through the hook yet
        self.refusal: str | None = None

    def take(self, name: str, arguments: Any) -> ToolCall:
        """The waiting call this hook call is (the same name and arguments)."""
        found = next((c for c in self.waiting if c.name == name and c.arguments == arguments),
                     None)
        found = found or next((c for c in self.waiting if c.name == name), self.waiting[0])
        self.waiting.remove(found)
        return found


class _Run:
    """One Agno run's state: its `StepGuard` and the open step."""

    def __init__(self, graders: Graders, policy: Policy | None) -> None:
        self.guard = StepGuard(graders, policy=policy, format=FORMAT, source=SOURCE)
        self.step: _Step | None = None
        self.stopping: Decision | None = None
        self.stopped: LoopStopped | None = None
        self.opened: Any = None  # the model response of the last step opened
        self.unwired: str | None = None  # why the guard ended the run at set-up
        self.ids = itertools.count()

    def _take_answers(self, step: _Step, messages: Sequence[Any]) -> None:
        """Feed the answers Agno gave the step's calls itself (an unknown tool, before
        any call runs; the tool call limit): those calls never reach the hook."""
        waiting = {c.id: c for c in step.waiting}
        for message in _tail(messages, step.message):
            call = waiting.get(getattr(message, "tool_call_id", None))
            if call is not None and getattr(message, "role", None) == "tool":
                if step.refusal is None:
                    self.guard.answer(call.id, _content(message),
                                      success=not getattr(message, "tool_call_error", False))
                step.waiting.remove(call)

    def _open(self, messages: Sequence[Any], name: str, arguments: Any) -> _Step:
        last = _last_response(messages)
        step = self.step
        if step is not None and step.waiting and last in (None, step.message):
            return step
        if step is not None:  # its last calls never reached the hook
            self._take_answers(step, messages)
            self.step, decision = None, self.guard.finish()
            if decision.action >= Action.STOP and self.stopping is None:
                self.stopping = self.guard.stop(decision)
        calls = _calls(last) if last is not None and last is not self.opened else []
        if not any(c.name == name for c in calls):
            # not asked for by a new model response in the messages: a step of its own
            calls, last = [ToolCall(f"maxrepeat-{next(self.ids)}", name, arguments)], None
        self.opened = last
        step = self.step = _Step(last, calls)
        ahead = self.guard.start(calls)
        if ahead.action >= Action.STOP:
            self.stopping = self.guard.stop(ahead)
        elif ahead.action >= Action.BLOCK:
            step.refusal = self.guard.refuse(ahead)
        self._take_answers(step, messages)
        return step

    def before(self, messages: Sequence[Any] | None, name: str,
               arguments: Any) -> tuple[_Step, ToolCall]:
        """The step and call a hook call is, judged before it runs."""
        step = self._open(messages or (), name, arguments)
        return step, step.take(name, arguments)

    def after(self, step: _Step, call: ToolCall, result: Any, ok: bool) -> Decision | None:
        """Feed a call's result; the decision after its step when it was the last."""
        if step.refusal is None:
            self.guard.answer(call.id, _text(result), success=ok)
        if step.waiting or self.step is not step:
            return None
        self.step = None
        return self.guard.finish()


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from agno.exceptions import StopAgentRun
        from agno.utils.log import log_error
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "agno") from exc

    class LoopStoppedError(StopAgentRun, LoopStopped):  # type: ignore[misc]
        """What stopped an Agno run when the loop went on up to ``stop_at``."""

        def __init__(self, decision: Any) -> None:
            text = decision.message or "maxrepeat loop guard stopped the run"
            # StopAgentRun's chain of __init__ reaches LoopStopped's, with the text
            StopAgentRun.__init__(self, text)
            self.decision = decision
            self.args = (text,)

    class MaxRepeatGuard:
        """Warns, refuses and stops an Agno agent that repeats itself (a tool hook)."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self._runs: OrderedDict[str, _Run] = OrderedDict()
            self._lock = threading.Lock()

        def _run(self, run_context: Any) -> _Run:
            key = str(getattr(run_context, "run_id", None))
            run = self._runs.get(key)
            if run is None:
                run = self._runs[key] = _Run(self.graders, self.policy)
                while len(self._runs) > _RUNS_KEPT:
                    self._runs.popitem(last=False)
            return run

        def stop_error(self, run_output: Any) -> LoopStopped | None:
            """The `LoopStoppedError` that stopped this run (a ``RunOutput``), or None;
            raises `TypeError` for a run the guard ended because it was on one tool."""
            run = self._runs.get(str(getattr(run_output, "run_id", None)))
            if run is not None and run.unwired is not None:
                raise TypeError(run.unwired)
            return None if run is None else run.stopped

        def __call__(self, function_name: str, function_call: Callable[..., Any],
                     arguments: dict[str, Any], run_context: Any = None,
                     agent: Any = None, team: Any = None) -> Any:
            owner = agent if agent is not None else team
            with self._lock:
                run = self._run(run_context)
                if owner is not None and not owner.tool_hooks:
                    # Agno gives each tool its owner's hooks in place of the tool's own:
                    # an owner without hooks means the guard is a tool's own (a user's
                    # owner hook wrapping the guard is not), and would miss other steps
                    run.unwired = (f"maxrepeat loop guard: it is on the tool {function_name}"
                                   " only, not the agent, so it would count that tool's "
                                   f"steps alone: give it to the {type(owner).__name__} "
                                   "itself, tool_hooks=[guard]")
                    log_error(run.unwired)
                    raise StopAgentRun(run.unwired)
                step, call = run.before(getattr(run_context, "messages", None),
                                        function_name, arguments)
                if run.stopping is not None:  # no call of the step runs
                    run.stopped = run.stopped or LoopStoppedError(run.stopping)
                    raise run.stopped
                if step.refusal is not None:
                    return self._done(run, step, call, step.refusal)
            try:
                result = function_call(**arguments)
                if inspect.isawaitable(result):  # Agno's async runs await the tool
                    return self._later(run, step, call, result)
            except Exception as exc:
                self._failed(run, step, call, exc)
            with self._lock:
                return self._done(run, step, call, result)

        async def _later(self, run: _Run, step: _Step, call: ToolCall, result: Any) -> Any:
            try:
                value = await result
            except Exception as exc:
                self._failed(run, step, call, exc)
            with self._lock:
                return self._done(run, step, call, value)

        def _failed(self, run: _Run, step: _Step, call: ToolCall, exc: Exception) -> NoReturn:
            with self._lock:  # Agno answers a failed call with the error's text
                run.after(step, call, str(exc), False)
            raise exc

        def _done(self, run: _Run, step: _Step, call: ToolCall, result: Any) -> Any:
            decision = run.after(step, call, result, True)
            if decision is None or decision.action < Action.WARN or not decision.message:
                return result
            if decision.action >= Action.STOP:  # observation mode: after the step ran
                run.stopped = LoopStoppedError(run.guard.stop(decision))
                raise StopAgentRun(_with_note(_text(result), decision.message))
            return result if step.refusal is not None else _with_note(result, decision.message)

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The `LoopStopped` (and Agno ``StopAgentRun``) that ``guard.stop_error(result)`` returns."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """An Agno tool hook guarding against loops.

    Needs ``agno`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig.preset("live"))).__name__
    'MaxRepeatGuard'

    In an agent: ``Agent(model=model, tools=[...], tool_hooks=[guard])``; after a run,
    ``guard.stop_error(result)`` is the error that stopped it, or None.
    """
    return _CLASSES.loop_guard(graders, policy)
