"""The escalation policy every live guard shares: warn, then block, then stop.

A guard (a Claude Code / Codex / Gemini CLI / Copilot CLI hook, a framework adapter)
keeps one `Monitor` per grader config and, after each step, asks `Escalation.decide()`
what to do. The answer depends only on how far the loop still going on is above ``max``:

* ``excess = occurrences - max`` of the run above ``max`` that reaches the last step (a
  loop the model already left is history: `maxrepeat grade` still fails the session, but
  nobody is told again);
* `Policy` maps the excess to an `Action`: by default ``WARN`` at 1 (the first call at
  which `grade()` of the session so far fails), ``BLOCK`` at 2 (the next repeat is refused
  or answered with a blocking reason), ``STOP`` at 3 (the agent is stopped);
* one `Decision` per step: parallel calls of one turn share their step, so the model is
  told once per turn, never once per call (a stronger action in the same step still
  speaks once more);
* `loop_message` builds the one text every guard shows, naming the repeated action (or
  the cycle), how often it ran and the limit.

`Escalation.would_exceed` answers, without changing the monitors, what the decision would
be if some more events (a call not yet made) were fed: a ``PreToolUse``-style guard in
``name`` / ``name-args`` mode refuses a call before it runs.

The policy is pure (no I/O); `EscalationState` is the little it remembers between steps,
saved with the monitors by `maxrepeat.guards.session`.

>>> from maxrepeat.core.config import MaxRepeatConfig
>>> from maxrepeat.core.monitor import Monitor
>>> esc = Escalation([Monitor(MaxRepeatConfig(max=2, match="name"))])
>>> actions = []
>>> for i in range(6):
...     _ = esc.monitors[0].feed({"type": "tool_call",
...                               "data": {"toolName": "ls", "toolCallId": str(i)}})
...     actions.append(esc.decide().action.name)
>>> actions
['NONE', 'NONE', 'WARN', 'BLOCK', 'STOP', 'STOP']
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from ..core.events import EventLike
from ..core.monitor import Monitor
from ..core.preview import shorten
from ..core.result import GraderResult, Run

__all__ = [
    "Action",
    "Policy",
    "Loop",
    "Decision",
    "EscalationState",
    "Escalation",
    "live_loops",
    "loop_message",
    "MESSAGE_LIMIT",
]

#: The longest message a guard shows the model (agents cut or reject longer hook output).
MESSAGE_LIMIT: Final = 4000


class Action(enum.IntEnum):
    """What a guard does at a step, weakest first (comparable: ``STOP > BLOCK``)."""

    NONE = 0
    WARN = 1  #: tell the model (additional context it reads with the tool result)
    BLOCK = 2  #: refuse the repeated call (or answer it with a blocking reason)
    STOP = 3  #: stop the agent


@dataclass(frozen=True)
class Policy:
    """Thresholds in occurrences above ``max``, each with a switch.

    With ``max=3`` and the defaults, the 4th copy in a row warns, the 5th is blocked and the
    6th stops the agent. Why these defaults: ``docs/design/guards.md``.

    >>> Policy().action_for(1), Policy().action_for(2), Policy().action_for(9)
    (<Action.WARN: 1>, <Action.BLOCK: 2>, <Action.STOP: 3>)
    >>> Policy(stop=False).action_for(9)
    <Action.BLOCK: 2>
    >>> Policy(warn_at=0)
    Traceback (most recent call last):
    ...
    ValueError: warn_at must be an integer >= 1 (got 0)
    """

    warn_at: int = 1
    block_at: int = 2
    stop_at: int = 3
    warn: bool = True
    block: bool = True
    stop: bool = True

    def __post_init__(self) -> None:
        for field in ("warn_at", "block_at", "stop_at"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{field} must be an integer >= 1 (got {value!r})")

    def action_for(self, excess: int) -> Action:
        """The strongest enabled action whose threshold ``excess`` reaches."""
        if self.stop and excess >= self.stop_at:
            return Action.STOP
        if self.block and excess >= self.block_at:
            return Action.BLOCK
        if self.warn and excess >= self.warn_at:
            return Action.WARN
        return Action.NONE


@dataclass(frozen=True)
class Loop:
    """A loop still going on: grader ``grader``'s ``run``, above ``max``."""

    grader: str
    run: Run
    max: int

    @property
    def excess(self) -> int:
        """Occurrences above ``max`` (1 at the first failing call)."""
        return self.run.occurrences - self.max

    def describe(self) -> str:
        """What is repeated and how often, in words.

        >>> Loop("g", Run(1, 4, 0, 3, 0, 3, ("Bash(cmd='false')",)), 3).describe()
        "Bash(cmd='false') 4 times in a row"
        >>> Loop("g", Run(2, 3, 0, 5, 0, 5, ("a", "b")), 2).describe()
        'the cycle of 2 steps [a | b] 3 times in a row'
        """
        run = self.run
        if run.period == 1:
            return f"{run.pattern[0]} {run.occurrences} times in a row"
        return (f"the cycle of {run.period} steps [{' | '.join(run.pattern)}] "
                f"{run.occurrences} times in a row")


