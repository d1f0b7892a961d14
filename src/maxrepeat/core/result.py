"""Results are data (spec §5): immutable values that explain themselves.

`GraderResult.to_dict()` gives exactly the JSON keys of spec §5, in camelCase as the
seed framework writes them; graders never print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Run", "ResultMetadata", "GraderResult"]


@dataclass(frozen=True, slots=True)
class Run:
    """A repeated run: ``occurrences`` complete copies of a primitive ``period``-step block.

    Steps are 0-based over the watched steps, inclusive; events index the trajectory's
    ``events``. ``pattern`` previews each step of the block.

    >>> Run(1, 4, 0, 3, 2, 14, ("bash",)).to_dict()["occurrences"]
    4
    """

    period: int
    occurrences: int
    start_step: int
    end_step: int
    start_event: int
    end_event: int
    pattern: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-ready data (camelCase keys)."""
        return {
            "period": self.period,
            "occurrences": self.occurrences,
            "startStep": self.start_step,
            "endStep": self.end_step,
            "startEvent": self.start_event,
            "endEvent": self.end_event,
            "pattern": list(self.pattern),
        }


@dataclass(frozen=True, slots=True)
class ResultMetadata:
    """The ``metadata`` of a result: config in force, the figure and where it was found.

    >>> ResultMetadata(max=3, max_cycle_period=1, match="name", tools=None).occurrences
    0
    """

    max: int
    max_cycle_period: int
    match: str
    tools: tuple[str, ...] | None
    occurrences: int = 0
    period: int = 0
    start_step: int | None = None
    end_step: int | None = None
    start_event: int | None = None
    end_event: int | None = None
    watched_steps: int = 0
    watched_calls: int = 0
    empty_steps: int = 0
    pattern: tuple[str, ...] = ()
    pattern_tools: tuple[str, ...] = ()
    #: the largest runs above ``max`` (at most ``max_runs`` of them, see `grade`), in
    #: start order
    runs: tuple[Run, ...] = ()
    #: how many runs above ``max`` there are in all (``runs`` may list fewer)
    runs_total: int = 0
    #: steps in at least one run above ``max``, over all of them (listed or not)
    loop_steps: int = 0
    #: the input format the trajectory was read from (None when it could not be read)
    format: str | None = "vally"
    lenient: bool = False
    #: where the trajectory was read: ``file``, ``file:line``, ``file[index]``,
    #: ``file!member`` or ``file#part`` (None for a trajectory given in memory)
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The metadata as JSON-ready data (camelCase keys, spec §5 first)."""
        return {
            "max": self.max,
            "maxCyclePeriod": self.max_cycle_period,
            "match": self.match,
            "tools": list(self.tools) if self.tools is not None else None,
            "occurrences": self.occurrences,
            "period": self.period,
            "startStep": self.start_step,
            "endStep": self.end_step,
            "startEvent": self.start_event,
            "endEvent": self.end_event,
            "watchedSteps": self.watched_steps,
            "watchedCalls": self.watched_calls,
            "emptySteps": self.empty_steps,
            "pattern": list(self.pattern),
            "patternTools": list(self.pattern_tools),
            "runs": [r.to_dict() for r in self.runs],
            "runsTotal": self.runs_total,
            "loopSteps": self.loop_steps,
            "format": self.format,
            "lenient": self.lenient,
            "source": self.source,
        }


Status = Literal["ok", "error"]


@dataclass(frozen=True, slots=True)
class GraderResult:
    """One grader's verdict on one trajectory (spec §5).

    An ``error`` result carries no verdict: ``passed`` is False, ``score`` 0.0, and the
    evidence says why the grader could not run.

    >>> r = GraderResult("run-1", "loops", "ok", True, 1.0, "no watched tool call found (max 3)",
    ...                  ResultMetadata(max=3, max_cycle_period=1, match="observation", tools=None))
    >>> sorted(r.to_dict())
    ['evidence', 'graderType', 'kind', 'metadata', 'name', 'passed', 'score', 'status', 'trajectory']
    """

    trajectory: str
    name: str
    status: Status
    passed: bool
    score: float
    evidence: str
    metadata: ResultMetadata
    grader_type: str = field(default="max-repeat")
    kind: str = field(default="code")

    @property
    def failed(self) -> bool:
        """Whether the grader ran and the trajectory failed."""
        return self.status == "ok" and not self.passed

    @property
    def occurrences(self) -> int:
        """The grader's figure: the most complete occurrences of any repeated run."""
        return self.metadata.occurrences

    def to_dict(self) -> dict[str, Any]:
        """The result with exactly the JSON keys of spec §5."""
        return {
            "trajectory": self.trajectory,
            "name": self.name,
            "graderType": self.grader_type,
            "kind": self.kind,
            "status": self.status,
            "passed": self.passed,
            "score": self.score,
            "evidence": self.evidence,
            "metadata": self.metadata.to_dict(),
        }
