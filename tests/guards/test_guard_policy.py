"""The shared escalation policy and guard session layer (maxrepeat.guards.policy/session)."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.guards.policy import Action, Escalation, EscalationState, Policy, loop_message
from maxrepeat.guards.session import GuardSession, Snapshot, signature_of
from tests.conftest import call, result, turn


def _escalation(config: MaxRepeatConfig, policy: Policy | None = None) -> Escalation:
    return Escalation([Monitor(config)], policy)


def _feed_steps(esc: Escalation, steps: list[list[dict[str, Any]]]) -> list[Action]:
    actions = []
    for events in steps:
        esc.monitors[0].feed_all(events)
        actions.append(esc.decide().action)
    return actions


def _same(n: int, name: str = "Bash", args: Any = None) -> list[list[dict[str, Any]]]:
    return [turn(call(name, f"c{i}", args or {"command": "make"})) for i in range(n)]


def test_default_ladder_warn_block_stop() -> None:
    esc = _escalation(MaxRepeatConfig(max=2, match="name-args"))
    assert _feed_steps(esc, _same(6)) == [Action.NONE, Action.NONE, Action.WARN,
                                          Action.BLOCK, Action.STOP, Action.STOP]


def test_thresholds_and_switches() -> None:
    cfg = MaxRepeatConfig(max=1, match="name")
    esc = _escalation(cfg, Policy(warn_at=2, block_at=4, stop_at=5))
    assert _feed_steps(esc, _same(6)) == [Action.NONE, Action.NONE, Action.WARN,
                                          Action.WARN, Action.BLOCK, Action.STOP]
    esc = _escalation(cfg, Policy(block=False, stop=False))
    assert _feed_steps(esc, _same(5)) == [Action.NONE] + [Action.WARN] * 4
    esc = _escalation(cfg, Policy(warn=False, block=False, stop=False))
    assert _feed_steps(esc, _same(5)) == [Action.NONE] * 5
    with pytest.raises(ValueError, match="block_at must be an integer >= 1"):
        Policy(block_at=True)


def test_first_warning_at_first_failing_prefix_of_grade() -> None:
    """Random streams: the policy first speaks exactly where grade() of the prefix first
    fails, when that failure is a loop going on at that moment."""
    rng = random.Random(12)
    for _ in range(150):
        cfg = MaxRepeatConfig(max=rng.randint(1, 3), max_cycle_period=rng.randint(1, 3),
                              match=rng.choice(["name", "name-args", "observation"]))
        esc = _escalation(cfg)
        events: list[dict[str, Any]] = []
        first_fail = first_speak = None
        for i in range(rng.randint(3, 25)):
            name = rng.choice("ab")
            step = turn(call(name, f"c{i}", {"x": rng.randint(0, 1)}),
                        result(f"c{i}", rng.choice(["ok", "err"])))
            events += step
            esc.monitors[0].feed_all(step)
            if esc.decide().speaks and first_speak is None:
                first_speak = i
            if first_fail is None and grade({"events": events}, cfg).failed:
                first_fail = i
        assert first_speak == first_fail, (cfg, events)


def test_one_reason_per_step_even_with_parallel_calls() -> None:
    esc = _escalation(MaxRepeatConfig(max=1, match="name"))
    spoken = []
    for t in range(3):
        # Three parallel calls in one turn (one step): the agent logs the three calls,
        # then runs one hook per call, each asking for a decision.
        esc.monitors[0].feed_all([{"type": "turn_start", "data": {}},
                                  *(call("Read", f"c{t}-{j}") for j in range(3))])
        for j in range(3):
            esc.monitors[0].feed(result(f"c{t}-{j}", "text"))
            spoken.append(esc.decide().action)
        esc.monitors[0].feed({"type": "turn_end", "data": {}})
    assert spoken == [Action.NONE] * 3 + [Action.WARN, Action.NONE, Action.NONE] + \
        [Action.BLOCK, Action.NONE, Action.NONE]


def test_a_loop_that_ended_is_not_reported_again() -> None:
    esc = _escalation(MaxRepeatConfig(max=1, match="name"))
    steps = _same(2) + [turn(call("Edit", "e"))] + [turn(call("Read", "r"))]
    assert _feed_steps(esc, steps) == [Action.NONE, Action.WARN, Action.NONE, Action.NONE]
    assert esc.monitors[0].result().failed  # grade still fails the session


def test_message_names_the_cycle_and_the_count() -> None:
    esc = _escalation(MaxRepeatConfig(max=2, max_cycle_period=2, match="name"))
    steps = [turn(call(n, f"c{i}")) for i, n in enumerate("ababababab")]
    decisions = []
    for s in steps:
        esc.monitors[0].feed_all(s)
        decisions.append(esc.decide())
    # Spoken at each full copy only (steps 5, 7, 9), never at the half copies between.
    assert [i for i, d in enumerate(decisions) if d.speaks] == [5, 7, 9]
    first = next(d for d in decisions if d.speaks)
    assert first.action is Action.WARN
    assert first.message is not None
    assert "the cycle of 2 steps [a | b] 3 times in a row (at most 2 allowed" in first.message
    assert decisions[-1].action is Action.STOP and "stopping the agent" in str(
        decisions[-1].message)
    with pytest.raises(ValueError):
        loop_message(Action.NONE, first.loops)


def test_would_exceed_peeks_without_changing_the_monitors() -> None:
    cfg = MaxRepeatConfig(max=2, match="name-args")
    esc = _escalation(cfg)
    for s in _same(3):
        esc.monitors[0].feed_all(s)
    assert esc.decide().action is Action.WARN
    before = esc.monitors[0].to_bytes()
    state = esc.state
    peek = esc.would_exceed(turn(call("Bash", "next", {"command": "make"})))
    assert peek.action is Action.BLOCK
    assert peek.message is not None and peek.message.startswith("maxrepeat loop guard (blocked)")
    assert "this call would repeat" in peek.message and "did not run" in peek.message
    assert esc.monitors[0].to_bytes() == before and esc.state is state
    other = esc.would_exceed(turn(call("Bash", "next", {"command": "ls"})))
    assert other.action is Action.NONE
    # The peek equals what feeding the call gives.
    esc.monitors[0].feed_all(turn(call("Bash", "next", {"command": "make"})))
    assert esc.decide().action is peek.action


# -- the session layer -------------------------------------------------------------------

def _snap(offset: int) -> Snapshot:
    return Snapshot(offset, 3, b"reader", [b"m1"], EscalationState([4], 1), b"x")


def _session(cache: Path, log: Path | None, signature: str = "sig") -> GuardSession:
    return GuardSession(cache, agent="test", session="S", log=str(log) if log else None,
                        signature=signature)


def test_session_round_trip_and_new_lines(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b'{"a":1}\n{"b":2}\n{"c":')
    with _session(tmp_path / "c", log) as gs:
        assert gs.restore() is None
        assert list(gs.lines()) == [(1, b'{"a":1}\n'), (2, b'{"b":2}\n')]
        assert (gs.offset, gs.line_count, gs.partial) == (16, 2, b'{"c":')
        gs.store(_snap(gs.offset))
    with open(log, "ab") as fh:
        fh.write(b'3}\n')
    with _session(tmp_path / "c", log) as gs:
        snap = gs.restore()
        assert snap == _snap(16)
        assert list(gs.lines(snap.offset, 2)) == [(3, b'{"c":3}\n')]


@pytest.mark.parametrize("change", ["rewrite-before", "rewrite-head", "shrink", "signature",
                                    "corrupt", "other-version"])
def test_session_cache_is_verified_or_ignored(tmp_path: Path, change: str) -> None:
    log = tmp_path / "s.jsonl"
    body = b"".join(b'{"n":%d}\n' % i for i in range(2000))
    log.write_bytes(body)
    with _session(tmp_path / "c", log) as gs:
        list(gs.lines())
        gs.store(_snap(gs.offset))
    signature = "sig"
    if change == "rewrite-before":
        log.write_bytes(body[:-3] + b"8}\n")
    elif change == "rewrite-head":
        log.write_bytes(b'{"n":7}' + body[7:])
    elif change == "shrink":
        log.write_bytes(body[:100])
    elif change == "signature":
        signature = "other"
    elif change == "corrupt":
        gs.file.write_bytes(gs.file.read_bytes()[:-5])
    else:
        gs.file.write_bytes(gs.file.read_bytes().replace(b"/2/", b"/1/"))
    with _session(tmp_path / "c", log, signature) as gs2:
        assert gs2.restore() is None


def test_session_without_log_uses_the_callers_check(tmp_path: Path) -> None:
    with _session(tmp_path, None) as gs:
        gs.store(_snap(0), check=b"prefix-1")
    with _session(tmp_path, None) as gs:
        assert gs.restore(check=b"prefix-1") == _snap(0)
        assert gs.restore(check=b"prefix-2") is None


def test_session_lock_serialises_parallel_hooks(tmp_path: Path) -> None:
    order: list[str] = []
    with _session(tmp_path, None):
        def other() -> None:
            with _session(tmp_path, None):
                order.append("second")
        t = threading.Thread(target=other)
        t.start()
        time.sleep(0.2)
        order.append("first")
    t.join(5)
    assert order == ["first", "second"]


def test_signature_changes_with_policy() -> None:
    cfg = [MaxRepeatConfig(max=2)]
    assert signature_of(cfg, ["a"], Policy()) != signature_of(cfg, ["a"], Policy(stop_at=4))
    assert signature_of(cfg, ["a"], Policy()) == signature_of(cfg, ["a"], Policy())
