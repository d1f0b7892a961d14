"""What every framework guard test checks, whatever the framework.

A test drives a real agent of its framework with the framework's own scripted model
through one of `SCRIPTS` (a loop, a cycle of period 2, a clean run) and hands over an
`Outcome`: what the model saw at each call, the run's messages converted to a trajectory,
how many tool calls really ran, and the stop error if any. `check` then holds it against
post-hoc grading of that trajectory, step by step:

* the first model call that sees the guard's warning is the one right after the first
  step at which ``maxrepeat.grade`` of the run so far fails;
* a step is refused (its calls answered with the refusal, not run) exactly when the
  policy's level after it is ``block_at`` or more, and the run stops at the first step
  whose level reaches ``stop_at``, before its calls run;
* the stop error's results equal ``grade`` of the converted messages;
* a clean run is untouched: no warning, no refusal, every call ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from maxrepeat import (
    GraderResult,
    MaxRepeatConfig,
    Trajectory,
    grade,
    tool_call,
    turn_end,
    turn_start,
)

#: the calls the scripted model makes, one per model response, then it answers
SCRIPTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "loop": [("run_tests", {"path": "tests/"})] * 9,
    "cycle": [("edit", {"path": "a.py", "text": "x"}), ("run_tests", {"path": "tests/"})] * 6,
    "clean": [("edit", {"path": f"f{i}.py", "text": "x"}) for i in range(4)]
    + [("run_tests", {"path": "tests/"})],
}
#: model responses of several calls each (parallel calls: one step per response)
PARALLEL: list[list[tuple[str, dict[str, Any]]]] = [
    [("run_tests", {"path": "tests/"}), ("edit", {"path": "a.py", "text": "x"})]] * 7
NAME_ARGS = MaxRepeatConfig(max=2, max_cycle_period=2, match="name-args")
OBSERVATION = MaxRepeatConfig(max=2, max_cycle_period=2)
WARN_AT, BLOCK_AT, STOP_AT = 1, 2, 3  # the default policy
MARK = "maxrepeat loop guard"


def tool_output(name: str, args: dict[str, Any]) -> str:
    """What the scripted tools answer (the same call, the same answer)."""
    if name == "run_tests":
        return f"FAILED {args.get('path')}::test_dates"
    return f"wrote {args.get('path')}"


@dataclass
class Outcome:
    contexts: list[str]  # what the model was sent, one text per model call
    trajectory: Trajectory  # the run's messages, converted afterwards
    executed: int  # tool calls that really ran
    stopped: Any = None  # the stop error, if the guard stopped the run
    #: whether the framework's record of a stopped run holds the stopped response (the
    #: Agents SDK's ``run_data`` ends before it; its calls are then the script's next)
    stop_recorded: bool = True
    results: tuple[GraderResult, ...] = field(default_factory=tuple)


def _steps(trajectory: Trajectory) -> list[list[Any]]:
    """The events of each turn (the guards make one turn per model response)."""
    turns: list[list[Any]] = []
    for event in trajectory.events:
        if event.type == "turn_start":
            turns.append([])
        elif turns:
            turns[-1].append(event)
    return turns


def _prefix(trajectory: Trajectory, k: int) -> Trajectory:
    out: list[Any] = []
    seen = 0
    for event in trajectory.events:
        if event.type == "turn_start":
            if seen == k:
                break
            seen += 1
        out.append(event)
    return Trajectory(events=tuple(out))


def level(result: GraderResult) -> int:
    """Occurrences above max of the run reaching the last step (0: no loop going on)."""
    last = result.metadata.watched_steps - 1
    live = [r.occurrences - result.metadata.max for r in result.metadata.runs
            if r.end_step + r.period > last]
    return max([0, *live])


def check(outcome: Outcome, config: MaxRepeatConfig, scenario: str) -> None:
    record = outcome.trajectory
    traj = record
    if outcome.stopped is not None and not outcome.stop_recorded and \
            config.match != "observation":  # (observation mode stops between steps)
        name, args = SCRIPTS[scenario][len(_steps(record))]
        traj = Trajectory(events=(*record.events, turn_start(),
                                  tool_call(name, "stopped", args), turn_end()))
    turns = _steps(traj)
    graded = [grade(_prefix(traj, k), config) for k in range(len(turns) + 1)]
    levels = [level(g) for g in graded]
    refused = [any(e.type == "tool_result" and isinstance(e.data.result, str)
                   and e.data.result.startswith(MARK) for e in t) for t in turns]
    warned = [MARK in text for text in outcome.contexts]
    final = grade(record, config)

    if scenario == "clean":
        assert final.passed, final.evidence
        assert not any(warned) and not any(refused) and outcome.stopped is None
        assert outcome.executed == len(SCRIPTS["clean"])
        return

    first_fail = next(k for k, g in enumerate(graded) if not g.passed)
    # The model is told at the call right after the first failing step, not before.
    assert warned.index(True) == first_fail, (warned, first_fail)
    # Stopped at the first step whose level reaches stop_at, before its calls ran.
    assert outcome.stopped is not None
    n = len(turns)
    if config.match != "observation":
        # Refused exactly where the level reaches block_at (a refused step counts as the
        # repeat it was: in name-args mode its calls are what is compared), stopped at
        # the first step whose level reaches stop_at, before its calls ran.
        assert refused[:-1] == [BLOCK_AT <= lv < STOP_AT for lv in levels[1:n]], levels
        assert next(k for k, lv in enumerate(levels) if lv >= STOP_AT) == n, levels
        assert all(refused[-1] or e.type != "tool_result" for e in turns[-1])
        assert outcome.executed == sum(sum(e.type == "tool_call" for e in t)
                                       for t, r in zip(turns[:-1], refused, strict=False) if not r)
    else:
        # In observation mode a result is not known before the call: nothing is refused,
        # the model is told (warning, then blocking reason) and the run stops after the
        # step whose level reaches stop_at.
        assert not any(refused)
        assert next(k for k, lv in enumerate(levels) if lv >= STOP_AT) == n, levels
        assert outcome.executed == sum(e.type == "tool_call" for t in turns for e in t)
        assert "(blocked)" in outcome.contexts[first_fail + BLOCK_AT - WARN_AT]
    # The stop error carries the results, and they are post-hoc grading's.
    [live] = outcome.stopped.results
    # the same verdict (the live monitor names its run differently: metadata.source)
    assert replace(live.metadata, source=None) == replace(final.metadata, source=None), (
        live.metadata, final.metadata)
    assert live.evidence == final.evidence, (live.evidence, final.evidence)
    assert not live.passed
