"""Per-grader counts shared by the report formats (JUnit suites, Markdown and HTML tables)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.result import GraderResult
from ..core.summary import Summary


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is one.

    >>> counted(1, "trajectory"), counted(0, "trajectory"), counted(2, "error")
    ('1 trajectory', '0 trajectories', '2 errors')
    """
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"


def verdict_line(summary: Summary) -> str:
    """The one-line count of a batch every report shows (console, Markdown, HTML).

    >>> from maxrepeat import MaxRepeatConfig, grade, summarize
    >>> verdict_line(summarize([grade({"id": "r", "events": []}, MaxRepeatConfig(1))]))
    '1 trajectory, 1 result: 1 passed, 0 failed, 0 errors'
    """
    return (f"{counted(summary.trajectories, 'trajectory')}, {counted(summary.total, 'result')}: "
            f"{summary.passed} passed, {summary.failed} failed, "
            f"{counted(summary.errors, 'error')}"
            + (" (interrupted)" if summary.interrupted else ""))

__all__ = ["Tally", "tally", "ordered_failing_first", "counted", "verdict_line"]


@dataclass(frozen=True, slots=True)
class Tally:
    """How one grader did over a batch.

    >>> Tally("loops", 3, 1, 0).pass_rate
    0.75
    """

    name: str
    passed: int
    failed: int
    errors: int

    @property
    def total(self) -> int:
        """Every result of this grader."""
        return self.passed + self.failed + self.errors

    @property
    def pass_rate(self) -> float:
        """Passed over all results (an error is not a pass); 1.0 for no results."""
        return self.passed / self.total if self.total else 1.0


def tally(results: Sequence[GraderResult]) -> list[Tally]:
    """One `Tally` per grader name, in order of first appearance."""
    counts: dict[str, list[int]] = {}
    for r in results:
        c = counts.setdefault(r.name, [0, 0, 0])
        c[2 if r.status == "error" else (0 if r.passed else 1)] += 1
    return [Tally(name, *c) for name, c in counts.items()]


def _rank(result: GraderResult) -> int:
    if result.status == "error":
        return 0
    return 2 if result.passed else 1


def ordered_failing_first(results: Sequence[GraderResult]) -> list[GraderResult]:
    """Errors, then failures, then passes; input order kept within each."""
    return sorted(results, key=_rank)
