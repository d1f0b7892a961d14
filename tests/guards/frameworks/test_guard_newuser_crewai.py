"""What docs/integrations/crewai.md's Limits say of CrewAI's own repeat limit and parallel
calls: CrewAI counts each call (the fifth identical call with the same result in a run
raises ``ToolExecutionFailedError``), the guard each model response, so a model asking for
the same call twice a response is stopped by CrewAI at its third response, under the
``live`` preset, before the guard warns. Runs in ``.venv-crewai`` (skipped elsewhere)."""

from __future__ import annotations

from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.frameworks.crewai import loop_guard
from tests import guard_scenarios as gs
from tests.guards.frameworks.test_guard_crewai import Model, _crew

_needs = gs.needs("crewai", reason="the crewai extra (a venv of its own)")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")

RUN_TESTS = ("run_tests", {"path": "tests/"})


def test_crewai_stops_identical_parallel_calls_before_the_live_guard_warns() -> None:
    from crewai.tools.tool_failure import ToolExecutionFailedError

    guard = loop_guard(MaxRepeatConfig.preset("live"))
    executed: list[str] = []
    try:
        with Model(steps=[[RUN_TESTS, RUN_TESTS]] * 7).serving() as model, \
                pytest.raises(ToolExecutionFailedError, match="5 times"):
            _crew(model.url, executed).kickoff()
    finally:
        guard.remove()
    requests: list[Any] = model.requests
    assert len(requests) == 3  # the third response's calls met CrewAI's limit
    assert not any(gs.MARK in str(body["messages"]) for body in requests)
    assert len(executed) >= 5
