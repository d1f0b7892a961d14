"""Results are data (spec §5): immutable values that explain themselves.

Each result type is one frozen ``msgspec.Struct`` whose field names, camelCased, are the
JSON keys of spec §5 as the seed framework writes them: the one definition encodes
(``msgspec.json.encode(result)``, `GraderResult.to_dict`), decodes
(``msgspec.json.decode(text, type=GraderResult)``) and gives the JSON Schema
(``msgspec.json.schema(GraderResult)``). Graders never print.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import msgspec

__all__ = ["Run", "RunOutcome", "Watched", "ResultMetadata", "GraderResult"]

# to_dict is the encoded JSON read back: lists for tuples, exactly what a report writes
_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder().decode


class Run(msgspec.Struct, frozen=True, rename="camel"):
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
        return cast("dict[str, Any]", _DECODE(_ENCODE(self)))


class RunOutcome(msgspec.Struct, frozen=True):
    """What a run finder hands over (`core.search.find_runs`, `core.windowsearch`, the
    monitor's `core.monitor.build`): every engine gives this one value, and
    `core.grade.build_result` turns it into a result.

    ``best`` is the reported run (None: no non-empty step) and ``best_tools`` the tool
    names of its block, sorted; ``runs`` the listed runs above ``max`` (the ``max_runs``
    largest, `rules.largest`, in `rules.run_order`); ``total`` how many runs there are
    above ``max`` and ``covered`` how many steps lie in at least one of them.

    >>> RunOutcome(None, (), (), 0, 0).total
    0
    """

    best: Run | None
    best_tools: tuple[str, ...]
    runs: tuple[Run, ...]
    total: int
    covered: int


class Watched(msgspec.Struct, frozen=True):
    """The counts of what a grader watched: steps, calls, and steps whose observations
    are all empty (the step grouping's, beside the run finder's `RunOutcome`).

    >>> Watched(steps=2, calls=3, empty=0).calls
    3
    """

    steps: int
    calls: int
    empty: int


class ResultMetadata(msgspec.Struct, frozen=True, rename="camel"):
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
        return cast("dict[str, Any]", _DECODE(_ENCODE(self)))


Status = Literal["ok", "error"]


class GraderResult(msgspec.Struct, frozen=True, rename="camel", kw_only=True):
    """One grader's verdict on one trajectory (spec §5).

    An ``error`` result carries no verdict: ``passed`` is False, ``score`` 0.0, and the
    evidence says why the grader could not run.

    >>> r = GraderResult(trajectory="run-1", name="loops", status="ok", passed=True, score=1.0,
    ...                  evidence="no watched tool call found (max 3)",
    ...                  metadata=ResultMetadata(max=3, max_cycle_period=1, match="observation",
    ...                                          tools=None))
    >>> list(r.to_dict())
    ['trajectory', 'name', 'graderType', 'kind', 'status', 'passed', 'score', 'evidence', 'metadata']
    >>> msgspec.json.decode(msgspec.json.encode(r), type=GraderResult) == r
    True
    """  # noqa: E501 (a doctest's output line, as printed)

    trajectory: str
    name: str
    grader_type: str = "max-repeat"
    kind: str = "code"
    status: Status
    passed: bool
    score: float
    evidence: str
    metadata: ResultMetadata

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
        return cast("dict[str, Any]", _DECODE(_ENCODE(self)))
