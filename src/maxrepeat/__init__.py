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

from ._config import MaxRepeatConfig
from ._configfile import lint, load_config
from ._errors import ConfigError, MaxRepeatError, MissingExtraError, TrajectoryFormatError
from ._grade import grade, steps
from ._model import Event, EventData, Trajectory, tool_call, tool_result, turn_end, turn_start
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
