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

import os as _os

# not typing's (nor `importlib` at the top): a hook call imports this package first, and
# what it imports is paid at every tool call (cli/hookclient.py)
TYPE_CHECKING = False
if TYPE_CHECKING:  # what the lazy loader below provides, for type checkers and IDEs
    from typing import Any

    from .core.config import MaxRepeatConfig
    from .core.errors import (
        ConfigError,
        MaxRepeatError,
        MissingExtraError,
        TrajectoryFormatError,
    )
    from .core.events import (
        Event,
        EventData,
        Trajectory,
        tool_call,
        tool_result,
        turn_end,
        turn_start,
    )
    from .core.grade import grade, steps
    from .core.monitor import Monitor
    from .core.result import GraderResult, ResultMetadata, Run
    from .core.steps import Call, Fingerprint, Step
    from .core.summary import Summary, summarize
    from .engines.records import grade_batch, grade_record
    from .readers import read_trajectories
    from .specs.configfile import load_config
    from .specs.lint import lint

__version__ = "0.1.0"

if _os.environ.get("MAXREPEAT_PURE", "") not in ("", "0"):
    # the pure-Python reference instead of the optional native fast path (core.accel)
    from .core import accel as _accel

    _accel.use_native(False)

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
    "MaxRepeatConfig": "core.config",
    "grade": "core.grade",
    "steps": "core.grade",
    "load_config": "specs.configfile",
    "lint": "specs.lint",
    "read_trajectories": "readers",
    "summarize": "core.summary",
    "Monitor": "core.monitor",
    "grade_record": "engines.records",
    "grade_batch": "engines.records",
    "Trajectory": "core.events",
    "Event": "core.events",
    "EventData": "core.events",
    "tool_call": "core.events",
    "tool_result": "core.events",
    "turn_start": "core.events",
    "turn_end": "core.events",
    "Step": "core.steps",
    "Call": "core.steps",
    "Fingerprint": "core.steps",
    "Run": "core.result",
    "GraderResult": "core.result",
    "ResultMetadata": "core.result",
    "Summary": "core.summary",
    "MaxRepeatError": "core.errors",
    "ConfigError": "core.errors",
    "TrajectoryFormatError": "core.errors",
    "MissingExtraError": "core.errors",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'maxrepeat' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
