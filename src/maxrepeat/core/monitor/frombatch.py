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

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import TrajectoryFormatError
from ..events import TOOL_CALL, TOOL_RESULT, TURN_END, TURN_START, EventLike, event_from_dict
from ..fingerprints import StepTable, build_step_table
from ..result import Run
from ..rules import Cover, copies, is_primitive, rank, run_end
from ..search import _packed, _stretches
from ..steps import SingleCallSteps
from .reduce import reduce_answer, reduce_call
from .search import make_run, run_key
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
            typed = [event_from_dict(e, i) if isinstance(e, Mapping) else e
                     for i, e in enumerate(events)]
            state = _plain_state(tracker, typed)
        except TrajectoryFormatError:
            typed, state = events, None  # the fed monitor reports it, at its event
        except Exception:  # noqa: BLE001 - any value the fed monitor must judge itself
            state = None
        if state is not None:
            tracker.restore(state)
            k = state.events
    for event in typed[k:]:
        tracker.add(event, where)
    return k


def _plain_state(tracker: Tracker, events: Sequence[Any]) -> State | None:
    """The fed state after the longest prefix of ``events`` at which it is plain (see the
    module), or None when it cannot be built here (then everything is fed)."""
    config = tracker._config
    observation = config.match == "observation"
    table = build_step_table(events, config)
    steps = table.steps
    n = len(events)
    types = [e.type for e in events]
    # Turn boundaries: the event index of the last one before each point decides in_turn.
    bounds = [i for i, t in enumerate(types) if t == TURN_START or t == TURN_END]

    def in_turn_at(k: int) -> bool:
        """Whether a turn is open after events[:k]."""
        lo, hi = 0, len(bounds)
        while lo < hi:
            mid = (lo + hi) // 2
            if bounds[mid] < k:
                lo = mid + 1
            else:
                hi = mid
        return lo > 0 and types[bounds[lo - 1]] == TURN_START

    first_result: dict[str, int] = {}
    results_of: dict[str, int] = {}
    if observation:
        for i, t in enumerate(types):
            if t == TOOL_RESULT:
                data = events[i].data
                cid = data.tool_call_id if data is not None else None
                if cid is not None:
                    first_result.setdefault(cid, i)
                    results_of[cid] = results_of.get(cid, 0) + 1

    def cid_of(i: int) -> str | None:
        cid: str | None = events[i].data.tool_call_id
        return cid

    # The last step is still open at the end when it is a turn's step and no boundary
    # followed its first call.
    t_count = len(steps)
    last_open = False
    if t_count:
        first = steps[t_count - 1][0]
        last_open = in_turn_at(first) and not (bounds and bounds[-1] > first)
    # The largest t such that steps[:t] are closed and answered by events[:k], k being
    # the first event of step t (or the end when every step qualifies).
    never = n + 1
    t, k = 0, 0 if t_count else n
    latest = -1  # the latest first result of a call in the steps so far
    for s in range(t_count):
        first = steps[s][0]
        if latest < first:
            t, k = s, first
        if observation:
            for i in steps[s]:
                cid = cid_of(i)
                if cid is not None:
                    latest = max(latest, first_result.get(cid, never))
    if t_count and not last_open and latest < n:
        t, k = t_count, n
    if k == 0:
        return None
    if tracker._forget:
        used = [cid for s in range(t) for i in steps[s] if (cid := cid_of(i)) is not None]
        if len(set(used)) != len(used) or any(results_of[c] > 1 for c in used):
            return None  # forgetting is exact only while ids are unique: feed them
    return _build(tracker, events, table, t, k, in_turn_at(k), first_result)


def _build(tracker: Tracker, events: Sequence[Any], table: StepTable, t: int, k: int,
           in_turn: bool, first_result: dict[str, int]) -> State:
    """The plain state after events[:k], whose steps are the table's first ``t``."""
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
            calls = []
            local: dict[str, Answer] = {}
            for i in steps[s]:
                data = events[i].data
                cid = data.tool_call_id
                calls.append(reduce_call(i, data.tool_name, cid, data.arguments,
                                         config.match))
                if observation and cid is not None and cid in first_result:
                    local[cid] = answer(cid)
            d = made[s] = views.done(OpenStep(s, calls, closed=True), local)
        return d

    def last_event(s: int) -> int:
        return steps[s][-1]

    front = Front(settled=t)
    # Empty steps are those with negative ids (their keys, None, are made only when
    # read on the native path: fingerprints.NativeKeys).
    front.settled_empty = sum(1 for i in ids if i < 0)
    nonempty = next((s for s in range(t) if ids[s] >= 0), None)
    front.first_nonempty = done(nonempty) if nonempty is not None else None
    front.window = [done(s) for s in range(max(0, t - 2 * period), t)]
    last = t - 1
    for p in range(1, period + 1):
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
        front.stretches.append(stretch)
    # Finished stretches: as `core.search.search` visits them (by period, then start), so
    # that one of as many copies as the best so far never displaces it; the stretch still
    # open at the last step is not finished.
    above = config.max
    found_best: tuple[int, int, int] | None = None  # (copies, period, start)
    finished: list[tuple[int, int, int]] = []
    packed = _packed(ids)
    for p in range(1, period + 1):
        least = p * min(found_best[0] if found_best is not None else 1, above)
        for start, m in _stretches(ids, p, least, packed):
            if start + m - 1 + p == last:
                continue  # still open: it belongs to `stretches`
            c = copies(m, p)
            if p > 1 and not is_primitive(ids[start:start + p]):
                continue
            if found_best is None or rank(c, p, start) > rank(*found_best):
                found_best = (c, p, start)
            if c > above:
                finished.append((c, p, start))

    def best_of(c: int, p: int, start: int) -> Best:
        return Best(c, p, start, [done(x) for x in range(start, start + p)],
                    last_event(run_end(start, p, c)))

    if found_best is not None:
        front.best = best_of(*found_best)
    runs: list[Run] = [make_run(best_of(c, p, start)) for c, p, start in finished]
    runs.sort(key=run_key)
    front.runs = runs
    cover = Cover(front.cover_starts, front.cover_ends)
    front.loop_steps = sum(cover.add(r.start_step, r.end_step) for r in runs)
    answers: dict[str, Answer] = {}
    if observation:
        used: set[str] = set()
        if tracker._forget:
            used = {cid for s in range(t) for i in steps[s]
                    if (cid := events[i].data.tool_call_id) is not None}
        for cid, i in first_result.items():  # in the order the results came
            if i < k and cid not in used:
                answers[cid] = answer(cid)
    if isinstance(steps, SingleCallSteps):
        calls = t
    else:
        calls = sum(len(steps[s]) for s in range(t))
    return State(version=STATE_VERSION, front=front, events=k, in_turn=in_turn,
                 open_turn=False, steps=t, calls=calls, answers=answers)
