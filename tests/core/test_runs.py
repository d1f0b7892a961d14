"""metadata.runs and metadata.loopSteps: every loop above max, each stretch once."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat.core.search import Span, search
from tests.conftest import call, result, turn


def _smallest_period(ids: list[int]) -> int:
    for q in range(1, len(ids) + 1):
        if all(ids[i] == ids[i + q] for i in range(len(ids) - q)):
            return q
    return len(ids)


def _brute_runs(ids: list[int], max_period: int, above: int) -> list[Span]:
    """Every maximal stretch of non-empty steps whose smallest period is p <= max_period,
    holding at least two copies, enumerated by trying every interval."""
    n = len(ids)
    out: set[Span] = set()
    for a in range(n):
        for b in range(a + 2, n + 1):
            seg = ids[a:b]
            if any(v < 0 for v in seg):
                continue
            p = _smallest_period(seg)
            if p > max_period or len(seg) < 2 * p:
                continue
            left = a > 0 and ids[a - 1] >= 0 and ids[a - 1] == ids[a - 1 + p]
            right = b < n and ids[b] >= 0 and ids[b] == ids[b - p]
            if left or right:
                continue
            k = len(seg) // p
            if k > above:
                out.add(Span(a, p, k))
    return sorted(out)


def _brute_best(ids: list[int], max_period: int) -> tuple[int, int]:
    """(occurrences, period) of the largest run: most copies, then smallest period."""
    best = (1, 1) if any(v >= 0 for v in ids) else (0, 0)
    for s in range(len(ids)):
        for p in range(1, max_period + 1):
            block = ids[s:s + p]
            if len(block) < p or any(v < 0 for v in block):
                continue
            k = 1
            while ids[s + k * p:s + (k + 1) * p] == block:
                k += 1
            if (k, -p) > (best[0], -best[1]):
                best = (k, p)
    return best


# Small alphabets make long repeats likely; -1 marks an empty step (made unique below).
fingerprints = st.lists(st.integers(min_value=-1, max_value=2), max_size=24).map(
    lambda xs: [v if v >= 0 else -1 - i for i, v in enumerate(xs)]
)


@settings(max_examples=400, deadline=None)
@given(ids=fingerprints, max_period=st.integers(1, 6), above=st.integers(1, 4))
def test_runs_match_brute_force(ids: list[int], max_period: int, above: int) -> None:
    """search() lists exactly the maximal primitive runs above max that brute force finds."""
    _, runs = search(ids, max_period, above)
    assert runs == _brute_runs(ids, max_period, above)


@settings(max_examples=300, deadline=None)
@given(ids=fingerprints, max_period=st.integers(1, 6))
def test_best_run_matches_brute_force(ids: list[int], max_period: int) -> None:
    """The reported run has the brute-force figure and primitive period."""
    best, _ = search(ids, max_period, 1)
    got = (best.occurrences, best.period) if best is not None else (0, 0)
    assert got == _brute_best(ids, max_period)


@settings(max_examples=300, deadline=None)
@given(ids=fingerprints, max_period=st.integers(1, 6), above=st.integers(1, 4))
def test_no_stretch_listed_twice(ids: list[int], max_period: int, above: int) -> None:
    """No two listed runs cover the same steps (a stretch is never repeated at a multiple)."""
    _, runs = search(ids, max_period, above)
    spans = [(r.start, r.end) for r in runs]
    assert len(spans) == len(set(spans))
    assert runs == sorted(runs, key=lambda r: (r.start, r.period))


def _trajectory(names: list[str]) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        events += turn(call(name, f"c{i}", {"n": name}), result(f"c{i}", "ok"))
    return {"id": "t", "events": events}


@settings(max_examples=150, deadline=None)
@given(names=st.lists(st.sampled_from("abc"), max_size=20), max_=st.integers(1, 3),
       period=st.integers(1, 4))
def test_loop_steps_is_union_of_runs(names: list[str], max_: int, period: int) -> None:
    """loopSteps counts each watched step lying inside at least one listed run once."""
    config = maxrepeat.MaxRepeatConfig(max_, max_cycle_period=period, match="name-args")
    meta = maxrepeat.grade(_trajectory(names), config).metadata
    covered = {s for r in meta.runs for s in range(r.start_step, r.end_step + 1)}
    assert meta.loop_steps == len(covered)


@settings(max_examples=150, deadline=None)
@given(names=st.lists(st.sampled_from("abc"), max_size=20), max_=st.integers(1, 3),
       period=st.integers(1, 4))
def test_failing_result_lists_its_headline_run(names: list[str], max_: int, period: int) -> None:
    """A failing result's reported run is one of its runs; a passing result has none."""
    config = maxrepeat.MaxRepeatConfig(max_, max_cycle_period=period, match="name-args")
    r = maxrepeat.grade(_trajectory(names), config)
    m = r.metadata
    headline = (m.period, m.occurrences, m.start_step, m.end_step, m.start_event, m.end_event)
    listed = [(x.period, x.occurrences, x.start_step, x.end_step, x.start_event, x.end_event)
              for x in m.runs]
    if r.passed:
        assert listed == []
    else:
        assert headline in listed
        assert tuple(m.pattern) in {x.pattern for x in m.runs}


