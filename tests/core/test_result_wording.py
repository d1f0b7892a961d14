"""The words of a result, pinned: evidence sentences, pattern previews in each `match`
mode, an error result's metadata, and the `max_runs` check (issue 28 item 8: a mutation
sample changed these and no test noticed).

Spec §5: "A period-1 failure names the repeated action and its count; a failure of period
>= 2 names the pattern, its period and its count; a pass says the largest repeat found
and the limit, or that no watched tool call was found."
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from maxrepeat import (
    MaxRepeatConfig,
    Trajectory,
    grade,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
)
from maxrepeat.core.grade import check_max_runs


def _trajectory(calls: list[tuple[str, dict[str, Any], str]]) -> Trajectory:
    events = []
    for i, (name, args, out) in enumerate(calls):
        events += [turn_start(), tool_call(name, f"c{i}", args), tool_result(f"c{i}", out),
                   turn_end()]
    return Trajectory(events, id="t")


LOOP = _trajectory([("bash", {"command": "pytest -x tests/"}, "1 failed")] * 4)
CYCLE = _trajectory([("edit", {"path": "a.py"}, "ok"), ("bash", {"command": "pytest"},
                                                        "1 failed")] * 3)
CLEAN = _trajectory([("bash", {"command": f"ls {i}"}, "x") for i in range(3)])

_A = 'bash {"command": "pytest -x tests/"}'
_E, _B = 'edit {"path": "a.py"}', 'bash {"command": "pytest"}'
CASES = [
    ("name", LOOP, "bash repeated 4 times in a row at steps 0-3 (max 2)", ("bash",)),
    ("name", CYCLE, "cycle of period 2 [edit | bash] repeated 3 times at steps 0-5 (max 2)",
     ("edit", "bash")),
    ("name-args", LOOP, f"{_A} repeated 4 times in a row at steps 0-3 (max 2)", (_A,)),
    ("name-args", CYCLE,
     f"cycle of period 2 [{_E} | {_B}] repeated 3 times at steps 0-5 (max 2)", (_E, _B)),
    ("name-args", CLEAN, "no step repeats: largest repeat is 1 occurrence (max 2)",
     ('bash {"command": "ls 0"}',)),
    ("observation", LOOP,
     f'{_A} -> "1 failed" repeated 4 times in a row at steps 0-3 (max 2)',
     (f'{_A} -> "1 failed"',)),
    ("observation", CYCLE, f'cycle of period 2 [{_E} -> "ok" | {_B} -> "1 failed"] repeated '
     "3 times at steps 0-5 (max 2)", (f'{_E} -> "ok"', f'{_B} -> "1 failed"')),
]


@pytest.mark.parametrize(("match", "trajectory", "evidence", "pattern"), CASES)
def test_evidence_and_pattern_in_each_match_mode(match: str, trajectory: Trajectory,
                                                 evidence: str, pattern: tuple[str, ...]
                                                 ) -> None:
    result = grade(trajectory, MaxRepeatConfig(max=2, match=match, max_cycle_period=2))
    assert result.evidence == evidence
    assert result.metadata.pattern == pattern


def test_a_trajectory_with_nothing_watched_says_so() -> None:
    result = grade(Trajectory([turn_start(), turn_end()], id="e"), MaxRepeatConfig(max=2))
    assert (result.status, result.passed, result.score) == ("ok", True, 1.0)
    assert result.evidence == "no watched tool call found (max 2)"
    assert result.metadata.occurrences == 0 and result.metadata.watched_steps == 0


def test_an_error_result_carries_no_verdict_and_its_config() -> None:
    """Spec §5: `error` carries no verdict (`passed` false, `score` 0), the evidence says
    why, and the metadata still holds the config in force."""
    config = MaxRepeatConfig(max=2, match="name", max_cycle_period=3, tools=["bash"])
    got = msgspec.to_builtins(grade({"events": 5}, config))
    assert (got["status"], got["passed"], got["score"]) == ("error", False, 0.0)
    assert got["evidence"] == "malformed trajectory: events must be an array (got a number)"
    meta = got["metadata"]
    assert (meta["max"], meta["match"], meta["maxCyclePeriod"], meta["tools"]) == (
        2, "name", 3, ("bash",))
    assert (meta["occurrences"], meta["period"], meta["startStep"], meta["endStep"],
            meta["startEvent"], meta["endEvent"], meta["pattern"], meta["runs"]) == (
        0, 0, None, None, None, None, (), ())
    assert (meta["watchedSteps"], meta["watchedCalls"], meta["emptySteps"]) == (0, 0, 0)


@pytest.mark.parametrize("bad", [1.5, -1, True, "3", None, 2.0])
def test_max_runs_must_be_a_whole_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_runs must be an integer >= 0"):
        check_max_runs(bad)


@pytest.mark.parametrize("good", [0, 1, 100])
def test_max_runs_accepts_whole_numbers(good: int) -> None:
    check_max_runs(good)
    assert grade(LOOP, MaxRepeatConfig(max=2), max_runs=good).metadata.occurrences == 4
