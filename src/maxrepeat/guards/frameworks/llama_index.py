"""The loop guard for LlamaIndex agents (the ``maxrepeat[llama-index]`` extra).

``agent = loop_guard(MaxRepeatConfig.preset("live")).agent(FunctionAgent(tools=..., llm=llm))``
guards a ``FunctionAgent`` (``llama_index.core.agent.workflow``): the one call gives the
agent a guarded copy of its LLM and of each of its tools, so no part can be left out (an
LLM or tools set after it are refused at the next step, with a `TypeError`).

* The LLM copy sees each request's chat history before the model answers: the results of
  the last step are fed to the live monitors and the step ends; at the warning level the
  message naming the repeated action (or cycle) is added after the step's tool results,
  in this request and every later one of the run; at ``stop_at`` the request raises
  `LoopStoppedError` instead of calling the model.
* It sees each response's tool calls (one step, however many): when the step would be
  refused (or would reach ``stop_at``), the tool copies return the refusal as their
  result without running, and the run stops at the next request.
* A request whose history ends with the user's message starts a new run: the guard starts
  it clean, whatever ended the last one.

`trajectory_from_messages` converts the agent's record (the memory's messages after a run,
``await memory.aget_all()``; after a stop, the run's ``scratchpad`` in its context) the
same way, for ``maxrepeat.grade``. ``llama_index.core`` is imported only when a guard is
made.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from ...core.errors import MissingExtraError
from ...core.events import Trajectory
from .._live import (
    FrameworkClasses,
    Graders,
    LoopStopped,
    ResultsOfLogic,
    StepGuard,
    ToolCall,
    answers_of_open_step,
    load_graders,
)
from ..policy import Action, Policy
from ._records import json_arguments, turn_events

__all__ = ["loop_guard", "trajectory_from_messages", "stop_error_class"]

_EXTRA = "llama-index"
FORMAT = "llama-index"
SOURCE = "<llama-index messages>"


def _role(message: Any) -> str:
    role = getattr(message, "role", "")
    return str(getattr(role, "value", role))


def _calls(message: Any) -> list[ToolCall]:
    """The tool calls of an assistant message: its ``ToolCallBlock`` blocks, else the
    OpenAI-style ``tool_calls`` of its ``additional_kwargs``."""
    calls = [ToolCall(b.tool_call_id, b.tool_name, json_arguments(b.tool_kwargs))
             for b in getattr(message, "blocks", ()) or ()
             if getattr(b, "block_type", None) == "tool_call"]
    if calls:
        return calls
    for raw in (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or ():
        get = raw.get if isinstance(raw, dict) else (lambda k, r=raw: getattr(r, k, None))
        fn = get("function")
        fget = fn.get if isinstance(fn, dict) else (lambda k, f=fn: getattr(f, k, None))
        calls.append(ToolCall(get("id"), fget("name") or "", json_arguments(fget("arguments"))))
    return calls


def _answer(message: Any) -> tuple[str | None, Any]:
    """(call id, content) of a ``tool`` message."""
    cid = (getattr(message, "additional_kwargs", None) or {}).get("tool_call_id")
    return (str(cid) if cid is not None else None), message.content


def _returns(message: Any) -> list[tuple[str, Any, bool]]:
    cid, content = _answer(message) if _role(message) == "tool" else (None, None)
    return [] if cid is None else [(cid, content, True)]


def trajectory_from_messages(messages: Sequence[Any], *, id: str | None = None) -> Trajectory:
    """A `Trajectory` from LlamaIndex ``ChatMessage`` values: each assistant message with
    tool calls is one turn; the ``tool`` messages answering them are the results."""
    events = turn_events(messages, lambda m: _calls(m) if _role(m) == "assistant" else None,
                         _returns)
    return Trajectory(events=tuple(events), id=id, source=SOURCE, format=FORMAT)


class _Logic:
    """One run's state, free of LlamaIndex types."""

    def __init__(self, graders: list[Any], policy: Policy | None) -> None:
        self.graders = graders
        self.policy = policy
        self.reset(0)

    def reset(self, seen: int) -> None:
        self.guard = StepGuard(self.graders, policy=self.policy, format=FORMAT, source=SOURCE)
        self.seen = seen  # the history's length at the last request
        self.refusal: str | None = None  # the open step's calls are refused with this
        self.refused: set[str] = set()
        self.waiting: set[str] = set()  # the open step's call ids
        # (index of the message it follows, that message's tool call id, note)
        self.notes: list[tuple[int, str | None, str]] = []

    def before(self, history: list[Any]) -> list[Any]:
        """A model request with ``history`` (the agent's list, made for this request): the
        last step ends; returns the history to send, this run's notes put in place (in the
        list itself: a copy of the whole history at each request would cost more and more).
        The step's results are read from the end: a handoff in an ``AgentWorkflow`` sends
        the memory, maybe trimmed, so the history can shrink within a run."""
        if (not history or _role(history[-1]) == "user"
                or (len(history) < self.seen and not self.waiting)):
            self.reset(len(history))  # a new run (its first request)
            return history
        was_refused = self.refusal is not None
        for cid, content, _ in answers_of_open_step(
                history, self.waiting, lambda m: _role(m) == "assistant", _returns):
            if cid not in self.refused:
                self.guard.answer(cid, content)
        self.seen = len(history)
        self.refusal, self.refused, self.waiting = None, set(), set()
        decision = self.guard.finish()
        if decision.action >= Action.STOP:
            raise _CLASSES.error(self.guard.stop(decision))
        if decision.action >= Action.WARN and decision.message and not was_refused:
            self.notes.append((len(history) - 1, _answer(history[-1])[0], decision.message))
        if self.notes:
            self._put_notes(history)
        return history

    def _put_notes(self, history: list[Any]) -> None:
        """Each note after the message it follows, found again by its tool call id where
        the history was trimmed since (dropped with it when trimmed away)."""
        from llama_index.core.llms import ChatMessage

        for k in range(len(self.notes) - 1, -1, -1):
            index, anchor, note = self.notes[k]
            if anchor is not None and (index >= len(history)
                                       or _answer(history[index])[0] != anchor):
                index = next((i for i, m in enumerate(history) if _answer(m)[0] == anchor), -1)
                self.notes[k] = (index, anchor if index >= 0 else None, note)
            if index >= 0:
                history.insert(index + 1, ChatMessage(role="user", content=note))

    def after(self, calls: list[ToolCall]) -> None:
        """A model response asks for ``calls`` (one step)."""
        if not calls:
            return
        ahead = self.guard.start(calls)
        self.waiting = {c.id for c in calls if c.id is not None}
        if ahead.action >= Action.BLOCK:
            # A step that would stop the run is refused too; the run stops at the next
            # request, so the agent's record holds the refused step, as the count does.
            self.refusal = self.guard.refuse(ahead)
            self.refused = {c.id for c in calls if c.id is not None}


