"""The calls Claude Code's hooks reported that its transcript does not hold yet.

Claude Code (measured with 2.1.332, ``docs/design/agent-guards.md``) starts a tool, and
runs its ``PreToolUse`` hook, as soon as the model's response has streamed that tool's
block, but writes the response's records only once the whole response has streamed, and
then through a write queue drained every 100 ms; the calls' results follow the same way.
So a hook can run before the transcript holds its own call (or the result of a call
before it), and a guard reading only the transcript counts a run one copy short: the
refusal ``PreToolUse`` owes comes one hook late, from ``PostToolUse``, after the call ran.

Every hook input names its call (``tool_use_id``, ``tool_name``, ``tool_input``; after
the call its result). The guard keeps those calls in a `Backlog` saved with its state
and, at each hook, feeds the monitors on top of the transcript what the transcript does
not hold yet, where the transcript will hold it:

* results of calls the transcript holds, as long as it does not hold the result;
* then the calls it does not hold, as **one turn after the transcript's last one**, each
  followed by its result when known. A response's records are written together once it
  has streamed, and the next response needs every result of this one, so the calls
  missing are those of the response still streaming (the transcript lags by less than
  a model round trip: 100 ms against a request and its answer).

What is fed on top is never saved in the monitors: once the transcript holds a call and
its result, the entry is dropped and the transcript's own records count. An entry the
transcript never catches up with (a response cut off before it was written) is dropped
once the transcript holds two turns more than when the entry was made, so it cannot
skew later verdicts.

>>> from maxrepeat.core.events import Event, EventData
>>> b = Backlog()
>>> b.saw("t1", "Bash", {"command": "ls"})
>>> [e.type for e in b.on_top(lambda cid: False)]
['turn_start', 'tool_call']
>>> b.answer("t1", "out", True)
>>> [e.type for e in b.on_top(lambda cid: False)]
['turn_start', 'tool_call', 'tool_result']
>>> b.logged([Event("tool_result", EventData(tool_call_id="t1", result="out"))])
>>> b.prune(lambda cid: True); b.entries
[]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, ClassVar, Final

import msgspec

from ..core.events import TOOL_RESULT, TURN_END, TURN_START, Event, EventData

__all__ = ["Backlog", "Seen", "refusal_result"]

_TYPE: Final = attrgetter("type")


def refusal_result(tool_name: str, reason: str) -> str:
    """The result Claude Code 2.1 records for a call a ``PreToolUse`` hook denied.

    >>> refusal_result("Bash", "no")
    'PreToolUse:Bash hook error: no'
    """
    return f"PreToolUse:{tool_name} hook error: {reason}"


class Seen(msgspec.Struct, array_like=True):
    """One call as a hook input gave it: ``turns`` is how many turns the transcript's
    complete lines held then; ``success`` is None until its result is known, and
    ``logged`` says the transcript's complete lines hold that result."""

    id: str
    name: str | None  # None: the hook input named no tool (only its result is fed)
    arguments: Any
    turns: int
    result: Any = None
    success: bool | None = None
    logged: bool = False


class Backlog(msgspec.Struct):
    """The calls seen by hook input that the transcript may not hold yet, in the order
    the hooks reported them; ``turns`` counts the turns of the transcript's complete
    lines (the main session's)."""

    #: At most this many entries are kept (the oldest go first).
    LIMIT: ClassVar[int] = 64
    turns: int = 0
    entries: list[Seen] = msgspec.field(default_factory=list)

    def logged(self, events: Sequence[Event]) -> None:
        """Take note of ``events``, read from the transcript's complete lines: the turns
        they open and the results they hold."""
        types = list(map(_TYPE, events))
        self.turns += types.count(TURN_START)
        waiting = {s.id: s for s in self.entries if not s.logged}
        if waiting and TOOL_RESULT in types:
            for e in events:
                cid = e.data.tool_call_id if e.type == TOOL_RESULT and e.data else None
                found = waiting.get(cid) if cid is not None else None
                if found is not None:
                    found.logged = True

    def saw(self, cid: str, name: str | None, arguments: Any) -> None:
        """A hook input names call ``cid`` (once per call: later inputs keep the first)."""
        if self._find(cid) is None:
            self.entries.append(Seen(cid, name, arguments, self.turns))
            del self.entries[:-self.LIMIT]

    def answer(self, cid: str, result: Any, success: bool) -> None:
        """Call ``cid``'s result, as the transcript will record it (the first one given
        stays)."""
        found = self._find(cid)
        if found is not None and found.success is None:
            found.result, found.success = result, success

    def _find(self, cid: str) -> Seen | None:
        for s in self.entries:
            if s.id == cid:
                return s
        return None

    def on_top(self, in_log: Callable[[str], bool], open_turn: bool = False) -> list[Event]:
        """The events to feed after the transcript's (``in_log``: whether it holds a call
        id, its partial last line included): results it lacks for calls it holds, then
        one turn of the calls it lacks, with their results. ``open_turn``: the
        transcript's last turn is open (the reader would close it first)."""
        late: list[Event] = []
        calls: list[Event] = []
        results: list[Event] = []
        for s in self.entries:
            logged = in_log(s.id)
            if not logged and s.name is not None:
                calls.append(Event("tool_call", EventData(
                    tool_name=s.name, tool_call_id=s.id, arguments=s.arguments)))
            if s.success is not None and not s.logged:
                (late if logged else results).append(Event("tool_result", EventData(
                    tool_call_id=s.id, result=s.result, success=s.success)))
        if calls:
            start = [Event(TURN_END), Event(TURN_START)] if open_turn else [Event(TURN_START)]
            return [*late, *start, *calls, *results]
        return late

    def prune(self, in_log: Callable[[str], bool]) -> None:
        """Drop what the transcript's complete lines (``in_log``) now hold: a call and
        its result, or a call whose result is not known yet (the next hook gives it
        again); and entries two turns old the transcript never caught up with."""
        self.entries = [s for s in self.entries
                        if self.turns < s.turns + 2
                        and not (s.logged or (s.success is None and in_log(s.id)))]

    def restart(self) -> None:
        """The transcript is read again from its start: nothing of it is noted yet."""
        self.turns = 0
        for s in self.entries:
            s.logged = False
