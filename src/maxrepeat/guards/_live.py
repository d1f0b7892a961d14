"""What every framework guard shares: one run's steps fed to the escalation policy.

A framework adapter reports, in its own hooks, the tool calls of one model response
(`StepGuard.start`, before they run), each call's result (`StepGuard.answer`) and the end
of the step (`StepGuard.finish`, before the next model call). The calls of one response
are one step (``turn_start`` … ``turn_end`` in the monitors), so parallel calls count once.

`start` returns what the step would do if its calls ran (`Escalation.would_exceed`): exact
in ``name`` and ``name-args`` modes, where the adapter then refuses the calls
(`Action.BLOCK`: each is answered with the refusal, which is also what the monitors see)
or stops the run before they run (`Action.STOP`). In ``observation`` mode a result is not
known before the call, so the decision after the step (`finish`) does the rest: its
message tells the model (warning, then blocking reason), and at ``stop_at`` the adapter
stops the run at its next hook. The results are always those of what the model saw, so
they equal ``maxrepeat grade`` of the run's messages converted afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..core.config import unique_names
from ..core.errors import LoopStopped
from ..core.events import tool_call, tool_result, turn_end, turn_start
from ..core.monitor import Monitor
from ..core.result import GraderResult
from ..specs.graders import Graders, load_graders
from .policy import Action, Decision, Escalation, Policy

__all__ = ["Graders", "ToolCall", "StepGuard", "LoopStopped", "load_graders",
           "FrameworkClasses", "ResultsOfLogic", "ResultsOfRun",
           "ResultsOfLatestRun", "answers_of_open_step"]

_REFUSED = "maxrepeat loop guard (blocked): this call repeats a loop and was refused."


class ToolCall(NamedTuple):
    """One tool call of a model response, as the monitors see it."""

    id: str | None
    name: str
    arguments: Any


def answers_of_open_step(messages: Sequence[Any], pending: set[str],
                         asks: Callable[[Any], bool],
                         returns: Callable[[Any], list[tuple[str, Any, bool]]],
                         ) -> list[tuple[str, Any, bool]]:
    """(call id, value, success) of the ``pending`` calls, in order, from the messages
    after the newest one that ``asks`` (the model's response holding the calls): read
    from the end, so a framework trimming or rewriting the oldest history loses no read
    position, and the cost is that of the open step, not of the history.

    >>> msgs = [{"ask": 1}, {"r": [("a", 1, True)]}, {"ask": 1}, {"r": [("b", 2, True)]}]
    >>> answers_of_open_step(msgs, {"a", "b"}, lambda m: "ask" in m, lambda m: m.get("r", []))
    [('b', 2, True)]
    """
    newest: list[Any] = []
    for message in reversed(messages):
        if asks(message):
            break
        newest.append(message)
    return [(cid, value, ok) for message in reversed(newest)
            for cid, value, ok in returns(message) if cid in pending]


class StepGuard:
    """One agent run's guard: its monitors, the escalation policy, the open step.

    >>> from maxrepeat import MaxRepeatConfig
    >>> g = StepGuard(MaxRepeatConfig(max=1, match="name-args"))
    >>> for i in range(3):
    ...     ahead = g.start([ToolCall(f"c{i}", "ls", {"path": "."})])
    ...     g.answer(f"c{i}", "a.txt")
    ...     print(ahead.action.name, g.finish().action.name)
    NONE NONE
    WARN WARN
    BLOCK BLOCK
    """

    def __init__(self, graders: Graders, *, policy: Policy | None = None,
                 format: str = "vally", id: str | None = None,
                 source: str | None = None) -> None:
        self.configs = load_graders(graders)
        self.policy = policy or Policy()
        monitors = [Monitor(c, name=n, format=format, id=id, source=source)
                    for c, n in zip(self.configs, unique_names(self.configs), strict=True)]
        self.escalation = Escalation(monitors, self.policy)
        ahead = [m for m in monitors if not m.config.observes]  # judge a call before it runs
        self._ahead = Escalation(ahead, self.policy) if ahead else None
        self._open: list[str] = []
        self._in_step = False
        self.decision = Decision(Action.NONE, None, ())

    @property
    def monitors(self) -> list[Monitor]:
        """One monitor per grader config, fed what the model saw."""
        return self.escalation.monitors

    def results(self) -> tuple[GraderResult, ...]:
        """The graders' results for the run so far."""
        return tuple(m.result() for m in self.monitors)

    def _feed(self, events: Sequence[Any]) -> None:
        for m in self.monitors:
            m.feed_all(events)

    def preview(self, calls: Sequence[ToolCall]) -> Decision:
        """What a step of these calls would do if they ran, without feeding it."""
        if self._in_step:
            self.finish()
        events = [turn_start(), *(tool_call(c.name, c.id, c.arguments) for c in calls),
                  turn_end()]
        # A step whose results are not known yet is empty for an ``observation`` grader
        # and ends its loop: only the other graders can say anything before the calls
        # run, and copying an observation monitor (its answers grow with the run) would
        # make each step cost more than the last.
        if self._ahead is None:
            return Decision(Action.NONE, None, self.results())
        return self._ahead.would_exceed(events)

    def start(self, calls: Sequence[ToolCall]) -> Decision:
        """A model response asks for ``calls``: they are fed now (the step stays open
        until `finish`); returns what the step would do if they ran (see `preview`)."""
        ahead = self.preview(calls)
        self._feed([turn_start(), *(tool_call(c.name, c.id, c.arguments) for c in calls)])
        self._open = [c.id for c in calls if c.id is not None]
        self._in_step = True
        return ahead

    def answer(self, call_id: str | None, result: Any, *, success: bool | None = None) -> None:
        """The result of one call of the open step, as the model sees it."""
        if call_id is not None:
            self._feed([tool_result(call_id, result, True if success is None else success)])

    @staticmethod
    def refusal(ahead: Decision) -> str:
        """The text a refused call gets as its result."""
        return ahead.message or _REFUSED

    def refuse(self, ahead: Decision, ids: Sequence[str] | None = None) -> str:
        """Refuse the calls of the open step (all, or those in ``ids``): each is answered
        with the returned text, which the adapter gives the model as their result."""
        text = self.refusal(ahead)
        self._feed([tool_result(cid, text, False) for cid in self._open
                    if ids is None or cid in ids])
        return text

    def finish(self) -> Decision:
        """The open step is over (its answers given): the decision after it (the policy
        speaks once per step, when the loop grew or the action got stronger); a no-op
        `Action.NONE` decision when no step is open."""
        if not self._in_step:
            return Decision(Action.NONE, None, self.results())
        self._feed([turn_end()])
        self._in_step = False
        self._open = []
        self.decision = self.escalation.decide()
        return self.decision

    def stop(self, decision: Decision) -> Decision:
        """The stop decision, carrying the results of the run so far."""
        return Decision(Action.STOP, decision.message, self.results(), decision.loops)


class FrameworkClasses:
    """A framework guard's classes, made on first use: they subclass the framework's own
    classes, and the framework (an optional extra) is imported only when a guard is made.

    ``build`` imports the framework (raising `MissingExtraError` without it) and returns
    the guard class (what ``loop_guard`` makes) and the exception that stops a run (a
    `LoopStopped`, and the framework's error type where the framework needs one).

    >>> classes = FrameworkClasses(lambda: (dict, LoopStopped))
    >>> classes.guard, classes.error
    (<class 'dict'>, <class 'maxrepeat.core.errors.LoopStopped'>)
    """

    def __init__(self, build: Callable[[], tuple[type[Any], type[LoopStopped]]]) -> None:
        self._build = build
        self._made: tuple[type[Any], type[LoopStopped]] | None = None

    def _classes(self) -> tuple[type[Any], type[LoopStopped]]:
        if self._made is None:
            self._made = self._build()
        return self._made

    @property
    def guard(self) -> type[Any]:
        """The guard class."""
        return self._classes()[0]

    @property
    def error(self) -> type[LoopStopped]:
        """The exception that stops a run."""
        return self._classes()[1]

    def stop_error_class(self) -> type[LoopStopped]:
        """The exception the framework's guard stops a run with (a `LoopStopped`, and
        the framework's own error type where the framework needs one): what a framework
        module gives as its ``stop_error_class``."""
        return self.error

    def loop_guard(self, graders: Graders, policy: Policy | None) -> Any:
        """A new guard: ``graders``, a `MaxRepeatConfig`, several, or a YAML config file
        path (read once); ``policy``, when to warn, refuse and stop. Raises
        `MissingExtraError` naming the extra when the framework is not installed."""
        return self.guard(graders, policy)


class ResultsOfRun:
    """The ``results`` of a framework guard whose current run's state is ``self.run``
    (with its `StepGuard` as ``.guard``), mixed into the guard class."""

    run: Any

    @property
    def results(self) -> tuple[GraderResult, ...]:
        """The graders' results for the run so far."""
        results: tuple[GraderResult, ...] = self.run.guard.results()
        return results


class ResultsOfLatestRun:
    """The ``results`` of a framework guard that keeps each run's state in ``self.runs``
    (each with its `StepGuard` as ``.guard``, the latest last), mixed into the guard class."""

    runs: dict[Any, Any]

    @property
    def results(self) -> tuple[GraderResult, ...]:
        """The graders' results for the latest run (empty before any)."""
        runs = list(self.runs.values())
        results: tuple[GraderResult, ...] = runs[-1].guard.results() if runs else ()
        return results


class ResultsOfLogic:
    """The ``results`` of a framework guard whose run state is ``self.logic`` (with its
    `StepGuard` as ``.guard``), mixed into the guard class."""

    logic: Any

    @property
    def results(self) -> tuple[GraderResult, ...]:
        """The graders' results for the run so far."""
        results: tuple[GraderResult, ...] = self.logic.guard.results()
        return results