def _as_list(history: Any) -> list[Any]:
    return history if isinstance(history, list) else list(history or [])


def _llm_class(base: type[Any], logic: _Logic) -> type[Any]:
    """A subclass of the agent's LLM class whose tool-calling chats feed ``logic``."""

    def calls_of(llm: Any, response: Any) -> list[ToolCall]:
        selections = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
        return [ToolCall(s.tool_id, s.tool_name, s.tool_kwargs) for s in selections or ()]

    class Guarded(base):  # type: ignore[misc]
        async def achat_with_tools(self, tools: Any, user_msg: Any = None,
                                   chat_history: Any = None, **kwargs: Any) -> Any:
            history = logic.before(_as_list(chat_history))
            response = await super().achat_with_tools(tools, user_msg=user_msg,
                                                      chat_history=history, **kwargs)
            logic.after(calls_of(self, response))
            return response

        async def astream_chat_with_tools(self, tools: Any, user_msg: Any = None,
                                          chat_history: Any = None, **kwargs: Any) -> Any:
            history = logic.before(_as_list(chat_history))
            stream = await super().astream_chat_with_tools(tools, user_msg=user_msg,
                                                           chat_history=history, **kwargs)

            async def relay() -> AsyncIterator[Any]:
                last = None
                async for last in stream:
                    yield last
                if last is not None:
                    logic.after(calls_of(self, last))

            return relay()

    Guarded.__name__ = Guarded.__qualname__ = f"LoopGuarded{base.__name__}"
    Guarded.maxrepeat_logic = logic
    return Guarded


