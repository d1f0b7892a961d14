"""The summary of a batch of results: counts, the figure's distribution, looping tools."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import msgspec

from .result import GraderResult

__all__ = ["Summary", "summarize"]


# A frozen msgspec Struct, like the result types, not a dataclass: a dataclass compiles
# its methods from source at import (~0.5 ms each), and every ``maxrepeat grade``
# imports it (start-up is measured: bench/RESULTS.md).
class Summary(msgspec.Struct, frozen=True):
    """Counts over a batch of results.

    ``figures`` maps a figure (occurrences) to how many ok results had it;
    ``failing_tools`` counts the tools of the reported pattern over failing results;
    ``nothing_watched`` counts, by the format they were read as, the ok results that
    watched no tool call at all (a run without tool calls, a wrong ``--format``, a log that
    keeps its commands in message text, or ``tools`` that match nothing).

    >>> summarize([]).total
    0
    """

    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    trajectories: int = 0
    figures: dict[int, int] = msgspec.field(default_factory=dict)
    failing_tools: dict[str, int] = msgspec.field(default_factory=dict)
    interrupted: bool = False
    nothing_watched: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 when every result passed, 1 when any failed, 2 when any errored (wins)."""
        if self.errors:
            return 2
        if self.failed:
            return 1
        return 0

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return {
            "results": self.total,
            "trajectories": self.trajectories,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "figures": {str(k): v for k, v in sorted(self.figures.items())},
            "failingTools": dict(
                sorted(self.failing_tools.items(), key=lambda kv: (-kv[1], kv[0]))
            ),
            "interrupted": self.interrupted,
            "nothingWatched": dict(sorted(self.nothing_watched.items())),
        }


class SummaryBuilder:
    """Accumulates a `Summary` one result at a time (batches stream).

    Trajectories are counted as told by `count_trajectory`, else from the results and the
    number of graders each trajectory has (``graders``).

    >>> builder = SummaryBuilder()
    >>> builder.count_trajectory(); builder.build().trajectories
    1
    """

    def __init__(self, graders: int = 1) -> None:
        self.graders = max(graders, 1)
        self.counted: int | None = None
        self.total = self.passed = self.failed = self.errors = 0
        self.figures: Counter[int] = Counter()
        self.tools: Counter[str] = Counter()
        self.unwatched: Counter[str] = Counter()

    def add(self, result: GraderResult) -> None:
        """Count one result."""
        self.total += 1
        if result.status == "error":
            self.errors += 1
            return
        self.figures[result.metadata.occurrences] += 1
        if result.metadata.watched_calls == 0:
            self.unwatched[result.metadata.format or "unknown"] += 1
        if result.passed:
            self.passed += 1
        else:
            self.failed += 1
            self.tools.update(result.metadata.pattern_tools)

    def count_trajectory(self) -> None:
        """Count one trajectory (or unreadable input): when graders vary by trajectory
        (an eval spec's stimuli), results alone cannot tell how many there were."""
        self.counted = (self.counted or 0) + 1

    def build(self, interrupted: bool = False) -> Summary:
        """The summary so far."""
        return Summary(
            total=self.total,
            passed=self.passed,
            failed=self.failed,
            errors=self.errors,
            trajectories=(-(-self.total // self.graders) if self.counted is None
                          else self.counted),
            figures=dict(self.figures),
            failing_tools=dict(self.tools),
            interrupted=interrupted,
            nothing_watched=dict(self.unwatched),
        )


def summarize(results: Iterable[GraderResult], graders: int = 1) -> Summary:
    """The `Summary` of a batch of results (each trajectory graded by ``graders`` graders).

    >>> from maxrepeat import MaxRepeatConfig, Trajectory, grade, tool_call
    >>> loop = Trajectory([tool_call("bash", f"c{i}") for i in range(4)])
    >>> configs = [MaxRepeatConfig(2, match="name"), MaxRepeatConfig(5, match="name")]
    >>> summary = summarize([grade(loop, c) for c in configs], graders=2)
    >>> summary.trajectories, summary.passed, summary.failed, summary.exit_code
    (1, 1, 1, 1)
    """
    builder = SummaryBuilder(graders)
    for r in results:
        builder.add(r)
    return builder.build()
