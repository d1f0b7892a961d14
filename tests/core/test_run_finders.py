"""Every run finder hands over one `RunOutcome`, and on the same trajectories they are
equal: the batch search (pure and with the native stretch scan), the window-by-window
search (windows of every size), the live monitor fed event by event, and the monitor
primed from the batch tables. Each is also held to the independent references: the
brute-force reported run of spec §3–4 (`tests/reference.py`) and the brute-force list of
maximal runs (`tests/core/test_runs.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat.core import accel
from maxrepeat.core.config import MaxRepeatConfig
from maxrepeat.core.events import Trajectory, trajectory_from_dict
from maxrepeat.core.fingerprints import StepTable, build_step_table
from maxrepeat.core.monitor.frombatch import prime
from maxrepeat.core.monitor.tracker import Tracker
from maxrepeat.core.result import RunOutcome, Watched
from maxrepeat.core.rules import largest, rank, run_order
from maxrepeat.core.search import find_runs, step_view
from maxrepeat.core.windowsearch import WindowSearch
from tests.core.test_runs import _brute_runs
from tests.reference import reference
from tests.strategies import configs, trajectories


@contextmanager
def _native(on: bool) -> Iterator[None]:
    """The native fast path on or off for the block (restored after it)."""
    was = accel.use_native(on)
    try:
        yield
    finally:
        accel.use_native(was)


def _watched(table: StepTable) -> Watched:
    return Watched(steps=len(table.steps), calls=table.calls, empty=table.empty_steps)


def _batch(traj: Trajectory, config: MaxRepeatConfig, max_runs: int,
           window: int) -> tuple[RunOutcome, Watched]:
    table = build_step_table(traj.events, config)
    return find_runs(traj.events, table, config, max_runs), _watched(table)


def _windows(traj: Trajectory, config: MaxRepeatConfig, max_runs: int,
             window: int) -> tuple[RunOutcome, Watched]:
    """The table's steps pushed ``window`` at a time, each window after the steps the
    search carries (numbered by the whole table's ids, as one segment's table numbers
    them in the windowed engine)."""
    events = traj.events
    table = build_step_table(events, config)
    ids = list(table.ids)
    steps = table.steps
    search = WindowSearch(config.max_cycle_period, config.max, max_runs)
    for lo in range(0, len(ids), window):
        hi = min(lo + window, len(ids))

        def describe(w: int, lo: int = lo) -> tuple[str, tuple[str, ...]]:
            return step_view(events, table, lo + w, config.match)

        search.push_ids(ids[lo - search.carried:hi],
                        [min(steps[s]) for s in range(lo, hi)],
                        [max(steps[s]) for s in range(lo, hi)], describe)
    watched = Watched(steps=search.steps, calls=table.calls, empty=search.empty)
    return search.finish(), watched


def _fed(traj: Trajectory, config: MaxRepeatConfig, max_runs: int,
         window: int) -> tuple[RunOutcome, Watched]:
    tracker = Tracker(config, max_runs=max_runs)
    for event in traj.events:
        tracker.add(event, "t")
    return tracker.outcome()


def _primed(traj: Trajectory, config: MaxRepeatConfig, max_runs: int,
            window: int) -> tuple[RunOutcome, Watched]:
    tracker = Tracker(config, max_runs=max_runs)
    prime(tracker, traj.events, "t")
    return tracker.outcome()


Engine = Callable[[Trajectory, MaxRepeatConfig, int, int], tuple[RunOutcome, Watched]]

#: name -> (engine, whether the native path is on: None draws it)
ENGINES: dict[str, tuple[Engine, bool | None]] = {
    "search-pure": (_batch, False),
    "search-native": (_batch, True),
    "windows": (_windows, None),
    "monitor-fed": (_fed, None),
    "monitor-primed": (_primed, None),
}


def _expected(traj: Trajectory, raw: dict[str, Any], config: MaxRepeatConfig,
              max_runs: int) -> tuple[RunOutcome, Watched]:
    """The pure batch outcome, checked first against the brute-force references."""
    with _native(False):
        outcome, watched = _batch(traj, config, max_runs, 0)
        table = build_step_table(traj.events, config)
    ref = reference(raw, {"max": config.max, "max_cycle_period": config.max_cycle_period,
                          "match": config.match, "tools": config.tools})
    best = outcome.best
    got = (best.occurrences, best.period, best.start_step, best.end_step, best.start_event,
           best.end_event) if best is not None else (0, 0, None, None, None, None)
    assert got == (ref.occurrences, ref.period, ref.start_step, ref.end_step,
                   ref.start_event, ref.end_event)
    assert watched == Watched(ref.watched_steps, ref.watched_calls, ref.empty_steps)
    spans = _brute_runs(list(table.ids), config.max_cycle_period, config.max)
    assert outcome.total == len(spans)
    assert outcome.covered == len({i for s in spans for i in range(s.start, s.end + 1)})
    kept = largest(spans, lambda s: rank(s.occurrences, s.period, s.start), max_runs)
    kept = sorted(kept, key=lambda s: run_order(s.start, s.period, s.occurrences))
    assert [(r.start_step, r.period, r.occurrences) for r in outcome.runs] == \
        [(s.start, s.period, s.occurrences) for s in kept]
    return outcome, watched


@pytest.mark.parametrize("engine", list(ENGINES))
@settings(max_examples=300, deadline=None)
@given(raw=trajectories, cfg=configs(), max_runs=st.integers(0, 3),
       window=st.integers(1, 7), native=st.booleans())
def test_every_run_finder_gives_the_same_outcome(engine: str, raw: dict[str, Any],
                                                 cfg: dict[str, Any], max_runs: int,
                                                 window: int, native: bool) -> None:
    """The engine's outcome (reported run and its tools, listed runs with their
    previews, total, covered steps) and watched counts equal the reference-checked pure
    search's, on every match mode, period bound, ``max_runs`` and window size."""
    run, fixed = ENGINES[engine]
    on = native if fixed is None else fixed
    if on and not accel.available():
        pytest.skip("the native extension is not built")
    config = MaxRepeatConfig.from_mapping(cfg)
    traj = trajectory_from_dict(raw)
    expected = _expected(traj, raw, config, max_runs)
    with _native(on):
        got = run(traj, config, max_runs, window)
    assert got == expected
