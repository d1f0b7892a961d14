"""The loop guard as a Google ADK plug-in (the ``maxrepeat[google-adk]`` extra).

``App(name=..., root_agent=agent, plugins=[loop_guard(config)])`` guards every agent
the app's runner runs: one wiring point, like ADK's own plug-ins. Each invocation (one
``run_async``) has its own state, keyed by its invocation id, so a guard reused for the
next run starts it clean whatever ended the last one. The plug-in's callbacks:

* ``after_model_callback``: the model asked for function calls (one step, however
  many; a call without an id is given an ``adk-`` one, as ADK would). When the policy
  says the step would be refused, ``before_tool_callback`` answers each call with the
  refusal instead of running it; when it says stop, each call is answered the same way
  with the stop message (so the session stays a valid history) and the run stops before
  the next model call.
* ``before_model_callback``: the step's function responses are in the session; at the
  warning level a user message naming the repeated action (or cycle) and its count is
  put right after them, in this request and every later one of the run.

ADK's plug-in manager turns whatever a plug-in raises into a ``RuntimeError``; an
agent's own callbacks it lets through. So the plug-in (``before_agent_callback``) adds
one callback of its own to each ``LlmAgent`` it sees run, before its model and before its
tools, which raises the stop error itself: `LoopStoppedError` comes out of
``run_async`` as it is, like ADK's own ``LlmCallsLimitExceededError``.

`trajectory_from_events` converts the session's events (``session.events``) the same
way, for ``maxrepeat.grade`` afterwards. ``google.adk`` is imported only when a guard is
made.
"""

from __future__ import annotations

import uuid
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
    load_graders,
)
from ..policy import Action, Decision, Policy
from ._records import turn_events

if TYPE_CHECKING:
    from google.adk.plugins.base_plugin import BasePlugin

__all__ = ["loop_guard", "trajectory_from_events", "stop_error_class"]

_EXTRA = "google-adk"
FORMAT = "google-adk"
SOURCE = "<google-adk events>"
PLUGIN_NAME = "maxrepeat_loop_guard"


def _parts(content: Any) -> list[Any]:
    return list(getattr(content, "parts", None) or [])


def _calls(content: Any) -> list[ToolCall]:
    return [ToolCall(p.function_call.id, p.function_call.name or "", p.function_call.args)
            for p in _parts(content) if getattr(p, "function_call", None) is not None]


def response_value(response: Any) -> Any:
    """What a function response says: ADK wraps a tool's value that is not a dict as
    ``{"result": value}``; that value, else the dict.

    >>> response_value({"result": "ok"}), response_value({"a": 1})
    ('ok', {'a': 1})
    """
    if isinstance(response, dict) and set(response) == {"result"}:
        return response["result"]
    return response


def _returns(content: Any) -> list[tuple[str | None, Any]]:
    """(call id, value) of the function responses of a content."""
    return [(p.function_response.id, response_value(p.function_response.response))
            for p in _parts(content) if getattr(p, "function_response", None) is not None]


