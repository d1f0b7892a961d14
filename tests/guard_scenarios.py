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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
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


def steps(scenario: str) -> list[list[tuple[str, dict[str, Any]]]]:
    """The model responses of ``scenario``: `PARALLEL` for ``"parallel"``, else one call
    of `SCRIPTS` a response."""
    return list(PARALLEL) if scenario == "parallel" else [[c] for c in SCRIPTS[scenario]]


def scripted_tools(executed: list[str]) -> list[Callable[..., str]]:
    """The scripted tools, ``run_tests`` and ``edit``, as plain functions (a framework
    wraps them in its own tool type), each adding its name to ``executed`` as it runs."""

    def run_tests(path: str) -> str:
        """Run the tests.

        Args:
            path: Which tests to run.
        """
        executed.append("run_tests")
        return tool_output("run_tests", {"path": path})

    def edit(path: str, text: str) -> str:
        """Write a file.

        Args:
            path: The file.
            text: What to write.
        """
        executed.append("edit")
        return tool_output("edit", {"path": path})

    return [run_tests, edit]


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


def _judged(outcome: Outcome, config: MaxRepeatConfig, scenario: str) -> Trajectory:
    """The run as the guard judged it: the framework's record, and the stopped response's
    calls where the record ends before them (observation mode stops between steps)."""
    record = outcome.trajectory
    if outcome.stopped is None or outcome.stop_recorded or config.match == "observation":
        return record
    name, args = SCRIPTS[scenario][len(_steps(record))]
    return Trajectory(events=(*record.events, turn_start(), tool_call(name, "stopped", args),
                              turn_end()))


def _refused(turn: list[Any]) -> bool:
    """Whether the step's calls were answered with the guard's refusal."""
    return any(e.type == "tool_result" and isinstance(e.data.result, str)
               and e.data.result.startswith(MARK) for e in turn)


def _check_steps(outcome: Outcome, config: MaxRepeatConfig, turns: list[list[Any]],
                 levels: list[int], first_fail: int) -> None:
    """Refused exactly where the level reaches block_at (a refused step counts as the
    repeat it was: in name-args mode its calls are what is compared), stopped at the first
    step whose level reaches stop_at, before its calls ran. In observation mode a result
    is not known before the call: nothing is refused, the model is told (warning, then
    blocking reason) and the run stops after the step whose level reaches stop_at."""
    refused = [_refused(t) for t in turns]
    n = len(turns)
    assert next(k for k, lv in enumerate(levels) if lv >= STOP_AT) == n, levels
    if config.match == "observation":
        assert not any(refused)
        assert outcome.executed == sum(e.type == "tool_call" for t in turns for e in t)
        assert "(blocked)" in outcome.contexts[first_fail + BLOCK_AT - WARN_AT]
        return
    assert refused[:-1] == [BLOCK_AT <= lv < STOP_AT for lv in levels[1:n]], levels
    assert all(refused[-1] or e.type != "tool_result" for e in turns[-1])
    assert outcome.executed == sum(sum(e.type == "tool_call" for e in t)
                                   for t, r in zip(turns[:-1], refused, strict=False) if not r)


def check(outcome: Outcome, config: MaxRepeatConfig, scenario: str) -> None:
    """The run of ``scenario`` under ``config`` held against post-hoc grading, step by step
    (the module docstring says what is checked)."""
    turns = _steps(traj := _judged(outcome, config, scenario))
    graded = [grade(_prefix(traj, k), config) for k in range(len(turns) + 1)]
    warned = [MARK in text for text in outcome.contexts]
    final = grade(outcome.trajectory, config)
    if scenario == "clean":
        assert final.passed, final.evidence
        assert not any(warned) and not any(_refused(t) for t in turns)
        assert outcome.stopped is None and outcome.executed == len(SCRIPTS["clean"])
        return
    first_fail = next(k for k, g in enumerate(graded) if not g.passed)
    # The model is told at the call right after the first failing step, not before.
    assert warned.index(True) == first_fail, (warned, first_fail)
    assert outcome.stopped is not None
    _check_steps(outcome, config, turns, [level(g) for g in graded], first_fail)
    # The stop error carries the results, and they are post-hoc grading's: the same
    # verdict (the live monitor names its run differently: metadata.source).
    [live] = outcome.stopped.results
    assert replace(live.metadata, source=None) == replace(final.metadata, source=None), (
        live.metadata, final.metadata)
    assert live.evidence == final.evidence, (live.evidence, final.evidence)
    assert not live.passed


