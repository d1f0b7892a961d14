"""What a framework guard costs per tool call (issue 13).

For each framework, the same agent runs a clean session of N single-call steps with the
framework's own scripted model, once without the guard (the floor: the framework's own
cost per step) and once with it; the guard's cost per call is the difference divided by
N. CPU seconds of this process (``time.process_time``), best of ``--repeat`` runs, which
other load on the machine inflates less than wall time. Also the bare `StepGuard` (the
monitors and the policy, no framework) over 10,000 steps.

    python bench/guards.py [--steps 200] [--repeat 3] [--only langchain,...]
    python bench/guards.py --hooks --steps 1000   # pydantic-ai's hooks, first/last tenth

Needs the extras: pip install -e '.[langchain,openai-agents,smolagents,pydantic-ai,inspect]'.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from maxrepeat import MaxRepeatConfig

CONFIG = MaxRepeatConfig(max=3, max_cycle_period=3)  # observation mode, cycles up to 3


def _script(n: int) -> list[tuple[str, dict[str, Any]]]:
    return [("edit", {"path": f"src/f{i}.py", "text": "x = 1"}) for i in range(n)]


def _edit_output(path: str) -> str:
    return f"wrote {path}"


def run_langchain(n: int, guarded: bool) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from maxrepeat.guards.frameworks.langchain import loop_guard

    class Model(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return _edit_output(path)

    responses: list[Any] = [
        AIMessage(content="", tool_calls=[{"id": f"c{i}", "name": name, "args": args}])
        for i, (name, args) in enumerate(_script(n))]
    responses.append(AIMessage(content="done"))
    agent = create_agent(Model(responses=responses), [edit],
                         middleware=[loop_guard(CONFIG)] if guarded else [])
    agent.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": 4 * n + 20})


def run_pydantic_ai(n: int, guarded: bool) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    from maxrepeat.guards.frameworks.pydantic_ai import loop_guard

    script = _script(n)
    count = [0]

    def model(messages: Any, info: Any) -> ModelResponse:
        count[0] += 1
        if count[0] > n:
            return ModelResponse(parts=[TextPart("done")])
        name, args = script[count[0] - 1]
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"c{count[0]}")])

    agent = Agent(FunctionModel(model), capabilities=[loop_guard(CONFIG)] if guarded else [])

    @agent.tool_plain
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return _edit_output(path)

    asyncio.run(agent.run("go", usage_limits=UsageLimits(request_limit=n + 10)))


def run_openai_agents(n: int, guarded: bool) -> None:
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call

    from maxrepeat.guards.frameworks.openai_agents import loop_guard

    @function_tool
    def edit(path: str, text: str) -> str:
        """Write text to path."""
        return _edit_output(path)

    steps: list[Any] = [[function_call(name, args, call_id=f"c{i}")]
                        for i, (name, args) in enumerate(_script(n))]
    steps.append([assistant_message("done")])
    config = RunConfig(tracing_disabled=True)
    if guarded:
        guard = loop_guard(CONFIG)
        agent = Agent(name="a", model=ScriptedModel(steps), tools=guard.tools([edit]))
        asyncio.run(Runner.run(agent, "go", hooks=guard, run_config=guard.run_config(config),
                               max_turns=n + 5))
    else:
        agent = Agent(name="a", model=ScriptedModel(steps), tools=[edit])
        asyncio.run(Runner.run(agent, "go", run_config=config, max_turns=n + 5))


def run_smolagents(n: int, guarded: bool) -> None:
    from smolagents import Model, ToolCallingAgent, tool
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
    )

    from maxrepeat.guards.frameworks.smolagents import loop_guard

    script = [*_script(n), ("final_answer", {"answer": "done"})]

    class Scripted(Model):
        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            self.i = 0

        def generate(self, messages: Any, stop_sequences: Any = None,
                     response_format: Any = None, tools_to_call_from: Any = None,
                     **kwargs: Any) -> ChatMessage:
            name, args = script[self.i]
            self.i += 1
            call = ChatMessageToolCall(id=f"c{self.i}", type="function",
                                       function=ChatMessageToolCallFunction(name=name,
                                                                            arguments=args))
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    @tool
    def edit(path: str, text: str) -> str:
        """Write a file.

        Args:
            path: The file.
            text: What to write.
        """
        return _edit_output(path)

    guard = loop_guard(CONFIG) if guarded else None
    tools = guard.tools([edit]) if guard is not None else [edit]
    agent = ToolCallingAgent(tools=tools, model=Scripted(),
                             step_callbacks=[guard] if guard is not None else [],
                             max_steps=n + 5, verbosity_level=-1)
    agent.run("go")


def run_inspect(n: int, guarded: bool) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.agent import react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import Tool, tool

    from maxrepeat.guards.frameworks.inspect import loop_guard

    @tool
    def edit() -> Tool:
        async def execute(path: str, text: str) -> str:
            """Write a file.

            Args:
                path: The file.
                text: What to write.
            """
            return _edit_output(path)

        return execute

    outputs = [ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"c{i}")
               for i, (name, args) in enumerate(_script(n))]
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"},
                                             tool_call_id="s"))
    for o in outputs:
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    if guarded:
        guard = loop_guard(CONFIG)
        agent = react(tools=[edit()], on_continue=guard.on_continue, approval=guard.approval)
    else:
        from inspect_ai.approval import ApprovalPolicy, auto_approver

        # the same approval machinery, so the difference is the guard's own work
        agent = react(tools=[edit()], approval=[ApprovalPolicy(auto_approver(), "*")])
    with tempfile.TemporaryDirectory() as logs:
        eval(Task(dataset=[Sample(input="go")], solver=agent, message_limit=3 * n + 20),
             model=get_model("mockllm/model", custom_outputs=outputs), log_dir=logs,
             display="none")


def bare(n: int) -> float:
    """CPU seconds per step of `StepGuard` alone (start, answer, finish)."""
    from maxrepeat.guards._live import StepGuard, ToolCall

    guard = StepGuard(CONFIG)
    start = time.process_time()
    for i, (name, args) in enumerate(_script(n)):
        guard.start([ToolCall(f"c{i}", name, args)])
        guard.answer(f"c{i}", _edit_output(args["path"]))
        guard.finish()
    return (time.process_time() - start) / n


def pydantic_ai_hooks(n: int) -> tuple[float, float]:
    """CPU seconds per step in the pydantic-ai guard's own hooks over a guarded run of
    ``n`` steps: the mean of the first tenth of the steps and of the last tenth. (The
    difference of two whole runs cannot show this: the framework's own step grows with
    the history, to tens of ms at 1,000 steps, and its noise hides the guard.)"""
    from maxrepeat.guards import pydantic_ai

    cls = pydantic_ai._CLASSES.guard
    spent: list[float] = []
    saved = {}
    for name in ("before_model_request", "after_model_request", "before_tool_execute"):
        inner = saved[name] = getattr(cls, name)

        def timed(inner: Any = inner, first: bool = name == "before_model_request") -> Any:
            async def hook(self: Any, *args: Any, **kwargs: Any) -> Any:
                start = time.process_time()
                try:
                    return await inner(self, *args, **kwargs)
                finally:
                    if first:
                        spent.append(0.0)  # a new step
                    spent[-1] += time.process_time() - start
            return hook

        setattr(cls, name, timed())
    try:
        run_pydantic_ai(n, True)
    finally:
        for name, inner in saved.items():
            setattr(cls, name, inner)
    k = max(1, len(spent) // 10)
    return sum(spent[:k]) / k, sum(spent[-k:]) / k


RUNNERS: dict[str, Callable[[int, bool], None]] = {
    "langchain": run_langchain,
    "pydantic-ai": run_pydantic_ai,
    "openai-agents": run_openai_agents,
    "smolagents": run_smolagents,
    "inspect": run_inspect,
}


def best(fn: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=",".join(RUNNERS))
    parser.add_argument("--hooks", action="store_true",
                        help="time the pydantic-ai guard's own hooks by tenths instead")
    opts = parser.parse_args()
    n = opts.steps
    if opts.hooks:
        first, last = pydantic_ai_hooks(n)
        print(f"pydantic-ai guard hooks, {n} steps: first tenth {first * 1e6:.0f} us, "
              f"last tenth {last * 1e6:.0f} us per step (load {os.getloadavg()})")
        return
    print(f"load average at start: {os.getloadavg()}")
    print(f"bare StepGuard: {bare(10_000) * 1e6:.0f} us per step (10,000 steps)")
    print("| framework | floor per step (no guard) | with guard | guard per call | ratio |")
    print("|---|---|---|---|---|")
    for name in opts.only.split(","):
        run = RUNNERS[name]
        run(5, True)  # warm imports and caches
        run(5, False)
        floor = best(functools.partial(run, n, False), opts.repeat) / n
        guarded = best(functools.partial(run, n, True), opts.repeat) / n
        print(f"| {name} | {floor * 1e3:.2f} ms | {guarded * 1e3:.2f} ms | "
              f"{(guarded - floor) * 1e6:.0f} us | {guarded / floor:.2f} |", flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