def test_two_separate_loops_are_both_listed() -> None:
    """A single-step loop and a later two-step cycle both appear, ordered by start."""
    names = ["a"] * 4 + ["c"] + ["a", "b"] * 3
    config = maxrepeat.MaxRepeatConfig(2, max_cycle_period=2, match="name")
    meta = maxrepeat.grade(_trajectory(names), config).to_dict()["metadata"]
    assert [(r["period"], r["occurrences"], r["startStep"], r["endStep"]) for r in meta["runs"]] \
        == [(1, 4, 0, 3), (2, 3, 5, 10)]
    assert meta["loopSteps"] == 10


def test_run_events_and_pattern() -> None:
    """A run gives the event indices of its first and last watched call and its preview."""
    names = ["x", "a", "a", "a"]
    config = maxrepeat.MaxRepeatConfig(2, match="name")
    run = maxrepeat.grade(_trajectory(names), config).metadata.runs[0]
    # each step is turn_start, call, result, turn_end: step s's call is event 4*s + 1
    assert (run.start_event, run.end_event, run.pattern) == (5, 13, ("a",))


def test_multiple_of_period_is_not_listed_again() -> None:
    """A A A A A A with cycle periods up to 3 lists one period-1 run, not also 2 or 3."""
    config = maxrepeat.MaxRepeatConfig(1, max_cycle_period=3, match="name")
    runs = maxrepeat.grade(_trajectory(["a"] * 6), config).metadata.runs
    assert [(r.period, r.occurrences) for r in runs] == [(1, 6)]


@settings(max_examples=200, deadline=None)
@given(names=st.lists(st.sampled_from("abc"), max_size=30), max_=st.integers(1, 2),
       period=st.integers(1, 4), cap=st.integers(0, 3))
def test_capped_runs_are_the_largest_and_loop_steps_stays_exact(
    names: list[str], max_: int, period: int, cap: int
) -> None:
    """With ``max_runs``, the runs listed are the ``cap`` of greatest rank among all of them
    (most occurrences, then smaller period, then earlier start), still in start order; the
    total and loopSteps count them all, and the reported run is always listed."""
    config = maxrepeat.MaxRepeatConfig(max_, max_cycle_period=period, match="name-args")
    every = maxrepeat.grade(_trajectory(names), config, max_runs=0).metadata
    capped = maxrepeat.grade(_trajectory(names), config, max_runs=cap).metadata
    want = sorted(every.runs, key=lambda r: (-r.occurrences, r.period, r.start_step))
    if cap:
        want = want[:cap]
    assert list(capped.runs) == sorted(want, key=lambda r: (r.start_step, r.period))
    assert capped.runs_total == every.runs_total == len(every.runs)
    assert capped.loop_steps == every.loop_steps
    if every.runs and cap:
        assert (capped.start_step, capped.period) in {(r.start_step, r.period)
                                                      for r in capped.runs}


def test_default_cap_lists_100_of_many_runs() -> None:
    """A trajectory with 150 separate loops lists the default 100 and counts all 150."""
    names: list[str] = []
    for i in range(150):
        names += [f"t{i}"] * (2 + i % 3) + ["x"]
    config = maxrepeat.MaxRepeatConfig(1, match="name")
    meta = maxrepeat.grade(_trajectory(names), config).to_dict()["metadata"]
    assert meta["runsTotal"] == 150 and len(meta["runs"]) == 100
    assert sorted(r["occurrences"] for r in meta["runs"]) == [3] * 50 + [4] * 50
    assert meta["loopSteps"] == sum(2 + i % 3 for i in range(150))


def test_negative_max_runs_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="max_runs must be an integer >= 0"):
        maxrepeat.grade(_trajectory(["a"]), maxrepeat.MaxRepeatConfig(1), max_runs=-1)
    with pytest.raises(ValueError, match="max_runs"):
        maxrepeat.Monitor(maxrepeat.MaxRepeatConfig(1), max_runs=-2)
