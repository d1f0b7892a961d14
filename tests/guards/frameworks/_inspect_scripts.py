"""What the Inspect guard tests share: the scripted tools as Inspect tools, the
``mockllm/model`` outputs of a script, an eval of one sample and what its log shows."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import guard_scenarios as gs

# Inspect's own dependencies warn (a deprecated retry argument; an anyio stream left to the
# garbage collector): not ours to fix, all else stays an error.
PYTESTMARK = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject:ResourceWarning"),
]
MODEL = "mockllm/model"


def tools(executed: list[str]) -> list[Any]:
    """`gs.scripted_tools` as Inspect tools (Inspect awaits a tool: each is wrapped in a
    coroutine function keeping its name, signature and docstring)."""
    from inspect_ai.tool import ToolDef

    def as_async(fn: Callable[..., str]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def execute(**kwargs: Any) -> str:
            return fn(**kwargs)

        return execute

    return [ToolDef(as_async(fn)).as_tool() for fn in gs.scripted_tools(executed)]


def with_usage(outputs: list[Any]) -> list[Any]:
    """``outputs`` given usage: the mock model then counts no tokens (tiktoken would
    download)."""
    from inspect_ai.model import ModelUsage

    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return outputs


def outputs(steps: list[list[tuple[str, dict[str, Any]]]], overflow_from: int | None = None,
            ) -> list[Any]:
    """A response per step of ``steps`` (all its calls), then ``submit``; from step
    ``overflow_from`` on, each after a response the context window overflowed on."""
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ModelOutput,
    )
    from inspect_ai.tool import ToolCall

    overflow = ModelOutput(model=MODEL, choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content=""), stop_reason="model_length")])
    out = []
    for i, step in enumerate(steps):
        out += [overflow] if overflow_from is not None and i >= overflow_from else []
        output = ModelOutput.for_tool_call(MODEL, *step[0], tool_call_id=f"c{i}")
        output.choices[0].message.tool_calls = [
            ToolCall(id=f"c{i}_{j}", function=name, arguments=args)
            for j, (name, args) in enumerate(step)]
        out.append(output)
    out.append(ModelOutput.for_tool_call(MODEL, "submit", {"answer": "Done."},
                                         tool_call_id="submit"))
    return with_usage(out)


def eval_one(solver: Any, scripted: list[Any], log_dir: Path, message_limit: int) -> Any:
    """The eval log of ``solver`` on one sample, the model answering ``scripted``."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model

    # time_limit: a run waiting on something that never comes (react() waits for an
    # operator when no user message is left) fails the test instead of hanging the suite
    task = Task(dataset=[Sample(input="Make the tests pass.")], solver=solver,
                message_limit=message_limit, time_limit=120)
    [log] = eval(task, model=get_model(MODEL, custom_outputs=scripted),
                 log_dir=str(log_dir), display="none")
    gc.collect()
    return log


def sample_of(log: Any) -> Any:
    """The log's sample, read back with attachments resolved (the log stores long texts,
    the guard's message among them, by reference)."""
    from inspect_ai.log import read_eval_log

    assert log.status == "success", log.error
    samples = read_eval_log(log.location, resolve_attachments=True).samples
    assert samples is not None
    return samples[0]


def contexts(sample: Any) -> list[str]:
    """What the model was sent at each call it answered (an overflow is no answer)."""
    return ["\n".join(m.text for m in e.input) for e in sample.events
            if e.event == "model" and e.output.stop_reason != "model_length"]


def without_submit(messages: list[Any]) -> list[Any]:
    return [m for m in messages
            if not any(c.function == "submit" for c in getattr(m, "tool_calls", None) or ())]


class Stopped:
    """The stop as a test sees it: the guard's results and what the log's store holds."""

    def __init__(self, results: Any, stored: Any) -> None:
        self.results = results
        self.stored = stored

    def __str__(self) -> str:
        return str(self.stored)


def stopped(guard: Any, sample: Any) -> Stopped | None:
    """The guard's stop of the run, if any, with the sample's store."""
    if not guard.stopped:
        return None
    return Stopped(next(iter(guard.stopped.values())).results, sample.store.get("maxrepeat"))
