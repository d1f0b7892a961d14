"""What every platform scorer shares: tool calls to events, ``grade()``, one verdict.

A platform module turns its record of a run into `Call` values grouped by model turn
(a list of turns, each a list of calls), and `verdict` grades them with the configs
given. The `Verdict` is what every platform's native score object is made from:
``passed``, the ``occurrences`` figure, the ``evidence`` text and the ``config``.

>>> from maxrepeat import MaxRepeatConfig
>>> turns = [[Call("bash", {"cmd": "make"}, "error 1")] for _ in range(4)]
>>> v = verdict(turns, MaxRepeatConfig(max=3))
>>> v.passed, v.occurrences, v.score
(False, 4, 0.0)
>>> print(v.evidence)
bash {"cmd": "make"} -> "error 1" repeated 4 times in a row at steps 0-3 (max 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.config import MaxRepeatConfig, unique_names
from ..core.events import Trajectory
from ..core.grade import grade
from ..core.result import GraderResult
from ..readers._spantree import NO_RESULT, Call, events_from_turns
from ..specs.graders import Graders, load_graders

__all__ = ["Graders", "Call", "NO_RESULT", "Verdict", "load_graders", "events_from_turns",
           "trajectory_from_turns", "verdict", "verdict_of"]


def trajectory_from_turns(turns: Sequence[Sequence[Call]], *, id: str | None = None,
                          source: str | None = None, format: str = "vally") -> Trajectory:
    """A `Trajectory` of `events_from_turns`."""
    return Trajectory(events=events_from_turns(turns), id=id, source=source, format=format)


@dataclass(frozen=True)
class Verdict:
    """The grade of one run by one or more configs, as every scorer reports it.

    ``passed``: every config ran and passed; ``occurrences``: the largest figure of any
    config; ``evidence``: each config's evidence (one line each, prefixed by its name when
    there are several); ``config``: the config as written in a config file (a list of
    them when there are several); ``results``: the `GraderResult` values themselves.
    """

    passed: bool
    occurrences: int
    evidence: str
    config: dict[str, Any] | list[dict[str, Any]]
    results: tuple[GraderResult, ...] = field(default=())

    @property
    def score(self) -> float:
        """1.0 when the run passed, else 0.0."""
        return 1.0 if self.passed else 0.0

    @property
    def metadata(self) -> dict[str, Any]:
        """What a platform's score carries as metadata: the config, the figure, and each
        result's status and metadata (camelCase keys, as ``maxrepeat grade`` writes)."""
        return {"config": self.config, "occurrences": self.occurrences,
                "results": [{"name": r.name, "status": r.status, "passed": r.passed,
                             **r.metadata.to_dict()} for r in self.results]}


def verdict_of(results: Sequence[GraderResult], configs: Sequence[MaxRepeatConfig]) -> Verdict:
    """The `Verdict` of results graded with ``configs`` (in the same order)."""
    several = len(results) > 1
    lines = [f"{r.name}: {r.evidence}" if several else r.evidence for r in results]
    dicts = [c.to_dict() for c in configs]
    return Verdict(passed=all(r.status == "ok" and r.passed for r in results),
                   occurrences=max((r.occurrences for r in results), default=0),
                   evidence="\n".join(lines), config=dicts if several else dicts[0],
                   results=tuple(results))


def verdict(run: Sequence[Sequence[Call]] | Trajectory, graders: Graders) -> Verdict:
    """Grade a run (turns of `Call` values, or a `Trajectory`) with each config.

    The results are ``grade(trajectory, config)`` of the run's events, named as
    ``maxrepeat grade`` names several configs.
    """
    configs = load_graders(graders)
    trajectory = run if isinstance(run, Trajectory) else trajectory_from_turns(run)
    names = unique_names(configs)
    results = [grade(trajectory, c, name=n) for c, n in zip(configs, names, strict=True)]
    return verdict_of(results, configs)
