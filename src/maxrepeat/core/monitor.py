"""The incremental max-repeat detector: `grade()`'s answer for every prefix, event by event.

`Monitor` keeps, instead of the events, a small state that each event updates. The design
(``docs/design/monitor.md``) in short:

* Steps are formed exactly as `group_steps` forms them. A step is **pushed** into the
  pattern search once no further call can join it (its turn closed, or a call outside any
  turn). Only the open turn's step waits in the **tail**.
* For every period p the search keeps the stretch of equalities ``F[i] == F[i-p]`` that
  reaches the last pushed step (its start and length) and, once it holds two copies, the
  block it repeats. Stretches that end are final: the best one is kept, and those above
  ``max`` become `Run` values. Only the last ``2 × max_cycle_period`` pushed steps are
  kept (for comparisons, block capture and ``endEvent``).
* In ``observation`` mode a step pushed while one of its calls still waits for its result
  is fingerprinted with what is known then, and the search state from before it is kept
  as a **checkpoint** with a **log** of the steps pushed since. When such a result
  arrives, the search goes back to the checkpoint and pushes the log again.
* `result()` runs the same search over the tail on copies of that state, so the answer is
  exact for any order of events. The open step is compared through a running summary
  (call count, tool names, an order-free sum of its call digests), so a turn of many
  parallel calls is not fingerprinted again at every event; its exact key is built only
  when count and sum match an earlier step's.

Cost, normal order (each result arrives before the next turn starts): amortized
O(max_cycle_period) work per event; memory: the last ``2 × max_cycle_period`` steps, one
`Run` per loop above ``max`` and, in ``observation`` mode, one short entry (16-byte digest
and preview) per answered call id unless ``forget_answers=True``. Other orders: a result
that arrives after its turn ended keeps a log of the steps pushed since that turn (memory
O(those steps)), and its arrival costs O(max_cycle_period × those steps) once.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import msgspec

from .canonical import canonical_bytes, decode_value, is_empty
from .config import MaxRepeatConfig
from .errors import TrajectoryFormatError, type_name
from .events import (
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    EventLike,
    Trajectory,
    event_from_dict,
)
from .grade import build_result, error_result
from .preview import STEP_CALL_LIMIT, call_preview, inert, json_preview
from .result import GraderResult, Run
from .steps import MISSING, _watcher, digest, name_bytes, step_key
from .toolmatch import UnsafeMatchError

__all__ = ["Monitor"]

#: Bumped whenever the saved state's layout or meaning changes.
STATE_VERSION: Final = 2

_NO_OBSERVATION: Final = b"\x00no-observation"
_TOO_DEEP: Final = "a value in the trajectory is nested too deeply to compare"


class _Answer(msgspec.Struct, array_like=True):
    """The first result of one call id, reduced to what fingerprints and previews need."""

    key: bytes | None  # digest of the canonical value; None when the value is empty
    preview: str
    error: str | None = None  # why the value cannot be compared (a grading error if used)


class _Call(msgspec.Struct, array_like=True):
    event: int
    name: str
    cid: str | None
    head: str  # preview of the tool name (and arguments, except in name mode)
    digest: bytes  # name / name-args: the call's fingerprint; observation: the name bytes


class _Open(msgspec.Struct, array_like=True):
    """A step of the tail: its calls may still grow or their results arrive."""

    index: int
    calls: list[_Call]
    closed: bool
    waiting: int = 0  # calls whose result has not arrived (observation mode)
    pushed: bool = False  # in the log: pushed with the observations known then


class _Done(msgspec.Struct, array_like=True):
    """A step reduced to what the search and the result need."""

    index: int
    first: int  # event index of its first watched call
    last: int  # event index of its last watched call
    key: bytes | None  # None: empty fingerprint, equal to nothing
    preview: str
    tools: list[str]  # its distinct tool names, sorted
    calls: int
    mhash: bytes = b""  # order-free sum of the call digests: a cheap filter before `key`


class _Stretch(msgspec.Struct, array_like=True):
    """Equalities F[i] == F[i-p] back to back, reaching the settled frontier."""

    start: int = 0
    length: int = 0
    primitive: bool = True
    block: list[_Done] = msgspec.field(default_factory=list)  # captured at two copies


class _Best(msgspec.Struct, array_like=True):
    occurrences: int
    period: int
    start: int
    block: list[_Done]
    end_event: int


class _Front(msgspec.Struct):
    """The search over the pushed steps: everything a checkpoint must restore."""

    settled: int = 0  # how many steps were pushed
    settled_empty: int = 0
    first_nonempty: _Done | None = None
    window: list[_Done] = msgspec.field(default_factory=list)  # the last 2P pushed steps
    stretches: list[_Stretch] = msgspec.field(default_factory=list)
    best: _Best | None = None
    runs: list[Run] = msgspec.field(default_factory=list)
    # The steps covered by `runs`, as disjoint sorted intervals, and how many they are.
    cover_starts: list[int] = msgspec.field(default_factory=list)
    cover_ends: list[int] = msgspec.field(default_factory=list)
    loop_steps: int = 0

    def copy(self) -> _Front:
        """A copy that later pushes to this one leave unchanged (steps are never mutated)."""
        return _Front(
            self.settled, self.settled_empty, self.first_nonempty, list(self.window),
            [_Stretch(s.start, s.length, s.primitive, s.block) for s in self.stretches],
            self.best, list(self.runs), list(self.cover_starts), list(self.cover_ends),
            self.loop_steps,
        )


class _State(msgspec.Struct):
    version: int
    front: _Front
    events: int = 0
    in_turn: bool = False
    open_turn: bool = False  # the last tail step is the open turn's step
    steps: int = 0
    calls: int = 0
    # The front before the first pushed step that still waits for a result, and the steps
    # pushed since (replayed from there when one of their results arrives).
    checkpoint: _Front | None = None
    log: list[_Open] = msgspec.field(default_factory=list)
    tail: list[_Open] = msgspec.field(default_factory=list)  # steps not pushed yet
    answers: dict[str, _Answer] = msgspec.field(default_factory=dict)
    # Why grading stopped (every longer prefix is the same error result), and whether the
    # error comes from a malformed event dict (whose result carries no trajectory data).
    error: str | None = None
    malformed: bool = False


def _same(a: bytes | None, b: bytes | None) -> bool:
    return a is not None and a == b


def _primitive(block: list[_Done]) -> bool:
    p = len(block)
    for q in range(1, p):
        if p % q == 0 and all(_same(block[j].key, block[j + q].key) for j in range(p - q)):
            return False
    return True


def _join(previews: list[str], total: int) -> str:
    # step_preview's layout, from call previews made when each call arrived.
    if total > STEP_CALL_LIMIT:
        more = total - STEP_CALL_LIMIT
        previews = [*previews[:STEP_CALL_LIMIT], f"… ({more} more calls)"]
    return " + ".join(previews)


_MASK: Final = (1 << 128) - 1


def _h(d: bytes) -> int:
    return int.from_bytes(d if len(d) == 16 else digest(d), "little")


class _Live:
    """The open turn's step, kept up to date call by call: its size, how many calls lack
    an observation, the sum of its call digests and its tool names. Comparing it with an
    earlier step then costs O(1) unless the sums agree (then the exact key decides)."""

    __slots__ = ("step", "absorbed", "mhash", "empties", "names", "waiting", "done")

    def __init__(self, step: _Open) -> None:
        self.step = step
        self.absorbed = 0
        self.mhash = 0
        self.empties = 0
        self.names: set[str] = set()
        self.waiting: dict[str, list[bytes]] = {}  # call id -> name bytes of its calls
        self.done: _Done | None = None  # the exact view, made only when needed


def _observed(name_digest: bytes, answer: _Answer | None) -> bytes:
    """An observation-mode call fingerprint: the tool name and its observation."""
    if answer is None or answer.key is None:
        return digest(name_digest + _NO_OBSERVATION)
    return digest(name_digest + b"\x01" + answer.key)


def _rank(occurrences: int, period: int, start: int) -> tuple[int, int, int]:
    # The spec's order: most copies, then the smaller period, then the earlier start.
    return (occurrences, -period, -start)


def _make_run(best: _Best) -> Run:
    return Run(
        period=best.period,
        occurrences=best.occurrences,
        start_step=best.start,
        end_step=best.start + best.period * best.occurrences - 1,
        start_event=best.block[0].first,
        end_event=best.end_event,
        pattern=tuple(d.preview for d in best.block),
    )


def _run_order(run: Run) -> tuple[int, int, int]:
    return (run.start_step, run.period, run.occurrences)


def _cover(starts: list[int], ends: list[int], lo: int, hi: int) -> int:
    """Add the steps lo..hi to the disjoint intervals; how many were not covered yet."""
    i = bisect_left(ends, lo)
    j = i
    before = 0
    while j < len(starts) and starts[j] <= hi:
        lo, hi = min(lo, starts[j]), max(hi, ends[j])
        before += ends[j] - starts[j] + 1
        j += 1
    starts[i:j] = [lo]
    ends[i:j] = [hi]
    return hi - lo + 1 - before


def _uncovered(starts: list[int], ends: list[int], runs: list[Run]) -> int:
    """How many steps of ``runs`` the intervals do not cover (the intervals unchanged)."""
    own_starts: list[int] = []
    own_ends: list[int] = []
    for r in runs:
        _cover(own_starts, own_ends, r.start_step, r.end_step)
    extra = 0
    for lo, hi in zip(own_starts, own_ends):
        extra += hi - lo + 1
        j = bisect_left(ends, lo)
        while j < len(starts) and starts[j] <= hi:
            extra -= min(hi, ends[j]) - max(lo, starts[j]) + 1
            j += 1
    return extra


class _Search:
    """One pass of the stretch search over steps appended to a sequence.

    ``at(i)`` gives step i (only the last 2P before the current one are asked for);
    ``finish`` receives every stretch that ends with at least two copies.
    """

    __slots__ = ("stretches", "at", "finish")

    def __init__(
        self,
        stretches: list[_Stretch],
        at: Callable[[int], _Done],
        finish: Callable[[_Best], None],
    ) -> None:
        self.stretches = stretches
        self.at = at
        self.finish = finish

    def push(self, i: int, step: _Done) -> None:
        key = step.key
        at = self.at
        self.push_eq(i, [i >= p and key is not None and at(i - p).key == key
                         for p in range(1, len(self.stretches) + 1)])

    def push_eq(self, i: int, eqs: list[bool]) -> None:
        """Push step i, given for each period p whether it equals step i-p."""
        at = self.at
        for p, st in enumerate(self.stretches, 1):
            if eqs[p - 1]:
                if st.length == 0:
                    st.start = i - p
                st.length += 1
                if st.length == p:
                    # Two copies now: the block is steps start..start+p-1, still at hand.
                    st.block = [at(j) for j in range(st.start, st.start + p)]
                    st.primitive = p == 1 or _primitive(st.block)
            elif st.length:
                self.close(p, st)

    def close(self, p: int, st: _Stretch) -> None:
        """End the stretch of period p (it reaches the step pushed last)."""
        if st.length >= p and st.primitive:
            k = st.length // p + 1
            end = st.start + p * k - 1
            self.finish(_Best(k, p, st.start, st.block, self.at(end).last))
        st.length = 0
        st.block = []
        st.primitive = True


class Monitor:
    """The max-repeat grader, live: feed events one by one, read the result so far.

    After events e1…ek the result equals, field for field, `grade()` of a trajectory
    holding exactly e1…ek (an open turn counts as closed; results not yet seen are
    missing). Events are dicts of the trajectory JSON, `Event` values or a reader's event
    structs; ``id``, ``source``, ``format`` and ``lenient`` describe the trajectory in
    the results, as the `Trajectory` fields of the same names do for `grade()`.

    Cost: amortized O(``max_cycle_period``) work per event and memory that does not grow
    with the trajectory when each result arrives before the next turn starts, except that
    ``observation`` mode keeps one short entry (digest and preview) per answered call id,
    so that a later call reusing an id gets the first result as in `grade()`. With
    ``forget_answers=True`` that entry is dropped once the call's step is final: memory
    stays flat, and the result stays exact as long as call ids are unique. A result that
    arrives after its turn ended makes the monitor keep the steps pushed since that turn
    (memory O(those steps)) and costs O(``max_cycle_period`` × those steps) when it
    arrives; a run above ``max`` still growing costs O(number of runs) per result. See
    ``docs/design/monitor.md``.

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
    ) -> None:
        self._config = config
        self._name = name or config.display_name
        self._traj = Trajectory(events=(), id=id, source=source, format=format,
                                lenient=lenient)
        self._period = config.max_cycle_period
        self._match = config.match
        self._observation = config.match == "observation"
        self._watches = _watcher(config)
        self._st = _State(
            version=STATE_VERSION,
            front=_Front(stretches=[_Stretch() for _ in range(self._period)]),
        )
        self._pending: dict[str, list[_Open]] = {}
        self._cached: GraderResult | None = None
        self._best_run: tuple[_Best, Run, tuple[str, ...]] | None = None
        self._runs_tuple: tuple[Run, ...] | None = None
        self._live: _Live | None = None
        self._forget = forget_answers and self._observation
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
        return self._st.events

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

    def result(self) -> GraderResult:
        """The result for the events fed so far (what `grade()` says of them)."""
        st = self._st
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
                self._cached = self._compute()
            except RecursionError:
                self._fail(_TOO_DEEP)
                return self.result()
        return self._cached

    def to_bytes(self) -> bytes:
        """The monitor's state, to be restored by `from_bytes` with the same config."""
        return msgspec.msgpack.encode(self._st)

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        config: MaxRepeatConfig,
        *,
        name: str | None = None,
        id: str | None = None,
        source: str | None = None,
        format: str = "vally",
        lenient: bool = False,
        forget_answers: bool = False,
    ) -> Monitor:
        """A monitor restored from `to_bytes`; `ValueError` when the data is not a state
        of this version or does not fit the config."""
        try:
            state = msgspec.msgpack.decode(data, type=_State)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise ValueError(f"not a monitor state: {exc}") from None
        if (state.version != STATE_VERSION
                or len(state.front.stretches) != config.max_cycle_period):
            raise ValueError("monitor state of another version or config")
        mon = cls(config, name=name, id=id, source=source, format=format, lenient=lenient,
                  forget_answers=forget_answers)
        mon._st = state
        for step in (*state.log, *state.tail):
            for call in step.calls:
                if call.cid is not None and call.cid not in state.answers:
                    mon._pending.setdefault(call.cid, []).append(step)
        return mon

    # -- events -----------------------------------------------------------------------

    def _add(self, event: EventLike | Mapping[str, Any]) -> None:
        st = self._st
        index = st.events
        st.events += 1
        if st.error is not None:
            return
        self._cached = None
        if isinstance(event, Mapping):
            try:
                event = event_from_dict(event, index)
            except TrajectoryFormatError as err:
                # grade() refuses the whole trajectory, so every longer prefix too.
                st.error = f"malformed trajectory: {err}"
                st.malformed = True
                return
        etype = event.type
        if etype == TOOL_CALL:
            self._call(index, event)
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
            return
        if st.tail and st.error is None:
            self._settle()

    def _fail(self, reason: str) -> None:
        self._st.error = reason

    def _call(self, index: int, event: Any) -> None:
        st = self._st
        data = event.data
        name = data.tool_name if data is not None else None
        if not isinstance(name, str):
            err = TrajectoryFormatError(
                None, f"events[{index}].data.toolName must be a string (got {type_name(name)})"
            )
            where = self._traj.source or self._traj.label
            self._fail(f"malformed trajectory: {where}: {err}")
            return
        try:
            watched = self._watches(name)
        except UnsafeMatchError as exc:
            self._fail(str(exc))
            return
        if not watched:
            return
        cid = data.tool_call_id
        arguments = decode_value(data.arguments) if self._match != "name" else None
        nb = name_bytes(name)
        if self._match == "name":
            head, fp = call_preview(name, None, MISSING, "name"), nb
        else:
            head = call_preview(name, arguments, MISSING, "name-args")
            if self._match == "name-args":
                try:
                    fp = digest(nb + canonical_bytes(arguments))
                except RecursionError:
                    self._fail(_TOO_DEEP)
                    return
                except (ValueError, TypeError) as exc:
                    self._fail(f"malformed value in trajectory: {exc}")
                    return
            else:
                fp = nb
        call = _Call(index, name, cid, head, fp)
        st.calls += 1
        if st.in_turn and st.open_turn:
            step = st.tail[-1]
            step.calls.append(call)
        else:
            step = _Open(st.steps, [call], closed=not st.in_turn)
            st.steps += 1
            st.tail.append(step)
            st.open_turn = st.in_turn
        if self._observation and cid is not None:
            answer = st.answers.get(cid)
            if answer is None:
                step.waiting += 1
                self._pending.setdefault(cid, []).append(step)
            elif answer.error is not None:
                self._fail(answer.error)

    def _answer(self, cid: str, value: Any) -> bool:
        """Record the first result of ``cid``; whether a pushed step was waiting for it."""
        try:
            value = decode_value(value)
            key = None if is_empty(value) else digest(canonical_bytes(value))
            answer = _Answer(key, json_preview(value))
        except RecursionError:
            answer = _Answer(None, "…", _TOO_DEEP)
        except (ValueError, TypeError) as exc:
            answer = _Answer(None, "…", f"malformed value in trajectory: {exc}")
        self._st.answers[cid] = answer
        self._live_answered(cid, answer)
        waiting = self._pending.pop(cid, None)
        if not waiting:
            return False
        if answer.error is not None:
            self._fail(answer.error)
            return False
        replay = False
        for step in waiting:
            step.waiting -= 1
            replay = replay or step.pushed
        return replay

    def _close_turn(self) -> None:
        st = self._st
        if st.open_turn:
            st.tail[-1].closed = True
            st.open_turn = False

    # -- steps ------------------------------------------------------------------------

    def _done(self, step: _Open) -> _Done:
        """The step as the search sees it now (final once the step is settled)."""
        calls = step.calls
        if self._observation:
            answers = self._st.answers
            digests = []
            empties = 0
            for c in calls:
                answer = answers.get(c.cid) if c.cid is not None else None
                if answer is None or answer.key is None:
                    empties += 1
                digests.append(_observed(c.digest, answer))
            empty = bool(empties) and (empties == len(calls) or self._period > 1)
        else:
            digests = [c.digest for c in calls]
            empty = False
        mhash = (sum(map(_h, digests)) & _MASK).to_bytes(16, "little")
        key = None if empty else step_key(digests)
        return _Done(step.index, calls[0].event, calls[-1].event, key, self._preview(calls),
                     sorted({c.name for c in calls}), len(calls), mhash)

    def _preview(self, calls: list[_Call]) -> str:
        shown = calls[:STEP_CALL_LIMIT]
        if self._observation:
            answers = self._st.answers
            texts = []
            for c in shown:
                answer = answers.get(c.cid) if c.cid is not None else None
                texts.append(
                    c.head + " -> " + ("(no result)" if answer is None else answer.preview)
                )
        else:
            texts = [c.head for c in shown]
        return _join(texts, len(calls))

    def _live_view(self, step: _Open) -> tuple[_Done, _Live]:
        """The open step as the search sees it, from its incremental summary."""
        live = self._live
        if live is None or live.step is not step:
            live = self._live = _Live(step)
        calls = step.calls
        if live.absorbed < len(calls):
            answers = self._st.answers
            for c in calls[live.absorbed:]:
                answer = answers.get(c.cid) if c.cid is not None else None
                fp = _observed(c.digest, answer) if self._observation else c.digest
                live.mhash += _h(fp)
                live.names.add(c.name)
                if self._observation and (answer is None or answer.key is None):
                    live.empties += 1
                    if answer is None and c.cid is not None:
                        live.waiting.setdefault(c.cid, []).append(c.digest)
            live.absorbed = len(calls)
            live.done = None
        n = len(calls)
        empty = bool(live.empties) and (live.empties == n or self._period > 1)
        view = _Done(step.index, calls[0].event, calls[-1].event, None if empty else b"",
                     self._preview(calls), sorted(live.names), n)
        return view, live

    def _live_answered(self, cid: str, answer: _Answer) -> None:
        live = self._live
        if live is None:
            return
        live.done = None  # its preview changes, whatever the value
        names = live.waiting.pop(cid, None)
        if names is None or answer.key is None:
            return
        for nb in names:
            live.mhash += _h(_observed(nb, answer)) - _h(_observed(nb, None))
            live.empties -= 1

    def _live_equals(self, live: _Live, other: _Done) -> bool:
        """Whether the open step's fingerprint equals a pushed step's (not empty)."""
        if other.key is None or other.calls != live.absorbed:
            return False
        if other.mhash != (live.mhash & _MASK).to_bytes(16, "little"):
            return False
        if live.done is None:
            live.done = self._done(live.step)
        return live.done.key == other.key

    def _settle(self) -> None:
        """Push every leading tail step that no further call can join."""
        tail = self._st.tail
        n = 0
        while n < len(tail) and tail[n].closed:
            n += 1
        if n:
            ready = tail[:n]
            del tail[:n]
            for step in ready:
                self._push(step)

    def _push(self, step: _Open) -> None:
        """Add a closed step to the search; while it (or an earlier pushed step) waits for
        a result, keep a checkpoint to replay from when that result arrives."""
        st = self._st
        done = self._done(step)
        if step.waiting or st.checkpoint is not None:
            if st.checkpoint is None:
                st.checkpoint = st.front.copy()
            step.pushed = True
            st.log.append(step)
        elif self._forget:
            for c in step.calls:
                if c.cid is not None:
                    st.answers.pop(c.cid, None)
        self._advance(done)

    def _replay(self) -> None:
        """A pushed step's fingerprint changed: back to the checkpoint, push the log again."""
        st = self._st
        assert st.checkpoint is not None
        st.front = st.checkpoint
        st.checkpoint = None
        log = st.log
        st.log = []
        self._runs_tuple = None
        self._best_run = None
        for step in log:
            step.pushed = False
        for step in log:
            self._push(step)

    def _advance(self, done: _Done) -> None:
        front = self._st.front
        window = front.window

        def at(i: int) -> _Done:
            return window[i - front.settled + len(window)]

        _Search(front.stretches, at, self._keep_best).push(front.settled, done)
        window.append(done)
        if len(window) > 2 * self._period:
            del window[0]
        front.settled += 1
        if done.key is None:
            front.settled_empty += 1
        elif front.first_nonempty is None:
            front.first_nonempty = done

    def _keep_best(self, found: _Best) -> None:
        st = self._st.front
        best = st.best
        rank = _rank(found.occurrences, found.period, found.start)
        if best is None or rank > _rank(best.occurrences, best.period, best.start):
            st.best = found
        if found.occurrences > self._config.max:
            run = _make_run(found)
            insort(st.runs, run, key=_run_order)
            st.loop_steps += _cover(st.cover_starts, st.cover_ends, run.start_step, run.end_step)
            self._runs_tuple = None

    # -- the answer -------------------------------------------------------------------

    def _compute(self) -> GraderResult:
        st = self._st.front
        # Only the open turn's step is ever left unpushed (closed steps are pushed).
        open_step = self._st.tail[-1] if self._st.tail else None
        tail: list[_Done] = []
        if open_step is not None:
            view, live = self._live_view(open_step)
            tail.append(view)
        window = st.window
        base = st.settled - len(window)

        def at(i: int) -> _Done:
            j = i - base
            return window[j] if j < len(window) else tail[j - len(window)]

        best = st.best
        best_rank = _rank(best.occurrences, best.period, best.start) if best else None
        extra: list[Run] = []

        def finish(found: _Best) -> None:
            nonlocal best, best_rank
            rank = _rank(found.occurrences, found.period, found.start)
            if best_rank is None or rank > best_rank:
                best, best_rank = found, rank
            if found.occurrences > self._config.max:
                extra.append(_make_run(found))

        if tail or any(s.length for s in st.stretches):
            stretches = [
                _Stretch(s.start, s.length, s.primitive, s.block) for s in st.stretches
            ]
            search = _Search(stretches, at, finish)
            if tail:
                i = st.settled
                key = tail[0].key
                search.push_eq(i, [
                    i >= p and key is not None and self._live_equals(live, at(i - p))
                    for p in range(1, self._period + 1)
                ])
            for p, s in enumerate(stretches, 1):
                if s.length:
                    search.close(p, s)

        if best is None:
            first = st.first_nonempty
            if first is None:
                first = next((d for d in tail if d.key is not None), None)
            if first is not None:
                best = _Best(1, 1, first.index, [first], first.last)
        run: Run | None = None
        tools: tuple[str, ...] = ()
        if best is not None:
            if self._best_run is not None and self._best_run[0] is best:
                _, run, tools = self._best_run
            else:
                run = _make_run(best)
                tools = tuple(sorted({n for d in best.block for n in d.tools}))
                self._best_run = (best, run, tools)
        if self._runs_tuple is None:
            self._runs_tuple = tuple(st.runs)
        runs = self._runs_tuple
        loops = st.loop_steps
        if extra:
            # Runs still growing (a live loop): the settled ones stay as they are.
            extra.sort(key=_run_order)
            if not runs or _run_order(extra[0]) > _run_order(runs[-1]):
                runs = runs + tuple(extra)
            else:
                runs = tuple(sorted([*runs, *extra], key=_run_order))
            loops += _uncovered(st.cover_starts, st.cover_ends, extra)
        return build_result(
            self._traj,
            self._config,
            self._name,
            best=run,
            best_tools=tools,
            runs=runs,
            watched_steps=self._st.steps,
            watched_calls=self._st.calls,
            empty_steps=st.settled_empty + sum(1 for d in tail if d.key is None),
            loop_steps=loops,
        )

