"""maxrepeat.Monitor: after every event, exactly what grade() says of the prefix."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat import Event, EventData, MaxRepeatConfig, Monitor, Trajectory, grade
from maxrepeat.core.monitor.stepview import StepViews
from tests.conftest import call, result, turn
from tests.strategies import LETTERS, loop_words

TOOLS = ["bash", "read", "edit"]
VALUES: list[Any] = [None, "", " \n", "ok", "ok", "fail", [], {}, {"a": 1}, {"a": 1.0}, 0, False]


@st.composite
def event_streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events with repeated blocks, parallel calls, late/early/duplicate/missing results,
    stray turn boundaries, calls without ids and reused ids."""
    blocks: list[list[dict[str, Any]]] = []
    counter = 0
    late: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["turn", "turn", "turn", "bare", "stray", "message",
                                     "open"]))
        if kind == "stray":
            blocks.append([{"type": draw(st.sampled_from(["turn_end", "turn_start"])),
                            "data": {}}])
            continue
        if kind == "message":
            blocks.append([{"type": "assistant_message", "data": {"content": "hi"}}])
            continue
        body: list[dict[str, Any]] = []
        for _ in range(1 if kind == "bare" else draw(st.integers(1, 3))):
            counter += 1
            cid: str | None = f"c{counter}"
            if draw(st.integers(0, 9)) == 0:
                cid = None
            elif draw(st.integers(0, 9)) == 0:
                cid = f"c{draw(st.integers(1, counter))}"  # a reused id
            ev = call(draw(st.sampled_from(TOOLS)), cid, draw(st.sampled_from(VALUES)))
            if draw(st.booleans()):
                del ev["data"]["arguments"]
            res = result(cid or "none", draw(st.sampled_from(VALUES)))
            where = draw(st.sampled_from(["after", "after", "after", "before", "late",
                                          "missing", "twice"]))
            if where == "before":
                body += [res, ev]
            elif where == "late":
                body.append(ev)
                late.append(res)
            elif where == "missing":
                body.append(ev)
            elif where == "twice":
                body += [ev, res, result(cid or "none", draw(st.sampled_from(VALUES)))]
            else:
                body += [ev, res]
        if kind == "turn":
            body = turn(*body)
        elif kind == "open":
            body = [{"type": "turn_start", "data": {}}, *body]
        blocks.append(body)
        flush = draw(st.booleans())
        if late and flush:
            blocks.append([late.pop(0)])
    # Repeat a random slice of blocks so that runs of every period show up.
    if blocks:
        i = draw(st.integers(0, len(blocks) - 1))
        j = draw(st.integers(i + 1, min(len(blocks), i + 6)))
        blocks[j:j] = blocks[i:j] * draw(st.integers(0, 5))
    events = [e for b in blocks for e in b] + late
    return events