@dataclass(frozen=True)
class Decision:
    """What a guard does now: ``action``, the ``message`` for the model (None with
    ``NONE``), the graders' ``results`` so far and the ``loops`` it is about."""

    action: Action
    message: str | None
    results: tuple[GraderResult, ...]
    loops: tuple[Loop, ...] = ()

    @property
    def speaks(self) -> bool:
        """Whether the guard says anything at all."""
        return self.action is not Action.NONE


class EscalationState(msgspec.Struct):
    """What `Escalation` remembers between steps (saved by the guard session layer): the
    step it last spoke at (watched steps per grader), the action it took there, and the
    loop it spoke about (grader, first step, period) with its occurrences then."""

    step: list[int] = msgspec.field(default_factory=list)
    action: int = 0
    loop: list[Any] = msgspec.field(default_factory=list)
    occurrences: int = 0


def live_loops(results: Iterable[GraderResult]) -> tuple[Loop, ...]:
    """The loop still going on for each failing grader (the run above ``max`` that reaches
    the last watched step; the longest when several do), strongest first."""
    loops = []
    for r in results:
        if not r.failed:
            continue
        last = r.metadata.watched_steps - 1
        live = [run for run in r.metadata.runs if run.end_step + run.period > last]
        if live:
            run = max(live, key=lambda x: (x.occurrences, -x.period))
            loops.append(Loop(r.name, run, r.metadata.max))
    loops.sort(key=lambda lp: -lp.excess)
    return tuple(loops)


_ADVICE: Final = {
    Action.WARN: "This is not making progress. Read the last result, then change course: "
                 "try a different approach, or stop and ask the user.",
    Action.BLOCK: "Do not run it again: the guard refuses further repeats. Read the last "
                  "result and change course, or stop and ask the user.",
    Action.STOP: "The loop guard is stopping the agent: this run ends here, unfinished. "
                 "Do not call any more tools; tell the user that the maxrepeat loop guard "
                 "stopped the run, and which action repeated.",
}
_LEAD: Final = {
    Action.WARN: "maxrepeat loop guard (warning)",
    Action.BLOCK: "maxrepeat loop guard (blocked)",
    Action.STOP: "maxrepeat loop guard (stopped)",
}