def trajectory_from_events(events: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from ADK session events (``session.events``): each model event with
    function calls is one turn; the function responses answering them are the results
    (a ``{"result": value}`` response gives ``value``)."""
    whole = [e for e in events if not getattr(e, "partial", False)]
    # an event without calls (the model's text, a response) leaves the open turn open
    out = turn_events(whole, lambda e: _calls(e.content) or None,
                      lambda e: [(cid, value, True) for cid, value in _returns(e.content)
                                 if cid is not None])
    return Trajectory(events=tuple(out), id=id, source=SOURCE, format=FORMAT)


@dataclass
class _Run:
    """One invocation's state."""

    guard: StepGuard
    seen: int  # session events already read
    refused: dict[str, str] = field(default_factory=dict)
    pending: Decision | None = None  # a stop decided before the calls (answered)
    stopping: Decision | None = None  # the stop to raise
    warnings: list[tuple[int, str]] = field(default_factory=list)  # (contents index, text)


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from google.adk.plugins.base_plugin import BasePlugin
        from google.genai import types
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "google.adk") from exc

    class LoopStoppedError(LoopStopped, RuntimeError):
        """Raised out of ``runner.run_async`` when the loop goes on up to ``stop_at``."""

    def warning_content(text: str) -> Any:
        return types.Content(role="user", parts=[types.Part(text=text)])

    class MaxRepeatGuard(ResultsOfLatestRun, BasePlugin):  # type: ignore[misc]
        """Warns, refuses and stops an ADK agent that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            super().__init__(name=PLUGIN_NAME)
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.runs: dict[str, _Run] = {}

        def _run(self, invocation_id: str, events: Sequence[Any]) -> _Run:
            run = self.runs.get(invocation_id)
            if run is None:
                guard = StepGuard(self.graders, policy=self.policy, format=FORMAT,
                                  source=SOURCE)
                run = self.runs[invocation_id] = _Run(guard, len(events))
            return run

        def _stop_check(self, *, callback_context: Any = None, tool_context: Any = None,
                        **_: Any) -> None:
            """An agent callback (before the model, before a tool): raise the stop."""
            context = callback_context if callback_context is not None else tool_context
            run = self.runs.get(context.invocation_id)
            if run is not None and run.stopping is not None:
                raise LoopStoppedError(run.stopping)

        async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
            for name in ("before_model_callback", "before_tool_callback"):
                if not hasattr(agent, name):
                    continue  # not an LlmAgent: no model, no tools of its own
                have = getattr(agent, name)
                have = [] if have is None else have if isinstance(have, list) else [have]
                if not any(getattr(c, "__self__", None) is self for c in have):
                    setattr(agent, name, [*have, self._stop_check])

        async def before_run_callback(self, *, invocation_context: Any) -> None:
            self.runs.pop(invocation_context.invocation_id, None)
            self._run(invocation_context.invocation_id, invocation_context.session.events)

        async def after_run_callback(self, *, invocation_context: Any) -> None:
            self.runs.pop(invocation_context.invocation_id, None)

        async def on_run_error_callback(self, *, invocation_context: Any,
                                        error: Exception) -> None:
            self.runs.pop(invocation_context.invocation_id, None)

        def _catch_up(self, run: _Run, events: Sequence[Any]) -> bool:
            """Feed the function responses that arrived; whether the step was refused."""
            refused = False
            for event in events[run.seen:]:
                for cid, value in _returns(event.content):
                    if cid in run.refused:
                        refused = True
                    else:
                        run.guard.answer(cid, value)
            run.seen = len(events)
            run.refused = {}
            return refused

        async def before_model_callback(self, *, callback_context: Any,
                                        llm_request: Any) -> None:
            events = callback_context.session.events
            run = self._run(callback_context.invocation_id, events)
            refused = self._catch_up(run, events)
            decision = run.guard.finish()
            if run.pending is not None:  # the stopped step is answered: stop now
                run.stopping = run.guard.stop(run.pending)
                return
            if decision.action >= Action.STOP:
                run.stopping = run.guard.stop(decision)  # raised by _stop_check next
                return
            if decision.action >= Action.WARN and not refused and decision.message:
                run.warnings.append((len(llm_request.contents), decision.message))
            for shift, (at, text) in enumerate(run.warnings):
                llm_request.contents.insert(at + shift, warning_content(text))

        async def after_model_callback(self, *, callback_context: Any,
                                       llm_response: Any) -> None:
            if getattr(llm_response, "partial", False):
                return
            for part in _parts(llm_response.content):
                call = getattr(part, "function_call", None)
                if call is not None and not call.id:
                    call.id = f"adk-{uuid.uuid4()}"  # ADK's own form, kept from the model
            calls = _calls(llm_response.content)
            if not calls:
                return
            run = self._run(callback_context.invocation_id, callback_context.session.events)
            self._catch_up(run, callback_context.session.events)
            ahead = run.guard.start(calls)
            if ahead.action >= Action.BLOCK:  # (the stop message, at stop_at)
                text = run.guard.refuse(ahead)
                run.refused = {c.id: text for c in calls if c.id is not None}
            if ahead.action >= Action.STOP:
                run.pending = ahead

        async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                       tool_context: Any) -> dict[str, Any] | None:
            run = self.runs.get(tool_context.invocation_id)
            if run is None:
                return None
            text = run.refused.get(tool_context.function_call_id)
            return None if text is None else {"result": text}

    return MaxRepeatGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The `LoopStopped` (a ``RuntimeError``) an ADK guard raises to stop a run."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> BasePlugin:
    """An ADK plug-in guarding every agent a runner runs against loops.

    Needs ``google-adk`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> loop_guard(MaxRepeatConfig(max=3)).name
    'maxrepeat_loop_guard'

    In an app: ``App(name=..., root_agent=agent, plugins=[guard])``.
    """
    plugin: BasePlugin = _CLASSES.loop_guard(graders, policy)
    return plugin