@st.composite
def word_streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A word of overlapping runs of different periods (``a a a b a b a b``), one turn per
    letter, sometimes with a late or missing result or a bare call in it."""
    events: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    for n, letter in enumerate(draw(loop_words())):
        tool, args, value = LETTERS[letter]
        cid = f"w{n}"
        ev, res = call(tool, cid, args), result(cid, value)
        where = draw(st.sampled_from(["after"] * 12 + ["late", "missing", "bare"]))
        if where == "late":
            events += turn(ev)
            late.append(res)
        elif where == "missing":
            events += turn(ev)
        elif where == "bare":
            events += [ev, res]
        else:
            events += turn(ev, res)
    return events + late


configs = st.builds(
    MaxRepeatConfig,
    max=st.integers(1, 4),
    max_cycle_period=st.integers(1, 10),
    match=st.sampled_from(["observation", "name", "name-args"]),
    tools=st.sampled_from([None, None, ["^bash$"], ["e"]]),
)


@settings(max_examples=int(os.environ.get("MAXREPEAT_EXAMPLES", "800")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(events=st.one_of(event_streams(), word_streams()), config=configs)
def test_every_prefix_equals_grade(events: list[dict[str, Any]], config: MaxRepeatConfig) -> None:
    """feed() returns grade() of the prefix, field for field, after every event."""
    monitor = Monitor(config)
    assert monitor.result().to_dict() == grade({"events": []}, config).to_dict()
    for k, event in enumerate(events, 1):
        got = monitor.feed(event).to_dict()
        assert got == grade({"events": events[:k]}, config).to_dict(), k


@settings(max_examples=int(os.environ.get("MAXREPEAT_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(events=st.one_of(event_streams(), word_streams()), config=configs,
       cap=st.integers(1, 2))
def test_capped_runs_equal_grade_at_every_prefix(
    events: list[dict[str, Any]], config: MaxRepeatConfig, cap: int
) -> None:
    """With ``max_runs`` below the number of runs (1 or 2), the monitor lists the same runs
    as grade() at every prefix, settled or still growing, and the same total."""
    monitor = Monitor(config, max_runs=cap)
    for k, event in enumerate(events, 1):
        got = monitor.feed(event).to_dict()
        assert got == grade({"events": events[:k]}, config, max_runs=cap).to_dict(), k


def test_capped_runs_with_more_runs_than_the_cap() -> None:
    """Ten separate loops, cap 3: at every prefix the monitor equals grade(); at the end
    three runs are listed, ten counted (a case the random streams may not reach)."""
    cfg = MaxRepeatConfig(max=1, match="name-args")
    events: list[dict[str, Any]] = []
    for i in range(10):
        for k in range(2 + i % 4):
            cid = f"c{i}-{k}"
            events += turn(call("bash", cid, {"n": i}), result(cid, "ok"))
        events += turn(call("read", f"r{i}", {"n": i}), result(f"r{i}", "ok"))
    monitor = Monitor(cfg, max_runs=3)
    for k, event in enumerate(events, 1):
        got = monitor.feed(event)
        assert got.to_dict() == grade({"events": events[:k]}, cfg, max_runs=3).to_dict(), k
    assert got.metadata.runs_total == 10 and len(got.metadata.runs) == 3
    assert [r.occurrences for r in got.metadata.runs] == [4, 5, 5]  # loops 2, 3 and 7
    restored = Monitor.from_bytes(monitor.to_bytes(), cfg, max_runs=3)
    assert restored.result().to_dict() == got.to_dict()


@settings(max_examples=60, deadline=None)
@given(events=event_streams(), config=configs, cut=st.integers(0, 200))
def test_saved_state_continues_exactly(
    events: list[dict[str, Any]], config: MaxRepeatConfig, cut: int
) -> None:
    """A monitor restored from to_bytes() mid-stream ends with the same result."""
    cut = min(cut, len(events))
    first = Monitor(config)
    first.feed_all(events[:cut])
    second = Monitor.from_bytes(first.to_bytes(), config)
    assert second.events == cut
    assert second.feed_all(events[cut:]).to_dict() == grade({"events": events}, config).to_dict()


@st.composite
def unique_id_streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turns and bare calls whose call ids are all different; results after, before, late,
    twice or never."""
    events: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    plan = draw(st.lists(st.tuples(st.sampled_from(["turn", "bare"]), st.integers(1, 2)),
                         max_size=12))
    tools = draw(st.lists(st.sampled_from(TOOLS[:2]), min_size=1, max_size=3))
    for n, (kind, calls) in enumerate(plan):
        body: list[dict[str, Any]] = []
        for c in range(calls if kind == "turn" else 1):
            cid = f"c{n}-{c}"
            ev = call(tools[n % len(tools)], cid, {"n": n % 2})
            res = result(cid, draw(st.sampled_from(VALUES)))
            where = draw(st.sampled_from(["after", "after", "before", "late", "missing",
                                          "twice"]))
            body += {"after": [ev, res], "before": [res, ev], "late": [ev],
                     "missing": [ev], "twice": [ev, res, res]}[where]
            if where == "late":
                late.append(res)
        events += turn(*body) if kind == "turn" else body
        flush = draw(st.booleans())
        if late and flush:
            events.append(late.pop(0))
    return events + late


@settings(max_examples=100, deadline=None)
@given(events=unique_id_streams(), period=st.integers(1, 4))
def test_forget_answers_is_exact_when_call_ids_are_unique(
    events: list[dict[str, Any]], period: int
) -> None:
    """With forget_answers=True and unique call ids every prefix still equals grade()."""
    config = MaxRepeatConfig(max=1, max_cycle_period=period)
    monitor = Monitor(config, forget_answers=True)
    for k, event in enumerate(events, 1):
        assert monitor.feed(event).to_dict() == grade({"events": events[:k]}, config).to_dict()


