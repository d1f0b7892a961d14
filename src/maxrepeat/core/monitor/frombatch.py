"""A monitor's state built from the batch grader's tables, not event by event.

Catching up on a long log (a hook's first call on a 30 MB transcript) by feeding every
event does the monitor's incremental work per event: a call and a result reduced to
digests and previews, a search step per step. `prime` instead picks the latest event
``k`` at which the fed state would be *plain* — every step formed so far closed and
pushed, none of them waiting for a result (so no checkpoint, no log, no tail) — builds
that state from what `grade()` computes for the whole list in one pass (step grouping,
fingerprints and the stretch scan, by the native extension where it is built), and
feeds only the events after ``k`` the usual way.

What the plain state holds, and where each piece comes from:

* the counts (events, steps, calls, empty steps) and the turn state: the step table and
  the event types;
* for every period p, the stretch of ``F[i] == F[i-p]`` that reaches the last step: a
  scan back over the table's step ids;
* the best finished stretch and every finished run above ``max`` (with the steps they
  cover): the table's stretches of each period, minus the one still open;
* the steps the state keeps as `DoneStep` (the last ``2 × max_cycle_period``, the blocks
  of the stretches and runs, the first non-empty step): made by the monitor's own
  reductions (`reduce_call`, `reduce_answer`, `StepViews.done`) from their events, so
  their keys and previews are the bytes feeding would have made;
* ``observation`` mode's answers: the first result of each call id seen so far (with
  ``forget_answers``, only those no pushed call has used yet).

The result is the same state as feeding every event, byte for byte (``to_bytes``), which
the property tests check at every prefix of random trajectories on both grading paths.
Where the plain state cannot be built that cheaply and surely (near-duplicate settings,
whose transform keeps state in event order; a malformed trajectory or value, whose error
the fed monitor reports; with ``forget_answers``, a call id used twice or answered
twice), every event is fed, as before.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, compress, islice, repeat
from operator import attrgetter
from typing import Any, Final

from ..errors import TrajectoryFormatError
from ..events import TOOL_RESULT, TURN_END, TURN_START, EventLike, event_from_dict
from ..fingerprints import StepTable, build_step_table
from ..rules import Cover, is_primitive
from ..search import Span, search
from ..steps import SingleCallSteps
from .reduce import reduce_answer, reduce_call
from .search import make_run
from .state import STATE_VERSION, Answer, Best, DoneStep, Front, OpenStep, State, Stretch
from .tracker import Tracker

__all__ = ["prime"]


def prime(tracker: Tracker, events: Sequence[EventLike | Mapping[str, Any]], where: str) -> int:
    """Bring a fresh ``tracker`` to the state that feeding ``events`` one by one gives
    (``where`` names the trajectory in error messages, as for `Tracker.add`); how many
    leading events were taken from the batch tables (0: every event was fed)."""
    k = 0
    typed: Sequence[Any] = events
    if tracker.st.events == 0 and tracker._transform is None and events:
        try:
            # event dicts become Events (a type test per kind of value, not per event)
            if any(issubclass(kind, Mapping) for kind in set(map(type, events))):
                typed = [event_from_dict(e, i) if isinstance(e, Mapping) else e
                         for i, e in enumerate(events)]
            state = _plain_state(tracker, typed)
        except TrajectoryFormatError:
            typed, state = events, None  # the fed monitor reports it, at its event
        except Exception:  # any value the fed monitor must judge itself
            state = None
        if state is not None:
            tracker.restore(state)
            k = state.events
    for event in typed[k:]:
        tracker.add(event, where)
    return k


_TYPE: Final = attrgetter("type")
_DATA: Final = attrgetter("data")
_CALL_ID: Final = attrgetter("tool_call_id")
# One byte per event: turn boundaries and results are what the split point depends on.
_CODES: Final = {TURN_START: b"S"[0], TURN_END: b"E"[0], TOOL_RESULT: b"R"[0]}
_IS_RESULT: Final = bytes(1 if i == b"R"[0] else 0 for i in range(256))


def _plain_state(tracker: Tracker, events: Sequence[Any]) -> State | None:
    """The fed state after the longest prefix of ``events`` at which it is plain (see the
    module), or None when it cannot be built here (then everything is fed). The work per
    event is done by C loops (map, compress, accumulate), as in `core.steps`."""
    config = tracker._config
    observation = config.match == "observation"
    table = build_step_table(events, config)
    steps = table.steps
    n = len(events)
    codes = bytes(map(_CODES.get, map(_TYPE, events), repeat(0, n)))
    first_result, twice = _first_results(events, codes) if observation else ({}, set())
    firsts: Sequence[int]
    flat: Sequence[int]
    if isinstance(steps, SingleCallSteps):
        firsts = flat = steps.calls
    else:
        firsts = [step[0] for step in steps]
        flat = [i for step in steps for i in step]
    call_ids = list(map(_CALL_ID, map(_DATA, map(events.__getitem__, flat))))
    latest = _latest_answers(steps, call_ids, first_result, n) if observation \
        else [-1] * len(steps)
    t, k = _split_point(codes, firsts, latest, n)
    if k == 0:
        return None
    calls = t if isinstance(steps, SingleCallSteps) else sum(map(len, steps[:t]))
    used: set[str] = set()
    if observation and tracker._forget:
        taken = [c for c in call_ids[:calls] if c is not None]
        used = set(taken)
        if len(used) != len(taken) or not twice.isdisjoint(used):
            return None  # forgetting is exact only while ids are unique: feed them
    return _build(tracker, events, table, t, k, _in_turn_at(codes, k), first_result, used,
                  calls)


def _in_turn_at(codes: bytes, k: int) -> bool:
    """Whether a turn is open after events[:k] (``codes``: one byte per event)."""
    return codes.rfind(b"S", 0, k) > codes.rfind(b"E", 0, k)


def _first_results(events: Sequence[Any], codes: bytes) -> tuple[dict[Any, int], set[str]]:
    """(the first result of each call id: where it is, in the order the first results
    came, as the monitor's answers keep it; the ids answered twice)."""
    first_result: dict[Any, int] = {}
    twice: set[str] = set()
    where = list(compress(range(len(events)), codes.translate(_IS_RESULT)))
    cids = list(map(_CALL_ID, map(_DATA, map(events.__getitem__, where))))
    deque(map(first_result.setdefault, cids, where), maxlen=0)
    first_result.pop(None, None)
    if len(first_result) != len(cids) - cids.count(None):
        twice = {c for c, m in Counter(cids).items() if m > 1 and c is not None}
    return first_result, twice


def _latest_answers(steps: Sequence[list[int]], call_ids: list[Any], first_result: dict[Any, int],
                    n: int) -> list[int]:
    """The latest first result (n + 1: none) of a call of steps[:s+1], for each s; a call
    without an id waits for nothing (-1)."""
    never = n + 1
    lookup: dict[Any, int] = {**first_result, None: -1}
    answered = list(map(lookup.get, call_ids, repeat(never)))
    if not isinstance(steps, SingleCallSteps):
        it = iter(answered)
        answered = [max(islice(it, len(step))) for step in steps]
    return list(accumulate(answered, max))


def _split_point(codes: bytes, firsts: Sequence[int], latest: list[int],
                 n: int) -> tuple[int, int]:
    """The largest t such that steps[:t] are closed and answered within events[:k], and
    that k: the first event of step t (or the end when every step qualifies).
    ``firsts``: each step's first event; ``latest``: as `_latest_answers` gives."""
    t_count = len(firsts)
    if not t_count:
        return 0, n
    # The last step is still open at the end when it is a turn's step and no boundary
    # followed its first call.
    first = firsts[-1]
    last_open = _in_turn_at(codes, first) and codes.find(b"S", first) < 0 \
        and codes.find(b"E", first) < 0
    if not last_open and latest[-1] < n:
        return t_count, n
    t = t_count - 1
    while t > 0 and latest[t - 1] >= firsts[t]:
        t -= 1
    return t, firsts[t]


def _build(tracker: Tracker, events: Sequence[Any], table: StepTable, t: int, k: int,
           in_turn: bool, first_result: dict[Any, int], used: set[str], calls: int) -> State:
    """The plain state after events[:k], whose steps are the table's first ``t`` (holding
    ``calls`` calls); ``used``: the call ids whose answers the monitor forgot."""
    config = tracker._config
    period = config.max_cycle_period
    observation = config.match == "observation"
    steps = table.steps
    ids = table.ids[:t]
    views = tracker._views
    shared = tracker._shared
    reduced: dict[str, Answer] = {}

    def answer(cid: str) -> Answer:
        a = reduced.get(cid)
        if a is None:
            a = reduce_answer(events[first_result[cid]].data.result)
            a = reduced[cid] = shared.setdefault((a.key, a.preview, a.error), a)
        return a

    made: dict[int, DoneStep] = {}

    def done(s: int) -> DoneStep:
        """Step s as the monitor reduces it (its calls and their answers)."""
        d = made.get(s)
        if d is None:
            reduced_calls = []
            local: dict[str, Answer] = {}
            for i in steps[s]:
                data = events[i].data
                cid = data.tool_call_id
                reduced_calls.append(reduce_call(i, data.tool_name, cid, data.arguments,
                                                 config.match))
                if observation and cid is not None and cid in first_result:
                    local[cid] = answer(cid)
            d = made[s] = views.done(OpenStep(s, reduced_calls, closed=True), local)
        return d

    front = _front(ids, period, config.max, done, lambda s: steps[s][-1])
    answers: dict[str, Answer] = {}
    if observation:
        for cid, i in first_result.items():  # in the order the results came
            if i < k and cid not in used:
                answers[cid] = answer(cid)
    return State(version=STATE_VERSION, front=front, events=k, in_turn=in_turn,
                 open_turn=False, steps=t, calls=calls, answers=answers)


def _front(ids: Sequence[int], period: int, above: int, done: Callable[[int], DoneStep],
           last_event: Callable[[int], int]) -> Front:
    """The front after pushing the steps numbered ``ids`` (``done(s)``: step s as the
    monitor keeps it; ``last_event(s)``: the event of its last call)."""
    t = len(ids)
    front = Front(settled=t)
    # Empty steps are those with negative ids (their keys, None, are made only when
    # read on the native path: fingerprints.NativeKeys).
    front.settled_empty = sum(1 for i in ids if i < 0)
    nonempty = next((s for s in range(t) if ids[s] >= 0), None)
    front.first_nonempty = done(nonempty) if nonempty is not None else None
    front.window = [done(s) for s in range(max(0, t - 2 * period), t)]
    front.stretches = [_open_stretch(ids, p, done) for p in range(1, period + 1)]
    # Finished stretches: the stretch still open at the last step is not finished (a
    # reported run of one copy is the first non-empty step, which the front keeps apart).
    span, spans = search(ids, period, above, settled=True)

    def best_of(s: Span) -> Best:
        return Best(s.occurrences, s.period, s.start,
                    [done(x) for x in range(s.start, s.start + s.period)],
                    last_event(s.end))

    if span is not None and span.occurrences > 1:
        front.best = best_of(span)
    front.runs = [make_run(best_of(s)) for s in spans]  # in `rules.run_order`
    cover = Cover(front.cover_starts, front.cover_ends)
    front.loop_steps = sum(cover.add(r.start_step, r.end_step) for r in front.runs)
    return front


def _open_stretch(ids: Sequence[int], p: int, done: Callable[[int], DoneStep]) -> Stretch:
    """The stretch of period p that reaches the last step, scanned back over the ids."""
    last = len(ids) - 1
    length = 0
    j = last
    while j >= p and ids[j] == ids[j - p]:  # empty steps have unique negative ids
        length += 1
        j -= 1
    stretch = Stretch()
    if length:
        stretch.start = last - length + 1 - p
        stretch.length = length
        if length >= p:
            stretch.block = [done(x) for x in range(stretch.start, stretch.start + p)]
            stretch.primitive = p == 1 or is_primitive(ids[stretch.start:stretch.start + p])
    return stretch
