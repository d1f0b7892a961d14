"""The ``max-repeat`` grader as an Inspect AI scorer (the ``maxrepeat[inspect]`` extra).

``max_repeat(max=3, ...)`` returns a scorer that grades the sample's conversation when the
sample ends: each assistant message is one turn, its tool calls are the calls, and the
tool messages answering them (by ``tool_call_id``) are the results. The score is Inspect's
``CORRECT`` when the trajectory passes and ``INCORRECT`` when it loops (or the grader
could not run); the evidence is the explanation and the result's metadata is the score's
metadata, so ``inspect view`` shows where the loop is.

The conversion from messages to events is the Inspect log reader's
(`maxrepeat.readers.inspect_log.trajectory_from_messages`), so a score and
``maxrepeat grade`` of the log written afterwards agree. ``inspect_ai`` is imported only
when a scorer is made. The live guard for ``react()`` is `maxrepeat.guards.frameworks.inspect`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.config import MaxRepeatConfig
from ..core.errors import MissingExtraError
from ..core.grade import grade
from ..core.result import GraderResult
from ..readers.inspect_log import trajectory_from_messages

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer

__all__ = ["max_repeat", "score_fields"]

_EXTRA = "inspect"


def score_fields(result: GraderResult) -> dict[str, Any]:
    """What a `GraderResult` puts in an Inspect ``Score``: ``passed``, ``explanation``
    and ``metadata`` (the result's metadata, plus its status and grader name).

    >>> from maxrepeat import grade, MaxRepeatConfig
    >>> fields = score_fields(grade({"events": []}, MaxRepeatConfig(2)))
    >>> fields["passed"], fields["explanation"], fields["metadata"]["status"]
    (True, 'no watched tool call found (max 2)', 'ok')
    """
    metadata: dict[str, Any] = {"grader": result.name, "status": result.status}
    metadata.update(result.metadata.to_dict())
    return {"passed": result.status == "ok" and result.passed,
            "explanation": result.evidence, "metadata": metadata}


def max_repeat(
    max: int,
    max_cycle_period: int = 1,
    match: str = "observation",
    tools: Sequence[str] | None = None,
    name: str | None = None,
) -> Scorer:
    """An Inspect scorer failing a sample whose agent repeats an action (or a cycle of up
    to ``max_cycle_period`` actions) more than ``max`` times in a row.

    The arguments are the grader config (checked now: a bad one raises `ConfigError`);
    ``name`` is the scorer's name in the log. Scores are ``CORRECT``/``INCORRECT`` with the
    ``accuracy`` and ``stderr`` metrics. Raises `MissingExtraError` without ``inspect_ai``.

    >>> from maxrepeat.scorers.inspect import max_repeat
    >>> scorer = max_repeat(max=3, max_cycle_period=2, match="name-args")
    >>> callable(scorer)
    True

    In a task: ``Task(dataset=..., solver=[use_tools(...), generate()],
    scorer=max_repeat(max=3))``.
    """
    config = MaxRepeatConfig(max, max_cycle_period, match, tools, name)
    try:
        from inspect_ai.scorer import (
            CORRECT,
            INCORRECT,
            Score,
            Target,
            accuracy,
            scorer,
            stderr,
        )
        from inspect_ai.solver import TaskState
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "inspect_ai") from exc

    @scorer(metrics=[accuracy(), stderr()], name=name or "max_repeat")
    def make() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            label = f"{state.sample_id}/epoch{state.epoch}"
            trajectory = trajectory_from_messages(state.messages, id=label, source=label)
            fields = score_fields(grade(trajectory, config))
            return Score(
                value=CORRECT if fields["passed"] else INCORRECT,
                explanation=fields["explanation"],
                metadata=fields["metadata"],
            )

        return score

    built: Scorer = make()
    return built
