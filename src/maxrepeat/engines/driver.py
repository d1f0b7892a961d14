"""The grading driver: the one place where an input's items become results.

Every path that grades inputs comes through here: the local worker pool and Ray (units of
files, `engines.batch`), eval specs (each trajectory by the graders of its stimulus) and
the record functions for data engines (`engines.records`). So every output format and
every input mode gets the same error results, the same grader names and the same
``-j``.

An item is what a reader yields: a `Trajectory`, or the `TrajectoryFormatError` of an
input or record that could not be read. `Graders` says which graders run on a trajectory
(a fixed list; `SpecGraders`: those of its stimulus). `grade_item` turns one item into a
`Graded` value: its results in grader order, the message of an unreadable input (reported
before its error results), and, when a report asks for them, one detail per result made
from the steps grading already built (the HTML timelines), so no trajectory is read or
fingerprinted twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ..core.config import MaxRepeatConfig, unique_names
from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from ..core.grade import error_result, grade, grade_with_steps
from ..core.result import GraderResult
from ..core.rules import DEFAULT_MAX_RUNS
from ..core.steps import Step

if TYPE_CHECKING:
    from ..specs.evalspec import EvalSpec

__all__ = ["Detail", "Graded", "Graders", "SpecGraders", "grade_item"]

#: What a report wants beside each result, made from the result's watched steps (a
#: module-level function, so that worker processes can be sent it).
Detail = Callable[[Sequence[Step]], Any]


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class Graded(msgspec.Struct, frozen=True):
    """What one item gave: results in grader order; ``error``, the message of an input
    that could not be read; ``details``, one per result when a `Detail` was asked for
    (None for a result that has none, such as an error).

    >>> from maxrepeat import Trajectory
    >>> graded = grade_item(Trajectory([], id="r"), Graders([MaxRepeatConfig(2)]), "-")
    >>> [r.trajectory for r in graded.results], graded.error
    (['r'], None)
    """

    results: tuple[GraderResult, ...]
    error: str | None = None
    details: tuple[Any, ...] | None = None


class Graders:
    """The graders run on every trajectory, with the unique names results show.

    >>> Graders([MaxRepeatConfig(2), MaxRepeatConfig(2)]).names
    ('max-repeat(max=2)', 'max-repeat(max=2) #2')
    """

    #: whether every trajectory gets the same graders (a large document may then be
    #: streamed through monitors without being loaded)
    fixed = True

    def __init__(self, configs: Sequence[MaxRepeatConfig],
                 max_runs: int = DEFAULT_MAX_RUNS) -> None:
        self.configs = tuple(configs)
        self.names = tuple(unique_names(self.configs))
        #: how many runs a result lists at most (``grade(max_runs=)``; 0: all)
        self.max_runs = max_runs

    def pick(self, trajectory: Trajectory) -> Sequence[tuple[MaxRepeatConfig, str]] | str:
        """The (config, name) pairs that grade ``trajectory``, or why none can."""
        return tuple(zip(self.configs, self.names, strict=True))

    def errors(
        self, label: str, reason: str, trajectory: Trajectory | None = None,
        source: str | None = None,
    ) -> tuple[GraderResult, ...]:
        """The error results of an item that cannot be graded (``source``: where an
        unreadable one was, when there is no ``trajectory`` to tell it)."""
        return tuple(error_result(label, c, reason, name=n, trajectory=trajectory,
                                  source=source)
                     for c, n in zip(self.configs, self.names, strict=True))


class SpecGraders(Graders):
    """The ``max-repeat`` graders of an eval spec: each trajectory gets those of its
    stimulus (``stimulus`` overrides the trajectory's own). A trajectory whose stimulus is
    unknown, and an unreadable input, get one error result named ``eval-spec``."""

    fixed = False

    def __init__(self, spec: EvalSpec, stimulus: str | None = None) -> None:
        super().__init__(spec.graders)
        self.spec = spec
        self.stimulus = stimulus

    def pick(self, trajectory: Trajectory) -> Sequence[tuple[MaxRepeatConfig, str]] | str:
        found = self.spec.stimulus_for(trajectory, self.stimulus)
        if isinstance(found, str):
            return found
        return tuple(zip(found.graders, found.names, strict=True))

    def errors(
        self, label: str, reason: str, trajectory: Trajectory | None = None,
        source: str | None = None,
    ) -> tuple[GraderResult, ...]:
        from ..specs.evalspec import SPEC_RESULT_NAME

        # An error result needs a config for its metadata; the spec's first grader stands in.
        return (error_result(label, self.configs[0], reason, name=SPEC_RESULT_NAME,
                             trajectory=trajectory, source=source),)


def grade_item(
    item: Trajectory | TrajectoryFormatError,
    graders: Graders,
    source: str,
    detail: Detail | None = None,
) -> Graded:
    """Grade one item (``source`` names an unreadable input that names no file itself)."""
    if isinstance(item, TrajectoryFormatError):
        message = str(item)
        label = item.source or source
        results = graders.errors(label, message, source=item.record or label)
        return Graded(results, message, (None,) * len(results) if detail else None)
    picked = graders.pick(item)
    if isinstance(picked, str):
        results = graders.errors(item.label, picked, item)
        return Graded(results, None, (None,) * len(results) if detail else None)
    if detail is None:
        return Graded(tuple(grade(item, c, name=n, max_runs=graders.max_runs)
                            for c, n in picked))
    out: list[GraderResult] = []
    details: list[Any] = []
    for cfg, name in picked:
        result, steps = grade_with_steps(item, cfg, name=name, max_runs=graders.max_runs)
        out.append(result)
        details.append(_detail(detail, steps))
    return Graded(tuple(out), None, tuple(details))


def _detail(detail: Detail, steps: Sequence[Step] | None) -> Any:
    if steps is None:
        return None
    try:
        return detail(steps)
    except (RecursionError, ValueError, TypeError):
        return None  # a value a report cannot show costs that result its detail only
