"""The loop guard for smolagents (the ``maxrepeat[smolagents]`` extra).

::

    guard = loop_guard(MaxRepeatConfig.preset("live"))
    agent = ToolCallingAgent(tools=[run_tests], model=model, step_callbacks=[guard])

One wiring point is enough: at the first step the guard completes the wiring of the
agent (``step_callbacks=[guard]`` makes the agent's tools refusing copies; tools from
``guard.tools([...])`` register the guard as the agent's step callback).

* The guard is a step callback: after each ``ActionStep`` (the calls of one model
  response are one step) it feeds the step's calls and observations to the monitors. At
  the warning level it appends a note naming the repeated action (or cycle) and its count
  to the step's observations, which is what the model reads next; when the loop goes on
  up to ``stop_at`` it raises `LoopStoppedError` (an ``AgentError``) out of ``agent.run``.
* ``guard.tools`` returns copies of the tools that refuse a call before it runs when the
  policy says a step of that call would be refused (the refusal is the call's output).
  smolagents has no hook between a model response and its tool calls, so a call is judged
  as a step of its own: loops of single-call steps are refused, loops of parallel calls
  are warned (never told of a refusal) and stopped.

Each ``agent.run`` starts from nothing, whatever ended the last run (a stop, a final
answer, max steps, an exception): the tools of a run's first step are judged on that run.

smolagents keeps one observation text per step (the outputs of its calls, joined); a step
of several calls gives that text as each call's result. `trajectory_from_steps` converts
``agent.memory.steps`` the same way (without the guard's notes) for ``maxrepeat.grade``
afterwards. ``smolagents`` is imported only when a guard is made.
"""

from __future__ import annotations

import copy
import itertools
import sys
import threading
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

from ...core.canonical import canonical_bytes
from ...core.errors import MissingExtraError
from ...core.events import Trajectory, tool_call, tool_result, turn_end, turn_start
from .._live import (
    FrameworkClasses,
    Graders,
    LoopStopped,
    ResultsOfLogic,
    StepGuard,
    ToolCall,
    load_graders,
)
from ..policy import Action, Policy, loop_message

__all__ = ["loop_guard", "trajectory_from_steps", "stop_error_class", "NOTE_MARK"]

_EXTRA = "smolagents"
FORMAT = "smolagents"
SOURCE = "<smolagents memory>"
#: where a guard's note starts in a step's observations
NOTE_MARK: Final = "\n\n[maxrepeat] "
_MARK: Final = "_maxrepeat_guard"  # a guarded tool copy's guard


def _calls(step: Any) -> list[ToolCall]:
    return [ToolCall(c.id, c.name, c.arguments) for c in getattr(step, "tool_calls", None) or ()]


def _observation(step: Any) -> Any:
    text = getattr(step, "observations", None)
    if isinstance(text, str):
        return text.split(NOTE_MARK, 1)[0]
    error = getattr(step, "error", None)
    return None if error is None else str(error)


def _events(steps: Sequence[Any]) -> list[Any]:
    events: list[Any] = []
    for step in steps:
        calls = _calls(step)
        if not calls:
            continue
        observation = _observation(step)
        events.append(turn_start())
        events += [tool_call(c.name, c.id, c.arguments) for c in calls]
        events += [tool_result(c.id, observation) for c in calls if c.id is not None]
        events.append(turn_end())
    return events


