"""The max-repeat grader: one trajectory, one config, one `GraderResult` (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import MaxRepeatConfig
from .errors import MalformedValueError, TrajectoryFormatError, UnsafeMatchError
from .events import Trajectory, trajectory_from_dict
from .fingerprints import StepTable, build_step_table, make_steps
from .preview import inert, shorten
from .result import GraderResult, ResultMetadata, Run, RunOutcome, Watched
from .rules import DEFAULT_MAX_RUNS, rank
from .search import find_runs
from .steps import Step

__all__ = [
    "grade",
    "grade_with_steps",
    "steps",
    "as_trajectory",
    "error_result",
    "result_from_table",
    "build_result",
    "check_max_runs",
    "run_rank",
]


def as_trajectory(trajectory: Trajectory | Mapping[str, Any]) -> Trajectory:
    """A `Trajectory` from either a `Trajectory` or a dict in the spec's JSON shape."""
    if isinstance(trajectory, Trajectory):
        return trajectory
    return trajectory_from_dict(trajectory)


def _base_metadata(config: MaxRepeatConfig, trajectory: Trajectory | None,
                   source: str | None = None) -> ResultMetadata:
    return ResultMetadata(
        max=config.max,
        max_cycle_period=config.max_cycle_period,
        match=config.match,
        tools=config.tools,
        format=trajectory.format if trajectory is not None else None,
        lenient=trajectory.lenient if trajectory is not None else False,
        source=inert(trajectory.source) if trajectory is not None and
        trajectory.source is not None else source,
    )


def error_result(
    label: str,
    config: MaxRepeatConfig,
    reason: str,
    *,
    name: str | None = None,
    trajectory: Trajectory | None = None,
    source: str | None = None,
) -> GraderResult:
    """The result of a grader that could not run: status ``error``, no verdict.

    ``source`` says where the unreadable input was (``file`` or ``file:line``) when there
    is no ``trajectory`` to tell it.

    >>> error_result("bad.json", MaxRepeatConfig(1), "bad.json: not JSON").status
    'error'
    """
    return GraderResult(
        trajectory=inert(label),
        name=inert(name or config.display_name),
        status="error",
        passed=False,
        score=0.0,
        evidence=inert(shorten(reason, 2000)),
        metadata=_base_metadata(config, trajectory,
                                None if source is None else inert(source)),
    )


def run_rank(run: Run) -> tuple[int, int, int]:
    """A listed run's `rules.rank` (which runs a capped ``metadata.runs`` keeps)."""
    return rank(run.occurrences, run.period, run.start_step)


def _times(k: int) -> str:
    return "once" if k == 1 else f"{k} times"


def _evidence(config: MaxRepeatConfig, watched_steps: int, best: Run | None, passed: bool) -> str:
    limit = f"(max {config.max})"
    if best is None:
        if not watched_steps:
            return f"no watched tool call found {limit}"
        return (
            f"no repeat found: all {watched_steps} watched steps have empty observations "
            f"{limit}"
        )
    where = f"steps {best.start_step}-{best.end_step}"
    if best.period == 1:
        action = best.pattern[0]
        if passed:
            if best.occurrences == 1:
                return f"no step repeats: largest repeat is 1 occurrence {limit}"
            return (
                f"largest repeat: {action} {_times(best.occurrences)} in a row at {where} {limit}"
            )
        return f"{action} repeated {best.occurrences} times in a row at {where} {limit}"
    block = "[" + " | ".join(best.pattern) + "]"
    if passed:
        return (
            f"largest repeat: cycle of period {best.period} {block} "
            f"{_times(best.occurrences)} at {where} {limit}"
        )
    return (
        f"cycle of period {best.period} {block} repeated {best.occurrences} times "
        f"at {where} {limit}"
    )