def _tool_class(base: type[Any], logic: _Logic) -> type[Any]:
    """A subclass of a tool's class that answers with the refusal, not running, while the
    open step is refused."""
    from llama_index.core.tools import ToolOutput

    def refused(tool: Any, kwargs: dict[str, Any]) -> Any:
        text = logic.refusal
        if text is None:
            return None
        return ToolOutput(content=text, tool_name=tool.metadata.get_name(),
                          raw_input=kwargs, raw_output=text, is_error=True)

    class Guarded(base):  # type: ignore[misc]
        def call(self, *args: Any, **kwargs: Any) -> Any:
            return refused(self, kwargs) or super().call(*args, **kwargs)

        async def acall(self, *args: Any, **kwargs: Any) -> Any:
            return refused(self, kwargs) or await super().acall(*args, **kwargs)

    Guarded.__name__ = Guarded.__qualname__ = f"LoopGuarded{base.__name__}"
    Guarded.maxrepeat_logic = logic
    return Guarded


def _replaced(agent: Any, logic: _Logic) -> str | None:
    """The part of a guarded agent set after guarding (``"llm"``, ``"tools"``), or None."""
    if getattr(type(agent.llm), "maxrepeat_logic", None) is not logic:
        return "llm was"
    if any(getattr(type(t), "maxrepeat_logic", None) is not logic for t in agent.tools or ()):
        return "tools were"
    return None


def _agent_class(base: type[Any], logic: _Logic) -> type[Any]:
    """A subclass of the agent's class that, at each step, checks its LLM and tools are
    still the guarded copies: any set after guarding would leave the run unguarded."""

    class Guarded(base):  # type: ignore[misc]
        async def take_step(self, *args: Any, **kwargs: Any) -> Any:
            replaced = _replaced(self, logic)
            if replaced is not None:
                part = replaced.split()[0]
                raise TypeError(f"maxrepeat loop guard: the agent's {replaced} replaced after"
                                " guard.agent(agent), so the run would not be guarded: set "
                                f"agent.{part} first, then guard the agent")
            return await super().take_step(*args, **kwargs)

    Guarded.__name__ = Guarded.__qualname__ = f"LoopGuarded{base.__name__}"
    Guarded.maxrepeat_base = base
    return Guarded


def _build() -> tuple[type[Any], type[LoopStopped]]:
    try:
        from llama_index.core.agent.workflow import FunctionAgent
        from llama_index.core.tools import FunctionTool
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "llama_index.core") from exc

    class LoopStoppedError(LoopStopped):
        """Raised out of the agent's run when the loop goes on up to ``stop_at``."""

    class LoopGuard(ResultsOfLogic):
        """Warns, refuses and stops a LlamaIndex ``FunctionAgent`` that repeats itself."""

        def __init__(self, graders: Graders, policy: Policy | None) -> None:
            self.logic = _Logic(load_graders(graders), policy)  # a config file read once

        def agent(self, agent: Any) -> Any:
            """Guard ``agent`` (a ``FunctionAgent``, changed in place and returned)."""
            if not isinstance(agent, FunctionAgent):
                raise TypeError("maxrepeat loop guard: agent must be a FunctionAgent "
                                f"(got {type(agent).__name__})")
            if agent.tool_retriever is not None:
                raise TypeError("maxrepeat loop guard: an agent with a tool_retriever "
                                "is not supported (its tools would not be guarded)")
            if agent.llm is None or hasattr(type(agent.llm), "maxrepeat_logic"):
                raise TypeError("maxrepeat loop guard: the agent needs its own llm, "
                                "not guarded yet")
            llm = agent.llm.model_copy()
            object.__setattr__(llm, "__class__", _llm_class(type(agent.llm), self.logic))
            tools = []
            for tool in agent.tools or ():
                if not hasattr(tool, "acall"):
                    tool = FunctionTool.from_defaults(tool)
                guarded = copy.copy(tool)
                guarded.__class__ = _tool_class(type(tool), self.logic)
                tools.append(guarded)
            agent.llm = llm
            agent.tools = tools
            base = getattr(type(agent), "maxrepeat_base", type(agent))
            object.__setattr__(agent, "__class__", _agent_class(base, self.logic))
            return agent

    return LoopGuard, LoopStoppedError


_CLASSES: Final = FrameworkClasses(_build)
stop_error_class: Final = _CLASSES.stop_error_class
"""The exception a LlamaIndex guard raises to stop a run (a `LoopStopped`)."""


def loop_guard(graders: Graders, *, policy: Policy | None = None) -> Any:
    """A LlamaIndex loop guard: ``guard.agent(FunctionAgent(...))`` guards an agent.

    Needs ``llama_index`` (else `MissingExtraError`); ``graders``: configs or a config file.

    >>> from maxrepeat import MaxRepeatConfig
    >>> type(loop_guard(MaxRepeatConfig(max=3))).__name__
    'LoopGuard'
    """
    return _CLASSES.loop_guard(graders, policy)

