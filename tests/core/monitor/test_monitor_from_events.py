"""Monitor.from_events: the state feeding every event gives, built from the batch tables.

At every prefix of random trajectories (every match mode, periods 1-10, tool filters,
late / early / missing / duplicate results, open turns, reused ids; a last call whose
result has not come yet) the built monitor's saved state equals, byte for byte, that of
a monitor fed the same events one by one, its result equals grade() of the prefix, and
it goes on exactly when fed the rest. On both grading paths (native and pure).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.core import accel
from maxrepeat.core.monitor.frombatch import prime
from tests.conftest import call, result, turn
from tests.core.monitor.test_monitor import configs, event_streams, unique_id_streams, word_streams

EXAMPLES = int(os.environ.get("MAXREPEAT_EXAMPLES", "150"))
PATHS = [True, False] if accel.available() else [False]


@pytest.fixture(params=PATHS, ids=lambda v: "native" if v else "pure")
def grading_path(request: pytest.FixtureRequest) -> Iterator[bool]:
    was = accel.use_native(bool(request.param))
    try:
        yield bool(request.param)
    finally:
        accel.use_native(was)


def _check_every_prefix(events: list[dict[str, Any]], config: MaxRepeatConfig,
                        forget: bool) -> None:
    fed = Monitor(config, forget_answers=forget)
    for k in range(len(events) + 1):
        if k:
            fed.feed(events[k - 1])
        built = Monitor.from_events(events[:k], config, forget_answers=forget)
        assert built.to_bytes() == fed.to_bytes(), k
        want = grade({"events": events[:k]}, config).to_dict()
        assert built.result().to_dict() == want, k
    # and the built monitor goes on as the fed one does
    half = len(events) // 2
    built = Monitor.from_events(events[:half], config, forget_answers=forget)
    for k in range(half, len(events)):
        got = built.feed(events[k]).to_dict()
        assert got == grade({"events": events[:k + 1]}, config).to_dict(), k


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(events=st.one_of(event_streams(), word_streams()), config=configs)
def test_built_state_equals_fed_state(grading_path: bool, events: list[dict[str, Any]],
                                      config: MaxRepeatConfig) -> None:
    _check_every_prefix(events, config, forget=False)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(events=unique_id_streams(), config=configs)
def test_built_state_with_forgotten_answers(grading_path: bool, events: list[dict[str, Any]],
                                            config: MaxRepeatConfig) -> None:
    _check_every_prefix(events, config, forget=True)


@pytest.mark.parametrize("match", ["name", "name-args", "observation"])
def test_a_long_log_is_taken_from_the_tables(grading_path: bool, match: str) -> None:
    """A loop of 300 turns whose last call has no result yet: all but the last step come
    from the batch tables (not fed), and the state is the fed one."""
    events: list[dict[str, Any]] = []
    for i in range(300):
        cid = f"c{i}"
        events += turn(call("bash", cid, {"n": i % 3}), result(cid, f"out {i % 3}"))
    events += [{"type": "turn_start", "data": {}}, call("bash", "last", {"n": 0})]
    config = MaxRepeatConfig(max=3, max_cycle_period=4, match=match)
    for forget in (False, True):
        built = Monitor(config, forget_answers=forget)
        taken = prime(built._tracker, events, "t")
        assert taken == len(events) - 1  # only the open turn's call is fed
        fed = Monitor(config, forget_answers=forget)
        fed.extend(events)
        assert built.to_bytes() == fed.to_bytes()
        assert built.result().to_dict() == grade({"events": events}, config).to_dict()


@pytest.mark.corpus
@pytest.mark.parametrize("match", ["observation", "name-args", "name"])
def test_real_claude_code_transcripts_are_taken_from_the_tables(match: str) -> None:
    """Each real Claude Code transcript of the corpus (sessions and subagents): every event
    comes from the batch tables, and the state is the one feeding every event gives."""
    from maxrepeat import read_trajectories
    from tests.conftest import CORPUS

    paths = sorted((CORPUS / "claude-code").glob("*.jsonl"))
    assert paths
    config = MaxRepeatConfig(max=3, max_cycle_period=2, match=match)
    for path in paths:
        for traj in read_trajectories(path, format="claude-code"):
            events = list(traj.events)
            for forget in (False, True):
                built = Monitor(config, forget_answers=forget)
                assert prime(built._tracker, events, "t") == len(events), path
                fed = Monitor(config, forget_answers=forget)
                fed.extend(events)
                assert built.to_bytes() == fed.to_bytes(), path