def loop_message(action: Action, loops: Sequence[Loop], *, refused: bool = False) -> str:
    """The one text every guard shows: what is repeated, how often, the limit, and what
    happens now. ``refused``: the call was refused before it ran (a pre-call guard).

    >>> run = Run(1, 3, 0, 2, 0, 2, ("Bash(command='false')",))
    >>> print(loop_message(Action.WARN, [Loop("loops", run, 2)]))
    maxrepeat loop guard (warning): you repeated Bash(command='false') 3 times in a row (at most 2 allowed; grader loops).
    This is not making progress. Read the last result, then change course: try a different approach, or stop and ask the user.
    """  # noqa: E501 (a doctest's output lines, as printed)
    if action is Action.NONE or not loops:
        raise ValueError("a message needs an action and at least one loop")
    verb = "this call would repeat" if refused else "you repeated"
    lines = [f"{verb} {lp.describe()} (at most {lp.max} allowed; grader {lp.grader})"
             for lp in loops]
    head = f"{_LEAD[action]}: "
    body = head + lines[0] + "." if len(lines) == 1 else head + "\n" + "\n".join(
        f"- {line}" for line in lines)
    if refused and action is Action.BLOCK:
        advice = "The call was refused and did not run. " + _ADVICE[action]
    else:
        advice = _ADVICE[action]
    return shorten(body + "\n" + advice, MESSAGE_LIMIT)


class Escalation:
    """The policy applied to live monitors (one per grader config), step after step.

    ``decide()`` after each step (each tool call, or each result) gives the `Decision`;
    ``state`` is what to save between hook processes (pass it back as ``state=``).
    ``would_exceed(events)`` gives the decision as if ``events`` had been fed, leaving the
    monitors unchanged.
    """

    def __init__(self, monitors: Sequence[Monitor], policy: Policy | None = None,
                 state: EscalationState | None = None) -> None:
        self.monitors = list(monitors)
        self.policy = policy or Policy()
        self.state = state if state is not None else EscalationState()

    def _where(self, results: Sequence[GraderResult]) -> list[int]:
        return [r.metadata.watched_steps for r in results]

    def _judge(self, results: tuple[GraderResult, ...]) -> tuple[Action, tuple[Loop, ...]]:
        loops = live_loops(results)
        if not loops:
            return Action.NONE, ()
        action = self.policy.action_for(loops[0].excess)
        return action, loops if action is not Action.NONE else ()

    def decide(self, *, at_least: Action = Action.WARN, refused: bool = False,
               judged: Sequence[bool] | None = None) -> Decision:
        """The decision for the events fed so far. The guard speaks when the loop grew
        by a copy (or is a new loop) or the action got stronger, at most once per step:
        parallel calls of one turn, and the partial copies of a cycle, say nothing new.

        ``at_least``: weaker actions are not taken (nor remembered): a pre-call guard only
        refuses. ``refused``: the message says the call was refused before it ran.
        ``judged``: which monitors count (a pre-call guard cannot judge ``observation``
        graders, whose verdict needs the result); all by default.
        """
        results = tuple(m.result() for m in self.monitors)
        counted = results if judged is None else tuple(
            r for r, j in zip(results, judged, strict=True) if j)
        action, loops = self._judge(counted)
        if action < max(at_least, Action.WARN):
            return Decision(Action.NONE, None, results)
        top = loops[0]
        where = self._where(results)
        key = [top.grader, top.run.start_step, top.run.period]
        st = self.state
        stronger = action > st.action
        grew = key != st.loop or top.run.occurrences > st.occurrences
        if (where == st.step and not stronger) or not (stronger or grew):
            return Decision(Action.NONE, None, results, loops)
        self.state = EscalationState(where, int(action), key, top.run.occurrences)
        return Decision(action, loop_message(action, loops, refused=refused), results, loops)

    def would_exceed(self, events: Iterable[EventLike | Mapping[str, Any]]) -> Decision:
        """The decision if ``events`` (a call not made yet, as the log would show it) were
        fed now: for refusing a call before it runs. Monitors and state stay unchanged;
        the copies cost one save and restore of each monitor's small state."""
        todo = list(events)
        copies = []
        for m in self.monitors:
            first = m.result()
            copy = Monitor.from_bytes(m.to_bytes(), m.config, name=first.name)
            copy.feed_all(todo)
            copies.append(copy)
        results = tuple(c.result() for c in copies)
        action, loops = self._judge(results)
        if action is Action.NONE:
            return Decision(Action.NONE, None, results)
        return Decision(action, loop_message(action, loops, refused=True), results, loops)
