"""maxrepeat: the max-repeat loop grader for LLM agent trajectories.

Fail a trajectory when a tool action, or a short cycle of actions, repeats more than
``max`` times. One exact definition (``docs`` and the spec), periods up to 10, every loop
located, many input formats.

>>> import maxrepeat
>>> run = {"id": "demo", "events": [
...     {"type": "tool_call", "data": {"toolName": "bash", "toolCallId": f"c{i}",
...                                    "arguments": {"command": "make"}}}
...     for i in range(5)]}
>>> result = maxrepeat.grade(run, maxrepeat.MaxRepeatConfig(max=3, match="name-args"))
>>> result.passed, result.metadata.occurrences
(False, 5)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy loader below provides, for type checkers and IDEs
    from ._config import MaxRepeatConfig
    from ._configfile import lint, load_config
    from ._errors import ConfigError, MaxRepeatError, MissingExtraError, TrajectoryFormatError
    from ._grade import grade, steps
    from ._model import (
        Event,
        EventData,
        Trajectory,
        tool_call,
        tool_result,
        turn_end,
        turn_start,
    )
    from ._monitor import Monitor
    from ._result import GraderResult, ResultMetadata, Run
    from ._steps import Call, Fingerprint, Step
    from ._summary import Summary, summarize
    from .readers import read_trajectories
    from .records import grade_batch, grade_record

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # grading
    "MaxRepeatConfig",
    "grade",
    "steps",
    "load_config",
    "lint",
    "read_trajectories",
    "summarize",
    "Monitor",
    "grade_record",
    "grade_batch",
    # values
    "Trajectory",
    "Event",
    "EventData",
    "tool_call",
    "tool_result",
    "turn_start",
    "turn_end",
    "Step",
    "Call",
    "Fingerprint",
    "Run",
    "GraderResult",
    "ResultMetadata",
    "Summary",
    # errors
    "MaxRepeatError",
    "ConfigError",
    "TrajectoryFormatError",
    "MissingExtraError",
]

#: public name -> private module that defines it. Imported on first use, so that
#: ``maxrepeat grade`` starts quickly and library users pay only for what they touch.
_WHERE = {
    "MaxRepeatConfig": "_config",
    "grade": "_grade",
    "steps": "_grade",
    "load_config": "_configfile",
    "lint": "_configfile",
    "read_trajectories": "readers",
    "summarize": "_summary",
    "Monitor": "_monitor",
    "grade_record": "records",
    "grade_batch": "records",
    "Trajectory": "_model",
    "Event": "_model",
    "EventData": "_model",
    "tool_call": "_model",
    "tool_result": "_model",
    "turn_start": "_model",
    "turn_end": "_model",
    "Step": "_steps",
    "Call": "_steps",
    "Fingerprint": "_steps",
    "Run": "_result",
    "GraderResult": "_result",
    "ResultMetadata": "_result",
    "Summary": "_summary",
    "MaxRepeatError": "_errors",
    "ConfigError": "_errors",
    "TrajectoryFormatError": "_errors",
    "MissingExtraError": "_errors",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'maxrepeat' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
