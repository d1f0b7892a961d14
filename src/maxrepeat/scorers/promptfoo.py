"""The ``max-repeat`` grader as a promptfoo Python assertion (no extra: promptfoo runs it).

promptfoo (``promptfoo eval``) calls ``get_assert(output, context)`` of a ``type: python``
assertion whose value is ``file://<file>.py``; a two-line file re-exporting this module's
`get_assert` is enough. The agent run graded is, in this order:

* ``context["metadata"]["trajectory"]``: the provider response's ``metadata.trajectory``
  (where a provider that runs an agent puts the run beside its final answer), or
* the output itself, when it is such a document (a JSON string or an object).

The run is any document ``maxrepeat grade`` reads (OpenAI or Anthropic messages, the
native ``{"events": [...]}``, ...), read by the same readers (``format`` forces one), so
the result is exactly ``maxrepeat grade`` of the run saved as a file. The grader config is
the assertion's ``config`` (the keys of a grader's ``config:`` in a config file: ``max``,
``max_cycle_period``, ``match``, ...), or ``config: {graders: <path of a config file>}``.

The returned ``GradingResult`` has ``pass``, ``score`` (1.0 or 0.0), the evidence as
``reason``, ``namedScores`` (``max_repeat``: the largest repeat found) and the config,
figure and results as ``metadata``. A run that cannot be found or read fails the
assertion, saying why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.config import MaxRepeatConfig
from ..core.errors import MaxRepeatError, TrajectoryFormatError
from ..core.events import Trajectory
from ..readers import read_source
from ..readers.source import Source
from ._common import Graders, Verdict, verdict

__all__ = ["get_assert", "grading_result", "run_of"]

_CONFIG_KEYS = ("graders", "format")


def run_of(output: Any, context: Mapping[str, Any], format: str = "auto") -> Trajectory:
    """The agent run a promptfoo assertion grades: ``metadata.trajectory`` of the provider
    response, else the output, read as ``maxrepeat grade`` reads a file.

    >>> run = {"events": [{"type": "tool_call", "data": {"toolName": "ls"}}]}
    >>> [e.type for e in run_of("done", {"metadata": {"trajectory": run}}).events]
    ['tool_call']
    """
    metadata = context.get("metadata") or {}
    document = metadata.get("trajectory") if isinstance(metadata, Mapping) else None
    if document is None:
        document = output
    if isinstance(document, str):
        data = document.encode("utf-8")
    else:
        data = json.dumps(document, ensure_ascii=False).encode("utf-8")
    found = list(read_source(Source.from_bytes(data, name="<promptfoo output>"), format))
    errors = [f for f in found if isinstance(f, TrajectoryFormatError)]
    if errors:
        raise errors[0]
    if len(found) != 1:
        raise TrajectoryFormatError("<promptfoo output>",
                                    f"expected one agent run, found {len(found)}")
    run = found[0]
    assert isinstance(run, Trajectory)
    return run


def _graders(config: Mapping[str, Any]) -> Graders:
    if "graders" in config:
        return str(config["graders"])
    keys = {k: v for k, v in config.items() if k not in _CONFIG_KEYS}
    return MaxRepeatConfig.from_mapping(keys)


def grading_result(found: Verdict) -> dict[str, Any]:
    """A promptfoo ``GradingResult`` dict of a `Verdict`.

    >>> from maxrepeat.scorers._common import Call, verdict
    >>> r = grading_result(verdict([[Call("ls")]] * 3, MaxRepeatConfig(max=2, match="name")))
    >>> r["pass"], r["score"], r["namedScores"], r["reason"]
    (False, 0.0, {'max_repeat': 3}, 'ls repeated 3 times in a row at steps 0-2 (max 2)')
    """
    return {"pass": found.passed, "score": found.score, "reason": found.evidence,
            "namedScores": {"max_repeat": found.occurrences}, "metadata": found.metadata}


def get_assert(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo's entry point: grade the run of ``output`` / ``context`` with the
    assertion's ``config`` and return the ``GradingResult``.

    >>> run = {"events": [{"type": "tool_call", "data": {"toolName": "ls"}}]}
    >>> get_assert(json.dumps(run), {"config": {"max": 2}})["pass"]
    True
    >>> get_assert("no run here", {"config": {"max": 2}})["pass"]
    False
    """
    config = context.get("config") or {}
    try:
        graders = _graders(config)
        run = run_of(output, context, str(config.get("format", "auto")))
    except (MaxRepeatError, OSError, ValueError, TypeError, KeyError) as exc:
        return {"pass": False, "score": 0.0, "reason": f"maxrepeat could not grade: {exc}"}
    return grading_result(verdict(run, graders))
