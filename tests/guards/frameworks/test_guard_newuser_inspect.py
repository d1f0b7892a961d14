"""The Inspect guard on model responses of several tool calls each (parallel calls),
wired as docs/integrations/inspect.md shows: ``react()`` with ``on_continue`` and
``approval``. Inspect asks the approval policy once per call, so the second call of the
first response reaches the guard before any ``on_continue``: that is not a missing
``on_continue``, and the run must go on (warned, refused and stopped as any other)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.guards.frameworks.inspect import loop_guard
from maxrepeat.readers.inspect_log import trajectory_from_messages
from tests import guard_scenarios as gs

_needs = gs.needs("inspect_ai")
# Inspect's own dependencies warn (as in test_guard_inspect.py): not ours to fix
pytestmark = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
]

RUN_TESTS = ("run_tests", {"path": "tests/"})
#: seven responses of two calls: different ones (`gs.PARALLEL`), and the same call twice
STEPS = {"different": gs.PARALLEL, "identical": [[RUN_TESTS, RUN_TESTS]] * 7}


def _run(steps: list[list[tuple[str, dict[str, Any]]]], log_dir: Path) -> gs.Outcome:
    from inspect_ai import Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import Tool, ToolCall, tool

    executed: list[str] = []

    @tool
    def run_tests() -> Tool:
        async def execute(path: str) -> str:
            """Run the tests.

            Args:
                path: Which tests to run.
            """
            executed.append("run_tests")
            return gs.tool_output("run_tests", {"path": path})

        return execute

    @tool
    def edit() -> Tool:
        async def execute(path: str, text: str) -> str:
            """Write a file.

            Args:
                path: The file.
                text: What to write.
            """
            executed.append("edit")
            return gs.tool_output("edit", {"path": path})

        return execute

    outputs = []
    for i, step in enumerate([*steps, [("submit", {"answer": "Done."})]]):
        output = ModelOutput.for_tool_call("mockllm/model", *step[0], tool_call_id=f"c{i}")
        output.choices[0].message.tool_calls = [
            ToolCall(id=f"c{i}_{j}", function=name, arguments=args)
            for j, (name, args) in enumerate(step)]
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outputs.append(output)
    guard = loop_guard(gs.NAME_ARGS)
    agent = react(tools=[run_tests(), edit()], on_continue=guard.on_continue,
                  approval=guard.approval)
    task = Task(dataset=[Sample(input="Make the tests pass.")], solver=agent,
                message_limit=60)
    [log] = eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
                 log_dir=str(log_dir), display="none")
    gc.collect()
    assert log.status == "success", log.error
    samples = read_eval_log(log.location, resolve_attachments=True).samples
    assert samples is not None
    sample = samples[0]
    contexts = ["\n".join(m.text for m in e.input) for e in sample.events if e.event == "model"]
    [stopped] = guard.stopped.values()
    return gs.Outcome(contexts, trajectory_from_messages(sample.messages), len(executed),
                      stopped)


@pytest.mark.parametrize("kind", STEPS)
def test_parallel_calls_are_one_step_warned_refused_and_stopped(
        kind: str, tmp_path: Path) -> None:
    """Each response is one step: warned after the third, the fourth refused whole (no
    call of it runs), stopped at the fifth, the count that of ``grade()``."""
    gs.check_parallel(_run(STEPS[kind], tmp_path))