def test_forget_answers_keeps_memory_flat() -> None:
    """In observation mode, forget_answers=True drops each answer once its step settles."""
    config = MaxRepeatConfig(max=3, max_cycle_period=2)
    monitor = Monitor(config, forget_answers=True)
    for i in range(2000):
        monitor.feed_all(turn(call("bash", f"c{i}", {"n": i % 5}), result(f"c{i}", i % 3)))
    assert len(monitor._tracker.st.answers) == 0 and len(monitor.to_bytes()) < 4096


def test_a_result_that_never_comes_does_not_hold_back_later_steps() -> None:
    """Later steps are pushed (speculatively) past a step still waiting for its result."""
    config = MaxRepeatConfig(max=2)
    events = turn(call("bash", "never"))
    for i in range(50):
        events += turn(call("bash", f"c{i}"), result(f"c{i}", "same"))
    monitor = Monitor(config)
    got = monitor.feed_all(events)
    assert not monitor._tracker.st.tail and len(monitor._tracker.st.log) == 51
    assert got.to_dict() == grade({"events": events}, config).to_dict()


def test_typed_events_and_identity() -> None:
    """Event values work like dicts, and the trajectory id and format reach the result."""
    cfg = MaxRepeatConfig(max=1, match="name-args")
    events = [maxrepeat.tool_call("bash", f"c{i}", {"command": "ls"}) for i in range(3)]
    monitor = Monitor(cfg, id="run-7", format="claude-code")
    got = monitor.feed_all(events)
    want = grade(Trajectory(events=tuple(events), id="run-7", format="claude-code"), cfg)
    assert got.to_dict() == want.to_dict()
    assert got.trajectory == "run-7" and got.metadata.format == "claude-code"


def test_malformed_event_sticks() -> None:
    """A malformed event makes every later prefix an error result, as grade() does."""
    cfg = MaxRepeatConfig(max=2)
    events: list[dict[str, Any]] = [call("bash", "c1"), {"type": "tool_call", "data": {}},
                                    call("bash", "c2")]
    monitor = Monitor(cfg)
    for k, event in enumerate(events, 1):
        assert monitor.feed(event).to_dict() == grade({"events": events[:k]}, cfg).to_dict()
    assert monitor.result().status == "error"


def test_typed_event_without_name_is_an_error() -> None:
    """A typed tool_call without a tool name gives grade()'s error result."""
    cfg = MaxRepeatConfig(max=2)
    bad = Event("tool_call", EventData(tool_call_id="c1"))
    got = Monitor(cfg).feed(bad)
    assert got.to_dict() == grade(Trajectory(events=(bad,)), cfg).to_dict()
    assert got.status == "error"


def test_empty_tools_pattern_is_an_error() -> None:
    """A tools pattern that compiles to an empty regex errors on every prefix."""
    cfg = MaxRepeatConfig(max=2, tools=["(?i)"])
    got = Monitor(cfg).feed(call("bash", "c1"))
    assert got.status == "error"
    assert got.to_dict() == grade({"events": [call("bash", "c1")]}, cfg).to_dict()


def test_late_result_changes_an_earlier_step() -> None:
    """In observation mode a late result re-fingerprints its step: the loop appears."""
    cfg = MaxRepeatConfig(max=2)
    events = [*turn(call("bash", "c1"), result("c1", "x")),
              *turn(call("bash", "c2"), result("c2", "x")),
              *turn(call("bash", "c3")),
              *turn(call("bash", "c4"), result("c4", "x")),
              result("c3", "x")]
    monitor = Monitor(cfg)
    before = monitor.feed_all(events[:-1])
    after = monitor.feed(events[-1])
    assert (before.metadata.occurrences, after.metadata.occurrences) == (2, 4)
    assert after.to_dict() == grade({"events": events}, cfg).to_dict()