def check_parallel(outcome: Outcome) -> None:
    """`PARALLEL` under `NAME_ARGS`: the calls of one response are one step, so the model
    is warned once, after the third response (six calls, three steps), not once per call."""
    check(outcome, NAME_ARGS, "parallel")
    assert [MARK in c for c in outcome.contexts].index(True) == 3
    assert outcome.executed == 2 * 3


def check_observation(outcome: Outcome) -> None:
    """The loop under `OBSERVATION`: warned, refused and stopped after the calls, at the
    fifth repeat."""
    check(outcome, OBSERVATION, "loop")
    assert "5 times in a row" in str(outcome.stopped)


#: the runs every framework's guard is checked on (`check_case`): each of `SCRIPTS`, the
#: parallel calls of `PARALLEL`, and the loop in observation mode
CASES = [*SCRIPTS, "parallel", "observation"]
#: the same for a framework whose scripted model makes one call a response
SERIAL_CASES = [c for c in CASES if c != "parallel"]


def check_case(run: Callable[[str, MaxRepeatConfig], Outcome], case: str) -> None:
    """One of `CASES` on a framework's ``run(scenario, config)``: a scenario of `SCRIPTS`
    under `NAME_ARGS` (`check`), ``"parallel"`` (`check_parallel`), or
    ``"observation"``, the loop under `OBSERVATION` (`check_observation`)."""
    if case == "observation":
        check_observation(run("loop", OBSERVATION))
    elif case == "parallel":
        check_parallel(run("parallel", NAME_ARGS))
    else:
        check(run(case, NAME_ARGS), NAME_ARGS, case)


def check_warning_stays(outcome: Outcome) -> None:
    """Once given, the warning is in every later model call's history."""
    warned = [i for i, text in enumerate(outcome.contexts) if "(warning)" in text]
    assert warned and warned == list(range(warned[0], len(outcome.contexts)))


def clean_steps(n: int = 100) -> list[list[tuple[str, dict[str, Any]]]]:
    """``n`` model responses of one call each, none repeating: the run a cost is timed on."""
    return [[("edit", {"path": f"f{i}.py", "text": "x"})] for i in range(n)]


def cost_per_call(framework: str, spent: Sequence[float],
                  capsys: pytest.CaptureFixture[str]) -> float:
    """The guard's CPU seconds per tool call from ``spent`` (one figure per call, or per
    step of one call), printed with its first and last tenth: the figures on the
    framework's docs page, which must not grow over a run."""
    tenth = max(1, len(spent) // 10)
    per_call = sum(spent) / len(spent)
    first, last = (sum(part) / tenth for part in (spent[:tenth], spent[-tenth:]))
    with capsys.disabled():
        print(f"\n{framework} guard: {per_call * 1e3:.3f} ms CPU per tool call over "
              f"{len(spent)} calls (first tenth {first * 1e3:.3f} ms, last tenth "
              f"{last * 1e3:.3f} ms)")
    return per_call


def needs(*modules: str, reason: str | None = None) -> Any:
    """An autouse fixture for a test module (``_needs = needs("llama_index.core")``): each
    test is skipped without ``modules``, which are imported when a test runs. A module-level
    `pytest.importorskip` would import the framework at collection, in every xdist worker,
    whichever tests run."""

    @pytest.fixture(autouse=True)
    def _needs() -> None:
        for name in modules:
            pytest.importorskip(name, reason=reason)

    return _needs


def check_missing_extra(monkeypatch: Any, module: str, hidden: str, extra: str) -> None:
    """Without the framework (``hidden`` made unimportable), making a guard of
    ``maxrepeat.guards.frameworks.<module>`` raises `MissingExtraError` naming ``extra``;
    the module's classes are made anew, as on a first use."""
    import importlib
    import re
    import sys

    from maxrepeat import MissingExtraError

    mod = importlib.import_module(f"maxrepeat.guards.frameworks.{module}")
    monkeypatch.setattr(mod, "_CLASSES", mod.FrameworkClasses(mod._build))  # not built yet
    monkeypatch.setitem(sys.modules, hidden, None)
    with pytest.raises(MissingExtraError, match=re.escape(f"maxrepeat[{extra}]")):
        mod.loop_guard(NAME_ARGS)
