"""The loop guard for the OpenAI Agents SDK (the ``maxrepeat[openai-agents]`` extra).

A guard in the SDK's three documented places (a later run with the same guard starts
from nothing; a run missing one of them fails with a ``UserError`` naming it, at its first
model call or tool call, before a repeat can run)::

    guard = loop_guard(MaxRepeatConfig.preset("live"))
    agent = Agent(name="fixer", model=model, tools=guard.tools([run_tests]))
    result = await Runner.run(agent, "fix it", hooks=guard, run_config=guard.run_config())

* run hooks (``hooks=guard``): ``on_llm_end`` sees the tool calls of a model response
  (one step, however many calls); when the policy says stop, its calls are refused and
  `LoopStoppedError` (an ``AgentsException``) is raised from ``on_llm_start``, before the
  next model call (so the SDK's record holds the refused calls: the stop message, the
  guard's results and grading the record count the same);
* a tool input guardrail on each function tool (``guard.tools``): when the policy says the
  step would be refused, each call is rejected with the refusal as its output
  (``ToolGuardrailFunctionOutput.reject_content``) and does not run;
* ``call_model_input_filter`` (``guard.run_config``): the step's outputs are read from the
  model input, and at the warning level a user message naming the repeated action (or
  cycle) and its count is put after them, on this call and every later one.

`trajectory_from_items` converts ``result.to_input_list()`` (or the items of a stopped
run's ``run_data``) the same way, for ``maxrepeat.grade`` afterwards. ``agents`` is imported
only when a guard is made.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from typing import Any, Final

from ...core.errors import MissingExtraError
from .._live import FrameworkClasses, Graders, LoopStopped, ResultsOfLogic, StepGuard, load_graders
from ..policy import Action, Decision, Policy
from ._openai_agents_items import (
    FORMAT,
    SOURCE,
    item_call,
    item_dict,
    item_kind,
    trajectory_from_items,
)

__all__ = ["loop_guard", "trajectory_from_items", "stop_error_class"]

_EXTRA = "openai-agents"


class _Logic:
    """The guard's state for one run, free of SDK types."""

    def __init__(self, graders: Graders, policy: Policy | None) -> None:
        self.graders = load_graders(graders)  # a config file is read once
        self.policy = policy
        self.reset(None)

    def reset(self, run: Any) -> None:
        self.run = weakref.ref(run) if run is not None else None
        self.guard = StepGuard(self.graders, policy=self.policy, format=FORMAT,
                               source=SOURCE)
        self.refused: dict[str, str] = {}
        self.pending: set[str] = set()
        # (call id of the output the note follows, that output's index then, note)
        self.notes: list[tuple[str, int, str]] = []
        self.decision = Decision(Action.NONE, None, ())

    def _output_at(self, items: list[Any], index: int, cid: str) -> bool:
        if not 0 <= index < len(items):
            return False
        d = item_dict(items[index])
        return item_kind(d) == "function_call_output" and str(d.get("call_id")) == cid

    def filter(self, items: list[Any]) -> list[Any]:
        """The model input with this run's notes in place (the step just ended decided):
        ``items`` itself, the notes inserted into it (the SDK hands the filter a list of
        its own, rebuilt from the run's items at each model call).

        Reads from the end back to the step's outputs (the input grows by appending), and
        finds each note's place by the index it had when it was placed (a full scan only
        when the input was rewritten); the input is not copied, so a call costs the same
        late in a long run."""
        by_id = self._outputs(items)
        answered = [cid for cid in list(self.pending) if cid in by_id]
        for cid in answered:
            self.pending.discard(cid)
            if cid in self.refused:
                continue
            self.guard.answer(cid, by_id[cid][1].get("output"))
        if answered and not self.pending:
            self._finish(answered, by_id)
        if self.notes:
            self._place_notes(items)
        return items

    def _outputs(self, items: list[Any]) -> dict[str, tuple[int, dict[str, Any]]]:
        """The pending calls' outputs in ``items`` (call id -> index, item), read from the
        end back until each pending call is found."""
        by_id: dict[str, tuple[int, dict[str, Any]]] = {}
        if not self.pending:
            return by_id
        for index in range(len(items) - 1, -1, -1):
            d = item_dict(items[index])
            if item_kind(d) == "function_call_output" and str(d.get("call_id")) in self.pending:
                by_id[str(d.get("call_id"))] = (index, d)
                if len(by_id) == len(self.pending):
                    break
        return by_id

    def _finish(self, answered: list[str],
                by_id: dict[str, tuple[int, dict[str, Any]]]) -> None:
        """The step ended: decide it, and note its warning after its last output."""
        was_refused = any(cid in self.refused for cid in answered)
        self.refused = {}
        self.decision = self.guard.finish()
        if (self.decision.action in (Action.WARN, Action.BLOCK) and not was_refused
                and self.decision.message):
            last = max(answered, key=lambda cid: by_id[cid][0])
            self.notes.append((last, by_id[last][0], self.decision.message))

    def _place_notes(self, items: list[Any]) -> None:
        """Insert the run's notes into ``items``, each after the output it follows."""
        places: dict[int, list[str]] = {}
        for cid, index, note in self.notes:
            if not self._output_at(items, index, cid):
                found = [i for i in range(len(items)) if self._output_at(items, i, cid)]
                if not found:
                    continue
                index = found[0]
            places.setdefault(index, []).append(note)
        for index in sorted(places, reverse=True):
            items[index + 1:index + 1] = [{"role": "user", "content": n}
                                          for n in places[index]]

    def response(self, output: Sequence[Any]) -> None:
        """A model response: its calls open a step (refused or stopped per the policy)."""
        calls = [item_call(d) for d in map(item_dict, output) if item_kind(d) == "function_call"]
        if not calls:
            return
        ahead = self.guard.start(calls)
        self.pending = {c.id for c in calls if c.id is not None}
        if ahead.action >= Action.BLOCK:
            # A step that would stop the run is refused like a blocked one (its calls do
            # not run), then the run stops before the next model call: the SDK records
            # the refused calls, so grading its record counts what the guard counted.
            text = self.guard.refuse(ahead)
            self.refused = {c.id: text for c in calls if c.id is not None}


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from agents import RunConfig, RunHooks, ToolGuardrailFunctionOutput, ToolInputGuardrail
        from agents.exceptions import AgentsException, UserError
        from agents.run_config import ModelInputData
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "agents") from exc

    class LoopStoppedError(AgentsException, LoopStopped):  # type: ignore[misc]
        """Raised out of ``Runner.run`` when the loop goes on up to ``stop_at``."""

        def __init__(self, decision: Decision) -> None:
            LoopStopped.__init__(self, decision)
            self.run_data = None
            self.message = str(self)

    class MaxRepeatRunHooks(RunHooks[Any], ResultsOfLogic):  # type: ignore[misc]
        """Warns, refuses and stops an Agents SDK run that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.logic = _Logic(graders, policy)
            self.guardrail: Any = ToolInputGuardrail(guardrail_function=self._check,
                                                name="maxrepeat")
            self.filtered = False  # the input filter ran for the model call to come

        def _unwired(self, missing: str) -> Exception:
            error: Exception = UserError(
                f"maxrepeat loop guard: the run is missing {missing}: a guard needs all "
                "three of hooks=guard, tools=guard.tools([...]) and "
                "run_config=guard.run_config()")
            return error

        async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any,
                               input_items: Any) -> None:
            if not self.filtered:
                raise self._unwired("run_config=guard.run_config()")
            self.filtered = False
            bare = [t.name for t in agent.tools if hasattr(t, "tool_input_guardrails") and
                    not any(g is self.guardrail for g in t.tool_input_guardrails or ())]
            if bare:
                raise self._unwired(f"guard.tools([...]) around {', '.join(bare)}")
            # The SDK keeps one context wrapper per run: another one is a new run with the
            # same guard, which starts from nothing (the input filter, called just before,
            # found no call of this run to answer, so it changed nothing).
            run = self.logic.run() if self.logic.run is not None else None
            if run is not context:
                if self.logic.run is not None:
                    self.logic.reset(context)
                else:
                    self.logic.run = weakref.ref(context)
            decision = self.logic.decision
            if decision.action >= Action.STOP:
                raise LoopStoppedError(self.logic.guard.stop(decision))

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            self.logic.response(response.output)

        def _filter(self, data: Any) -> Any:
            if self.filtered:  # the last model call had no on_llm_start
                raise self._unwired("hooks=guard")
            self.filtered = True
            model_data = data.model_data
            items = model_data.input
            if not isinstance(items, list):  # (the SDK's is a list: its own copy)
                return ModelInputData(input=self.logic.filter(list(items)),
                                      instructions=model_data.instructions)
            self.logic.filter(items)  # the notes go into the SDK's copy: no copy of ours
            return model_data

        def _check(self, data: Any) -> Any:
            call_id = data.context.tool_call_id
            if call_id not in self.logic.pending:  # on_llm_end did not see the call
                raise self._unwired("hooks=guard")
            text = self.logic.refused.get(call_id)
            if text is None:
                return ToolGuardrailFunctionOutput.allow()
            return ToolGuardrailFunctionOutput.reject_content(text)

        def tools(self, tools: Sequence[Any]) -> list[Any]:
            """Copies of function tools with the guard's refusal guardrail added (other
            tools are returned as they are)."""
            out = []
            for t in tools:
                if hasattr(t, "tool_input_guardrails"):
                    rails = [*(t.tool_input_guardrails or []), self.guardrail]
                    t = dataclasses.replace(t, tool_input_guardrails=rails)
                out.append(t)
            return out

        def run_config(self, base: Any = None) -> Any:
            """A ``RunConfig`` (a copy of ``base``) whose model input filter is the
            guard's (it chains to the one ``base`` had)."""
            cfg = base if base is not None else RunConfig()
            inner = cfg.call_model_input_filter
            if inner is None:
                return dataclasses.replace(cfg, call_model_input_filter=self._filter)

            async def chained(data: Any) -> Any:
                import inspect as _inspect

                got = inner(data)
                if _inspect.isawaitable(got):
                    got = await got
                data = dataclasses.replace(data, model_data=got)
                return self._filter(data)

            return dataclasses.replace(cfg, call_model_input_filter=chained)

    return MaxRepeatRunHooks, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The ``AgentsException`` and `LoopStopped` the guard raises to stop a run."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """A guard for one Agents SDK run: pass it as ``hooks=``, wrap the tools with
    ``guard.tools([...])`` and pass ``run_config=guard.run_config()``.

    Needs ``agents`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig(max=3))).__name__
    'MaxRepeatRunHooks'
    """
    return _CLASSES.loop_guard(graders, policy)
