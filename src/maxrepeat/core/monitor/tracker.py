"""The monitor's engine room: events in, steps pushed into the search, results out.

It applies the turn rules (``core/rules.py``) to the tail of steps not pushed yet, keeps
the answers of ``observation`` mode, and a checkpoint and log for results that arrive
after their step was pushed. `StepViews` sees steps, `advance` searches, `ResultBuilder`
answers; `Monitor` is the public face (and the saved state's keeper).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..canonical import MalformedValueError
from ..config import MaxRepeatConfig
from ..errors import TrajectoryFormatError, UnsafeMatchError, type_name
from ..events import (
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    EventLike,
    Trajectory,
    event_from_dict,
)
from ..grade import build_result
from ..result import GraderResult, RunOutcome, Watched
from ..rules import ALONE, DEFAULT_MAX_RUNS, JOIN, place_call
from ..steps import watcher
from .build import ResultBuilder
from .reduce import TOO_DEEP, reduce_answer, reduce_call
from .search import advance
from .state import STATE_VERSION, Answer, DoneStep, Front, OpenStep, State, Stretch
from .stepview import StepViews

if TYPE_CHECKING:
    from ..near.matching import Transform

#: How many distinct first results are shared at most before the table starts afresh.
SHARED_ANSWERS: Final = 4096

__all__ = ["Tracker"]


class Tracker:
    """The state of one monitor and the code that advances it, event by event."""

    def __init__(self, config: MaxRepeatConfig, *, forget_answers: bool = False,
                 max_runs: int = DEFAULT_MAX_RUNS) -> None:
        self._config = config
        self._period = config.max_cycle_period
        self._match = config.match
        # name-args with with_observation keys each call by its arguments' digest and
        # its answer, exactly as observation mode keys it by its name's and its answer
        self._observation = config.observes
        self._watches = watcher(config)
        self.st = State(
            version=STATE_VERSION,
            front=Front(stretches=[Stretch() for _ in range(self._period)]),
        )
        self._pending: dict[str, list[OpenStep]] = {}
        # Equal first results share one Answer (a loop's results repeat): an answered id
        # then costs its dict slot and id string only. Bounded, so unique values cost no
        # more than before; sharing equal immutable values cannot change a verdict.
        self._shared: dict[tuple[bytes | None, str, str | None], Answer] = {}
        self._views = StepViews(self._observation, self._period,
                                empties=config.match == "observation")
        self._builder = ResultBuilder(config, max_runs)
        self._forget = forget_answers and self._observation
        self._transform: Transform | None = None
        if config.near is not None and config.match != "name":
            from ..near.matching import Transform  # near-duplicate settings only: start-up

            self._transform = Transform(config.near, self.st.clusters)

    def restore(self, state: State) -> None:
        """Continue from a saved state (checked by the caller to fit the config)."""
        self.st = state
        if self._transform is not None:
            from ..near.matching import Transform

            self._transform = Transform(self._transform.near, state.clusters)
        self._pending = {}
        self._views.live = None
        self._builder.forget()
        for step in (*state.log, *state.tail):
            for call in step.calls:
                if call.cid is not None and call.cid not in state.answers:
                    self._pending.setdefault(call.cid, []).append(step)

    def fail(self, reason: str) -> None:
        """Stop grading: every longer prefix is an error result with ``reason``."""
        self.st.error = reason

    def add(self, event: EventLike | Mapping[str, Any], where: str) -> bool:
        """Take one event (``where`` names the trajectory in error messages); whether the
        result may have changed."""
        st = self.st
        index = st.events
        st.events += 1
        if st.error is not None:
            return False
        if isinstance(event, Mapping):
            try:
                event = event_from_dict(event, index)
            except TrajectoryFormatError as err:
                # grade() refuses the whole trajectory, so every longer prefix too.
                st.error = f"malformed trajectory: {err}"
                st.malformed = True
                return True
        etype = event.type
        if etype == TOOL_CALL:
            self._call(index, event, where)
        elif etype == TOOL_RESULT:
            data = event.data
            cid = data.tool_call_id if data is not None else None
            if cid is not None and self._observation and cid not in st.answers:
                if self._answer(cid, data.result if data is not None else None):
                    self._replay()
        elif etype == TURN_START:
            self._close_turn()
            st.in_turn = True
        elif etype == TURN_END:
            self._close_turn()
            st.in_turn = False
        else:
            return True
        if st.tail and st.error is None:
            self._settle()
        return True

    def _call(self, index: int, event: Any, where: str) -> None:
        st = self.st
        data = event.data
        name = data.tool_name if data is not None else None
        if not isinstance(name, str):
            err = TrajectoryFormatError(
                None, f"events[{index}].data.toolName must be a string (got {type_name(name)})"
            )
            self.fail(f"malformed trajectory: {where}: {err}")
            return
        try:
            watched = self._watches(name)
        except UnsafeMatchError as exc:
            self.fail(str(exc))
            return
        if not watched:
            return
        cid = data.tool_call_id
        try:
            call = reduce_call(index, name, cid, data.arguments, self._match,
                               self._transform)
        except RecursionError:
            self.fail(TOO_DEEP)
            return
        except MalformedValueError as exc:
            self.fail(f"malformed value in trajectory: {exc}")
            return
        except Exception as exc:  # a bug, named as one
            from ..grade import internal_error

            self.fail(internal_error(exc))
            return
        st.calls += 1
        place = place_call(st.in_turn, st.open_turn)
        if place == JOIN:
            step = st.tail[-1]
            step.calls.append(call)
        else:
            step = OpenStep(st.steps, [call], closed=place == ALONE)
            st.steps += 1
            st.tail.append(step)
            st.open_turn = place != ALONE
        if self._observation and cid is not None:
            answer = st.answers.get(cid)
            if answer is None:
                step.waiting += 1
                self._pending.setdefault(cid, []).append(step)
            elif answer.error is not None:
                self.fail(answer.error)

    def take_answer(self, cid: str, answer: Answer) -> None:
        """Record ``answer`` (already reduced) as the first result of ``cid`` when none is
        known, as a ``tool_result`` event would, without taking an event."""
        if self._observation and self.st.error is None and cid not in self.st.answers:
            if self._record(cid, answer):
                self._replay()

    def _answer(self, cid: str, value: Any) -> bool:
        """Record the first result of ``cid``; whether a pushed step was waiting for it."""
        return self._record(cid, reduce_answer(value, self._transform))

    def _record(self, cid: str, answer: Answer) -> bool:
        shared = self._shared
        if len(shared) >= SHARED_ANSWERS:
            shared.clear()
        answer = shared.setdefault((answer.key, answer.preview, answer.error), answer)
        self.st.answers[cid] = answer
        self._views.live_answered(cid, answer)
        waiting = self._pending.pop(cid, None)
        if not waiting:
            return False
        if answer.error is not None:
            self.fail(answer.error)
            return False
        replay = False
        for step in waiting:
            step.waiting -= 1
            replay = replay or step.pushed
        return replay

    def _close_turn(self) -> None:
        st = self.st
        if st.open_turn:
            st.tail[-1].closed = True
            st.open_turn = False

    # -- steps ------------------------------------------------------------------------

    def _settle(self) -> None:
        """Push every leading tail step that no further call can join."""
        tail = self.st.tail
        n = 0
        while n < len(tail) and tail[n].closed:
            n += 1
        if n:
            ready = tail[:n]
            del tail[:n]
            for step in ready:
                self._push(step)

    def _push(self, step: OpenStep) -> None:
        """Add a closed step to the search; while it (or an earlier pushed step) waits for
        a result, keep a checkpoint to replay from when that result arrives."""
        st = self.st
        done = self._views.done(step, st.answers)
        if step.waiting or st.checkpoint is not None:
            if st.checkpoint is None:
                st.checkpoint = st.front.copy()
            step.pushed = True
            st.log.append(step)
        elif self._forget:
            for c in step.calls:
                if c.cid is not None:
                    st.answers.pop(c.cid, None)
        if advance(st.front, done, self._period, self._config.max):
            self._builder.forget()

    def _replay(self) -> None:
        """A pushed step's fingerprint changed: back to the checkpoint, push the log again."""
        st = self.st
        assert st.checkpoint is not None
        st.front = st.checkpoint
        st.checkpoint = None
        log = st.log
        st.log = []
        self._builder.forget()
        for step in log:
            step.pushed = False
        for step in log:
            self._push(step)

    # -- the answer -------------------------------------------------------------------

    def compute(self, trajectory: Trajectory, name: str) -> GraderResult:
        """The result of the events taken so far."""
        outcome, watched = self.outcome()
        return build_result(trajectory, self._config, name, outcome, watched)

    def outcome(self) -> tuple[RunOutcome, Watched]:
        """The run finder's outcome and the watched counts of the events taken so far."""
        st = self.st
        # Only the open turn's step is ever left unpushed (closed steps are pushed).
        if not st.tail:
            open_view: DoneStep | None = None
            equals = _never
        else:
            answers = st.answers
            views = self._views
            open_view, live = views.live_view(st.tail[-1], answers)

            def equals(other: DoneStep) -> bool:
                return views.live_equals(live, other, answers)

        empty = st.front.settled_empty + (1 if open_view is not None and open_view.key is None
                                          else 0)
        return (self._builder.outcome(st.front, open_view, equals),
                Watched(steps=st.steps, calls=st.calls, empty=empty))


def _never(other: DoneStep) -> bool:
    return False
