"""Grading with an eval spec: each trajectory by the max-repeat graders of its stimulus."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.grade import error_result, grade
from ..core.result import GraderResult
from ..core.summary import Summary, SummaryBuilder
from ..specs.evalspec import SPEC_RESULT_NAME, EvalSpec

__all__ = ["grade_paths_with_spec", "SpecSummaryBuilder"]


def grade_paths_with_spec(
    paths: Sequence[str],
    spec: EvalSpec,
    stimulus: str | None = None,
    fmt: str = "auto",
    on_error: Callable[[Any], None] | None = None,
    on_trajectory: Callable[[], None] | None = None,
) -> Iterator[GraderResult]:
    """Results for every trajectory under ``paths``, each graded by the graders of its
    stimulus (``stimulus`` overrides the trajectory's own), in input order.

    A trajectory whose stimulus is unknown gets one ``error`` result saying so, and so
    does an unreadable input. ``on_trajectory()`` is called once per trajectory or
    unreadable input (the number of graders varies, so results alone cannot tell).
    """
    from ..readers import Source, expand_paths, read_source

    # An error result needs a config for its metadata; the spec's first grader stands in.
    stand_in = spec.graders[0]
    for path in expand_paths(paths):
        with Source.from_path(path) as source:
            for item in read_source(source, fmt):
                if on_trajectory is not None:
                    on_trajectory()
                if isinstance(item, TrajectoryFormatError):
                    if on_error is not None:
                        on_error(item)
                    yield error_result(item.source or source.name, stand_in, str(item),
                                       name=SPEC_RESULT_NAME,
                                       source=item.record or source.name)
                    continue
                found = spec.stimulus_for(item, stimulus)
                if isinstance(found, str):
                    yield error_result(item.label, stand_in, found, name=SPEC_RESULT_NAME,
                                       trajectory=item)
                    continue
                for cfg, name in zip(found.graders, found.names):
                    yield grade(item, cfg, name=name)


class SpecSummaryBuilder(SummaryBuilder):
    """A `SummaryBuilder` told of each trajectory (stimuli have different grader counts).

    >>> builder = SpecSummaryBuilder()
    >>> builder.count_trajectory(); builder.build().trajectories
    1
    """

    def __init__(self) -> None:
        super().__init__(1)
        self.seen = 0

    def count_trajectory(self) -> None:
        """Count one trajectory (or unreadable input)."""
        self.seen += 1

    def build(self, interrupted: bool = False) -> Summary:
        """The summary so far, with the counted trajectories."""
        return replace(super().build(interrupted), trajectories=self.seen)
