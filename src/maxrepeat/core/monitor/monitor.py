"""The `Monitor` class, the public face of the live grader: feed events, read results,
save and restore the state. The work is done by its `Tracker` (``tracker.py``); the
design is in ``docs/design/monitor.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict, Unpack

import msgspec

from ..config import MaxRepeatConfig
from ..events import EventLike, Trajectory
from ..grade import check_max_runs, error_result
from ..preview import inert
from ..result import GraderResult
from ..rules import DEFAULT_MAX_RUNS
from .reduce import TOO_DEEP
from .state import STATE_VERSION, Answer, State
from .tracker import Tracker

__all__ = ["Monitor"]


class MonitorOptions(TypedDict, total=False):
    """The keywords `Monitor` takes after its config (``Monitor(config, **options)``),
    which `Monitor.from_bytes` and `Monitor.from_events` take and pass on as they are.

    >>> opts: MonitorOptions = {"name": "loops", "max_runs": 5}
    >>> Monitor(MaxRepeatConfig(max=2), **opts).result().name
    'loops'
    """

    name: str | None
    id: str | None
    source: str | None
    format: str
    lenient: bool
    forget_answers: bool
    max_runs: int


class Monitor:
    """The max-repeat grader, live: feed events one by one, read the result so far.

    After events e1…ek the result equals, field for field, `grade()` of a trajectory
    holding exactly e1…ek (an open turn counts as closed; results not yet seen are
    missing). Events are dicts of the trajectory JSON, `Event` values or a reader's event
    structs; ``id``, ``source``, ``format`` and ``lenient`` describe the trajectory in
    the results, as the `Trajectory` fields of the same names do for `grade()`.

    Cost: amortized O(``max_cycle_period``) work per event and memory that does not grow
    with the trajectory when each result arrives before the next turn starts, except that
    ``observation`` mode keeps one entry (~95 B when results repeat, ~220 B when
    they all differ; ``bench/RESULTS.md``) per answered call id,
    so that a later call reusing an id gets the first result as in `grade()`. With
    ``forget_answers=True`` that entry is dropped once the call's step is final: memory
    stays flat, and the result stays exact as long as call ids are unique. A result that
    arrives after its turn ended makes the monitor keep the steps pushed since that turn
    (memory O(those steps)) and costs O(``max_cycle_period`` × those steps) when it
    arrives; a run above ``max`` still growing costs O(number of runs) per result. See
    ``docs/design/monitor.md``.

    ``max_runs`` caps ``metadata.runs`` as in `grade()` (the same runs are listed).

    `to_bytes` / `from_bytes` save and restore the state (the ``hook`` command keeps it
    between calls).

    >>> m = Monitor(MaxRepeatConfig(max=2, match="name"))
    >>> for i in range(3):
    ...     r = m.feed({"type": "tool_call", "data": {"toolName": "ls", "toolCallId": str(i)}})
    >>> r.passed, r.metadata.occurrences, r.evidence
    (False, 3, 'ls repeated 3 times in a row at steps 0-2 (max 2)')
    """

    def __init__(
        self,
        config: MaxRepeatConfig,
        *,
        name: str | None = None,
        id: str | None = None,
        source: str | None = None,
        format: str = "vally",
        lenient: bool = False,
        forget_answers: bool = False,
        max_runs: int = DEFAULT_MAX_RUNS,
    ) -> None:
        check_max_runs(max_runs)
        self._config = config
        self._name = name or config.display_name
        self._traj = Trajectory(events=(), id=id, source=source, format=format,
                                lenient=lenient)
        self._tracker = Tracker(config, forget_answers=forget_answers, max_runs=max_runs)
        self._cached: GraderResult | None = None
        self._config_error: str | None = None
        empty = config.empty_patterns()
        if empty:
            self._config_error = (
                f"tools pattern {inert(repr(empty[0]))} compiles to an empty regular "
                "expression, which would watch every tool; remove it or write a real pattern"
            )

    # -- public -----------------------------------------------------------------------

    @property
    def config(self) -> MaxRepeatConfig:
        """The grader config this monitor applies."""
        return self._config

    @property
    def events(self) -> int:
        """How many events have been fed."""
        return self._tracker.st.events

    @property
    def lenient(self) -> bool:
        """Whether the trajectory needed lenient JSON reading (reported in the metadata);
        a reader that meets a lenient line later sets it."""
        return self._traj.lenient

    @lenient.setter
    def lenient(self, value: bool) -> None:
        if value != self._traj.lenient:
            self._traj = msgspec.structs.replace(self._traj, lenient=value)
            self._cached = None

    def feed(self, event: EventLike | Mapping[str, Any]) -> GraderResult:
        """Add one event and return the result for the trajectory so far."""
        self._add(event)
        return self.result()

    def feed_all(self, events: Iterable[EventLike | Mapping[str, Any]]) -> GraderResult:
        """Add several events; the result after the last one."""
        for event in events:
            self._add(event)
        return self.result()

    def extend(self, events: Iterable[EventLike | Mapping[str, Any]]) -> None:
        """Add several events without building the result (catching up on a log: the
        result is asked for once, at the end)."""
        for event in events:
            self._add(event)

    def answer_ahead(self, cid: str, answer: Answer) -> None:
        """Record ``answer`` as the first result of call id ``cid`` (ignored when one is
        known), without an event: for a reader that has resolved each call's first result
        before feeding the calls (`engines.streamed`). Fed right before the call it
        answers, it leaves no call waiting; fed later, it acts as the result event would
        have at that point. ``answer`` is what `reduce.reduce_answer` makes of the value."""
        self._tracker.take_answer(cid, answer)
        self._cached = None

    def result(self) -> GraderResult:
        """The result for the events fed so far (what `grade()` says of them)."""
        st = self._tracker.st
        if st.error is not None and st.malformed:
            label = self._traj.id if self._traj.id is not None else "<trajectory>"
            return error_result(label, self._config, st.error, name=self._name)
        if self._config_error is not None or st.error is not None:
            reason = self._config_error or st.error
            assert reason is not None
            return error_result(self._traj.label, self._config, reason, name=self._name,
                                trajectory=self._traj)
        if self._cached is None:
            try:
                self._cached = self._tracker.compute(self._traj, self._name)
            except RecursionError:
                self._tracker.fail(TOO_DEEP)
                return self.result()
        return self._cached

    def to_bytes(self) -> bytes:
        """The monitor's state, to be restored by `from_bytes` with the same config."""
        return msgspec.msgpack.encode(self._tracker.st)

    @classmethod
    def from_bytes(cls, data: bytes, config: MaxRepeatConfig,
                   **options: Unpack[MonitorOptions]) -> Monitor:
        """A monitor restored from `to_bytes`; `ValueError` when the data is not a state
        of this version or does not fit the config. ``options``: `Monitor`'s keywords."""
        try:
            state = msgspec.msgpack.decode(data, type=State)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise ValueError(f"not a monitor state: {exc}") from None
        if (state.version != STATE_VERSION
                or len(state.front.stretches) != config.max_cycle_period):
            raise ValueError("monitor state of another version or config")
        mon = cls(config, **options)
        mon._tracker.restore(state)
        return mon

    @classmethod
    def from_events(cls, events: Sequence[EventLike | Mapping[str, Any]],
                    config: MaxRepeatConfig, **options: Unpack[MonitorOptions]) -> Monitor:
        """A monitor that has taken ``events``: the same state, byte for byte, as
        ``Monitor(...)`` fed them one by one, built from the batch grader's tables
        (`grade()`'s grouping, fingerprints and run search, native where built) for all
        but the last unsettled events (``frombatch.py``). Catching up on a long log costs
        about what `grade()` of it costs, instead of the monitor's per-event work.
        ``options``: `Monitor`'s keywords.

        >>> evs = [{"type": "tool_call", "data": {"toolName": "ls", "toolCallId": str(i)}}
        ...        for i in range(3)]
        >>> cfg = MaxRepeatConfig(max=2, match="name")
        >>> m = Monitor.from_events(evs, cfg)
        >>> m.result().evidence
        'ls repeated 3 times in a row at steps 0-2 (max 2)'
        >>> fed = Monitor(cfg)
        >>> fed.extend(evs)
        >>> m.to_bytes() == fed.to_bytes()
        True
        """
        mon = cls(config, **options)
        from .frombatch import prime

        prime(mon._tracker, events, mon._where)
        return mon

    @property
    def _where(self) -> str:
        """The trajectory as error messages name it (its source, else its label)."""
        return self._traj.source or self._traj.label

    def _add(self, event: EventLike | Mapping[str, Any]) -> None:
        if self._tracker.add(event, self._where):
            self._cached = None
