"""The Inspect guard on model responses of several tool calls each (parallel calls),
wired as docs/integrations/inspect.md shows: ``react()`` with ``on_continue`` and
``approval``. Inspect asks the approval policy once per call, so the second call of the
first response reaches the guard before any ``on_continue``: that is not a missing
``on_continue``, and the run must go on (warned, refused and stopped as any other)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maxrepeat.guards.frameworks.inspect import loop_guard
from maxrepeat.readers.inspect_log import trajectory_from_messages
from tests import guard_scenarios as gs
from tests.guards.frameworks import _inspect_scripts as isc

_needs = gs.needs("inspect_ai")
pytestmark = isc.PYTESTMARK

RUN_TESTS = ("run_tests", {"path": "tests/"})
#: seven responses of two calls: different ones (`gs.PARALLEL`), and the same call twice
STEPS = {"different": gs.PARALLEL, "identical": [[RUN_TESTS, RUN_TESTS]] * 7}


def _run(steps: list[list[tuple[str, dict[str, Any]]]], log_dir: Path) -> gs.Outcome:
    from inspect_ai.agent import react

    executed: list[str] = []
    guard = loop_guard(gs.NAME_ARGS)
    agent = react(tools=isc.tools(executed), on_continue=guard.on_continue,
                  approval=guard.approval)
    sample = isc.sample_of(isc.eval_one(agent, isc.outputs(steps), log_dir, message_limit=60))
    [stopped] = guard.stopped.values()
    return gs.Outcome(isc.contexts(sample), trajectory_from_messages(sample.messages),
                      len(executed), stopped)


@pytest.mark.parametrize("kind", STEPS)
def test_parallel_calls_are_one_step_warned_refused_and_stopped(
        kind: str, tmp_path: Path) -> None:
    """Each response is one step: warned after the third, the fourth refused whole (no
    call of it runs), stopped at the fifth, the count that of ``grade()``."""
    gs.check_parallel(_run(STEPS[kind], tmp_path))