def result_from_table(
    trajectory: Trajectory, config: MaxRepeatConfig, table: StepTable, name: str,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> GraderResult:
    """The result for a fingerprinted step table (listing at most ``max_runs`` runs)."""
    outcome = find_runs(trajectory.events, table, config, max_runs)
    watched = Watched(steps=len(table.steps), calls=table.calls, empty=table.empty_steps)
    return build_result(trajectory, config, name, outcome, watched)


def build_result(trajectory: Trajectory, config: MaxRepeatConfig, name: str,
                 outcome: RunOutcome, watched: Watched) -> GraderResult:
    """The result of a run finder's ``outcome`` over the ``watched`` steps: the verdict,
    its evidence and the metadata (shared by every engine: `grade`, the windowed engine
    and the monitor)."""
    best = outcome.best
    occurrences = best.occurrences if best is not None else 0
    passed = occurrences <= config.max
    base = _base_metadata(config, trajectory)
    metadata = ResultMetadata(
        max=base.max,
        max_cycle_period=base.max_cycle_period,
        match=base.match,
        tools=base.tools,
        occurrences=occurrences,
        period=best.period if best is not None else 0,
        start_step=best.start_step if best is not None else None,
        end_step=best.end_step if best is not None else None,
        start_event=best.start_event if best is not None else None,
        end_event=best.end_event if best is not None else None,
        watched_steps=watched.steps,
        watched_calls=watched.calls,
        empty_steps=watched.empty,
        pattern=best.pattern if best is not None else (),
        pattern_tools=tuple(inert(t) for t in outcome.best_tools),
        runs=outcome.runs,
        runs_total=outcome.total,
        loop_steps=outcome.covered,
        format=base.format,
        lenient=base.lenient,
        source=base.source,
    )
    return GraderResult(
        trajectory=inert(trajectory.label),
        name=inert(name),
        status="ok",
        passed=passed,
        score=1.0 if passed else 0.0,
        evidence=_evidence(config, watched.steps, best, passed),
        metadata=metadata,
    )


def grade(
    trajectory: Trajectory | Mapping[str, Any],
    config: MaxRepeatConfig,
    *,
    name: str | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> GraderResult:
    """Grade one trajectory with one ``max-repeat`` config (spec §3–5).

    ``trajectory`` is a `Trajectory` or a dict in the spec's JSON shape. Never raises on
    bad input: a malformed trajectory or an empty ``tools`` regex gives a result with
    status ``error``. ``metadata.runs`` lists at most ``max_runs`` runs above ``max``
    (those of greatest rank: most occurrences, then smaller period, then earlier start;
    listed in start order; 0 lists all);
    ``metadata.runsTotal`` counts them all and ``loopSteps`` covers them all. A negative
    ``max_runs`` raises `ValueError`.

    >>> t = {"events": [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": str(i)}}
    ...                 for i in range(4)]}
    >>> r = grade(t, MaxRepeatConfig(3, match="name"))
    >>> r.passed, r.metadata.occurrences, r.evidence
    (False, 4, 'bash repeated 4 times in a row at steps 0-3 (max 3)')
    """
    return _graded(trajectory, config, name, max_runs)[0]


def grade_with_steps(
    trajectory: Trajectory | Mapping[str, Any],
    config: MaxRepeatConfig,
    *,
    name: str | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> tuple[GraderResult, tuple[Step, ...] | None]:
    """`grade`, and the watched steps it found (None for an ``error`` result): reports
    that draw the steps take them from here instead of fingerprinting the trajectory again.
    Values in the steps may still be the input's undecoded bytes (``msgspec.Raw``): a
    report decodes only what it shows.

    >>> t = {"events": [{"type": "tool_call", "data": {"toolName": "bash"}}]}
    >>> result, found = grade_with_steps(t, MaxRepeatConfig(1))
    >>> result.passed, [s.calls[0].tool_name for s in found]
    (True, ['bash'])
    """
    result, traj, table = _graded(trajectory, config, name, max_runs)
    if traj is None or table is None:
        return result, None
    return result, make_steps(traj.events, table)


def _graded(
    trajectory: Trajectory | Mapping[str, Any], config: MaxRepeatConfig, name: str | None,
    max_runs: int,
) -> tuple[GraderResult, Trajectory | None, StepTable | None]:
    """The result, with the trajectory and step table it came from (None when the grader
    could not run)."""
    check_max_runs(max_runs)
    display = name or config.display_name
    try:
        traj = as_trajectory(trajectory)
    except TrajectoryFormatError as err:
        label = "<trajectory>"
        if isinstance(trajectory, Mapping) and isinstance(trajectory.get("id"), str):
            label = trajectory["id"]
        return error_result(label, config, f"malformed trajectory: {err}", name=display), None, None
    reason = _cannot_grade(traj, config)
    if reason is None:
        try:
            table = build_step_table(traj.events, config)
            return (result_from_table(traj, config, table, display, max_runs), traj,
                    table)
        except TrajectoryFormatError as err:
            reason = f"malformed trajectory: {traj.source or traj.label}: {err}"
        except RecursionError:
            reason = "a value in the trajectory is nested too deeply to compare"
        except UnsafeMatchError as err:
            reason = str(err)
        except MalformedValueError as err:
            # a value that is not JSON, or a Raw slice that cannot be decoded
            reason = f"malformed value in trajectory: {err}"
        except Exception as err:  # grade() never raises; a bug is named as one
            reason = internal_error(err)
    return error_result(traj.label, config, reason, name=display, trajectory=traj), None, None


def check_max_runs(max_runs: int) -> None:
    """Refuse a ``max_runs`` that is not a whole number >= 0 (a caller's mistake).

    >>> check_max_runs(-1)
    Traceback (most recent call last):
    ...
    ValueError: max_runs must be an integer >= 0 (got -1)
    """
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 0:
        raise ValueError(f"max_runs must be an integer >= 0 (got {max_runs!r})")


def internal_error(err: BaseException) -> str:
    """The reason of an error result caused by a maxrepeat bug (never the input's fault).

    >>> internal_error(KeyError("x"))
    "internal error while grading: KeyError: 'x' (a maxrepeat bug: please report it)"
    """
    return (f"internal error while grading: {type(err).__name__}: {err} "
            "(a maxrepeat bug: please report it)")


def _cannot_grade(traj: Trajectory, config: MaxRepeatConfig) -> str | None:
    """Why ``config`` cannot grade at all (an empty ``tools`` regex), or None."""
    empty = config.empty_patterns()
    if not empty:
        return None
    return (f"tools pattern {inert(repr(empty[0]))} compiles to an empty regular expression, "
            "which would watch every tool; remove it or write a real pattern")


def steps(trajectory: Trajectory | Mapping[str, Any], config: MaxRepeatConfig) -> tuple[Step, ...]:
    """The watched steps of a trajectory with their calls, observations and fingerprints.
    Arguments and observations are plain Python values (dicts, lists, strings, numbers),
    however the trajectory was read.

    >>> t = {"events": [{"type": "tool_call", "data": {"toolName": "bash"}}]}
    >>> [s.calls[0].tool_name for s in steps(t, MaxRepeatConfig(1))]
    ['bash']
    """
    traj = as_trajectory(trajectory)
    table = build_step_table(traj.events, config)
    return make_steps(traj.events, table, decode=True)