def test_memory_stays_bounded_in_normal_order() -> None:
    """A long run in the normal order keeps a window of 2 × period steps and an empty tail."""
    cfg = MaxRepeatConfig(max=3, max_cycle_period=3, match="name-args")
    monitor = Monitor(cfg)
    for i in range(3000):
        monitor.feed_all(turn(call("bash", f"c{i}", {"n": i % 7}), result(f"c{i}", "ok")))
    state = monitor._tracker.st
    assert len(state.front.window) == 6 and not state.tail and not state.log
    assert len(state.answers) == 0
    assert len(monitor.to_bytes()) < 4096


@pytest.mark.parametrize("match", ["observation", "name", "name-args"])
def test_a_loop_fails_at_the_step_that_exceeds_max(match: str) -> None:
    """The verdict flips to failed exactly when the (max+1)-th copy arrives."""
    cfg = MaxRepeatConfig(max=3, match=match)
    monitor = Monitor(cfg)
    verdicts = []
    for i in range(5):
        r = monitor.feed_all(turn(call("bash", f"c{i}", {"command": "make"}),
                                  result(f"c{i}", "error 1")))
        verdicts.append(r.passed)
    assert verdicts == [True, True, True, False, False]


def test_a_huge_turn_is_not_refingerprinted_at_every_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The open turn's step is compared through its running summary: the exact key of a
    step is built a few times per step, not once per event."""
    built = 0
    original = StepViews.done

    def counting(self: StepViews, step: Any, answers: Any) -> Any:
        nonlocal built
        built += 1
        return original(self, step, answers)

    monkeypatch.setattr(StepViews, "done", counting)
    cfg = MaxRepeatConfig(max=1, max_cycle_period=2)
    events: list[dict[str, Any]] = []
    for t in range(3):
        events += turn(*[e for i in range(500) for e in (call("read", f"c{t}-{i}", {"f": 1}),
                                                         result(f"c{t}-{i}", "x"))])
    monitor = Monitor(cfg)
    for event in events:
        monitor.feed(event)
    assert built <= 3 * 3
    monkeypatch.undo()
    assert monitor.result().to_dict() == grade({"events": events}, cfg).to_dict()


def _word(word: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for n, letter in enumerate(word.split()):
        tool, args, value = LETTERS[letter]
        events += turn(call(tool, f"w{n}", args), result(f"w{n}", value))
    return events


@pytest.mark.parametrize("match", ["observation", "name-args"])
def test_overlapping_runs_of_two_periods_count_shared_steps_once(match: str) -> None:
    """Regression: on ``a a a b a b a b`` the runs ``a`` (steps 0-2) and ``a b`` (steps
    2-7) share step 2, so 8 steps lie in a loop, not 3 + 6 = 9. A mutation of the
    monitor's loop-step counting (the overlap not subtracted) reported 9 and survived the
    random streams; every prefix is checked, both while ``a b`` still grows and after."""
    cfg = MaxRepeatConfig(max=2, max_cycle_period=2, match=match)
    events = _word("a a a b a b a b")
    monitor = Monitor(cfg)
    for k, event in enumerate(events, 1):
        assert monitor.feed(event).to_dict() == grade({"events": events[:k]}, cfg).to_dict()
    got = monitor.result().metadata
    assert [(r.start_step, r.end_step, r.period) for r in got.runs] == [(0, 2, 1), (2, 7, 2)]
    assert got.loop_steps == 8
    # Once both runs have ended (a different step follows), still 8.
    tail = _word("a a a b a b a b c")
    assert Monitor(cfg).feed_all(tail).metadata.loop_steps == 8
    assert grade({"events": tail}, cfg).metadata.loop_steps == 8


@settings(max_examples=300, deadline=None)
@given(spans=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), max_size=8),
       split=st.integers(0, 8))
def test_cover_counts_each_step_once(spans: list[tuple[int, int]], split: int) -> None:
    """The loop-step union (rules.Cover), settled part plus growing part, is the size of
    the set union of the runs' steps."""
    from maxrepeat.core.rules import Cover, covered_steps

    runs = [(lo, lo + n) for lo, n in spans]
    want = len({s for lo, hi in runs for s in range(lo, hi + 1)})
    assert covered_steps(runs) == want
    cover = Cover()
    settled = sum(cover.add(lo, hi) for lo, hi in runs[:split])
    assert settled + cover.uncovered(runs[split:]) == want