def trajectory_from_steps(steps: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from smolagents memory steps (``agent.memory.steps``): each
    ``ActionStep`` with tool calls is one turn, its observations the calls' results."""
    return Trajectory(events=tuple(_events(steps)), id=id, source=SOURCE,
                      format=FORMAT)


def _key(name: str, arguments: Any) -> tuple[str, bytes] | None:
    try:
        return (name, canonical_bytes(arguments))
    except (TypeError, ValueError, RecursionError):
        return None


class _Logic:
    def __init__(self, graders: Graders, policy: Policy | None) -> None:
        self.guard = StepGuard(graders, policy=policy, format=FORMAT, source=SOURCE)
        self.refused: dict[tuple[str, bytes], str] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count()
        self.steps = 0

    def check(self, name: str, arguments: Any) -> str | None:
        """The refusal for a call about to run, or None to run it."""
        with self.lock:
            trial = ToolCall(f"\x00maxrepeat-preview-{next(self.ids)}", name, arguments)
            ahead = self.guard.preview([trial])
            if ahead.action < Action.BLOCK:
                return None
            text = self.guard.refusal(ahead).strip()
            key = _key(name, arguments)
            if key is not None:
                self.refused[key] = text
            return text

    def step(self, step: Any) -> Any:
        """Feed a finished step; the decision after it."""
        calls = _calls(step)
        with self.lock:
            if not calls:
                return None
            ahead = self.guard.start(calls)
            observation = _observation(step)
            refused = [c.id for c in calls
                       if c.id is not None and _key(c.name, c.arguments) in self.refused]
            if refused:
                self.guard.refuse(ahead, refused)
            for c in calls:
                if c.id not in refused:
                    self.guard.answer(c.id, observation, success=step.error is None)
            self.refused = {}
            return self.guard.finish()


def _calling_agent() -> Any:
    """The agent whose ``execute_tool_call`` runs the tool being called, if any."""
    frame: types.FrameType | None = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return None
        if frame.f_code.co_name == "execute_tool_call":
            return frame.f_locals.get("self")
        frame = frame.f_back
    return None


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from smolagents.memory import ActionStep
        from smolagents.utils import AgentError, AgentMaxStepsError
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "smolagents") from exc

    class LoopStoppedError(AgentError, LoopStopped):  # type: ignore[misc]
        """Raised out of ``agent.run`` when the loop goes on up to ``stop_at``."""

        def __init__(self, decision: Any, logger: Any) -> None:
            LoopStopped.__init__(self, decision)
            self.message = str(self)  # what AgentError.__init__ would set and log
            logger.log_error(self.message)

    class MaxRepeatStepCallback(ResultsOfLogic):
        """A smolagents step callback that warns, refuses and stops an agent that
        repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.graders = load_graders(graders)  # a config file is read once
            self.policy = policy
            self.logic = _Logic(self.graders, policy)
            self.agent: Any = None  # the agent of the last step seen (a weak reference)
            self.ended = False  # the last run stopped, answered or ran out of steps
            self.lock = threading.Lock()
            self.wired: weakref.WeakSet[Any] = weakref.WeakSet()

        def _wire(self, agent: Any) -> None:
            """Complete the wiring of ``agent``: this guard among its step callbacks and
            its tools refusing (either one wiring point is enough)."""
            self.agent = weakref.ref(agent)
            if agent in self.wired:
                return
            with self.lock:
                registry = getattr(agent, "step_callbacks", None)
                known = getattr(registry, "_callbacks", {}).get(ActionStep, ())
                if registry is not None and not any(cb is self for cb in known):
                    registry.register(ActionStep, self)
                tools: Any = getattr(agent, "tools", None)
                for name, tool in list(tools.items() if isinstance(tools, dict) else ()):
                    if name != "final_answer" and getattr(tool, _MARK, None) is not self:
                        tools[name] = self.tools([tool])[0]
                self.wired.add(agent)

        def _current(self, step_number: int | None) -> _Logic:
            """This run's state: a new one when a new run began (after any end of the
            last, or at step 1 of a run: smolagents numbers each run's steps from 1). The
            tools of a step run before its callback, so they ask too, with the number
            of the agent's step in progress."""
            if step_number is None and self.agent is not None:
                agent = self.agent()
                step_number = getattr(agent, "step_number", None)
            with self.lock:
                if self.ended or (step_number == 1 and self.logic.steps):
                    self.logic = _Logic(self.graders, self.policy)
                    self.ended = False
                logic: _Logic = self.logic
                return logic

        def __call__(self, memory_step: Any, agent: Any = None) -> None:
            if not isinstance(memory_step, ActionStep):
                return
            if agent is not None:
                self._wire(agent)
            logic = self._current(memory_step.step_number)
            logic.steps += 1
            if memory_step.is_final_answer or isinstance(memory_step.error,
                                                          AgentMaxStepsError):
                self.ended = True
            try:
                self._judge(memory_step, agent)
            except LoopStopped:
                self.ended = True
                raise

        def _judge(self, memory_step: Any, agent: Any) -> None:
            decision = self.logic.step(memory_step)
            if decision is None:
                return
            if decision.action >= Action.STOP:
                stopped = self.logic.guard.stop(decision)
                if agent is not None:
                    # The step is appended to memory after the callbacks: add it now, so
                    # the memory holds the step the run stopped at.
                    if memory_step not in agent.memory.steps:
                        agent.memory.steps.append(memory_step)
                    raise LoopStoppedError(stopped, agent.logger)
                raise LoopStopped(stopped)
            refused = any(isinstance(o, str) and o.startswith("maxrepeat loop guard")
                          for o in [memory_step.observations])
            if decision.action >= Action.WARN and decision.message and not refused:
                message = decision.message
                if decision.action is Action.BLOCK and len(memory_step.tool_calls or ()) > 1:
                    # Parallel calls are not refused (the tools see one call at a time):
                    # the model is warned, not told of refusals that do not come.
                    message = loop_message(Action.WARN, decision.loops)
                memory_step.observations = (
                    (memory_step.observations or "") + NOTE_MARK + message)

        def tools(self, tools: Sequence[Any]) -> list[Any]:
            """Copies of the tools that refuse a call the policy would refuse."""
            out = []
            for tool in tools:
                guarded = copy.copy(tool)
                guarded.forward = self._forward(tool.name, tool.forward)
                setattr(guarded, _MARK, self)
                out.append(guarded)
            return out

        def _forward(self, name: str, inner: Callable[..., Any]) -> Callable[..., Any]:
            def forward(*args: Any, **kwargs: Any) -> Any:
                arguments = kwargs if kwargs or not args else args[0]
                agent = _calling_agent()
                if agent is not None:
                    self._wire(agent)
                text = self._current(None).check(name, arguments)
                if text is not None:
                    return text
                return inner(*args, **kwargs)

            return forward

    return MaxRepeatStepCallback, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The ``AgentError`` and `LoopStopped` raised out of ``agent.run`` to stop it."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """A smolagents step callback guarding one agent against loops (see the module doc).

    Needs ``smolagents`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig(max=3))).__name__
    'MaxRepeatStepCallback'
    """
    return _CLASSES.loop_guard(graders, policy)
