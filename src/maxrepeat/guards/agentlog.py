"""The live guard for agents whose hook input names the call but not the history.

Codex CLI, Gemini CLI and Copilot CLI run a hook command before and after each tool call
with the call on standard input (tool name, arguments, for the post-call hook its result),
but without the calls before it. The history is in the agent's own session log, which
each agent writes as it goes: the guard reads that log with the agent's reader (the same
conversion ``maxrepeat grade`` applies to the finished log), adds the current call where
the log does not have it yet, and asks the shared escalation policy
(`maxrepeat.guards.policy`) what to do.

Where the current call stands in the log when the hook runs differs per agent (measured
with each agent's release, see ``docs/design/agent-guards.md``):

* ``"id"``: the call is already written, with the id the payload names (Codex CLI);
* ``"unanswered"``: the call is already written, but the payload names no id: it is the
  latest call of that name (and arguments) without a result (Copilot CLI);
* ``"absent"``: the call is not written yet (Gemini CLI writes a model message's calls
  once they have all finished).

After the call (``phase="post"``) its result comes from the payload, so the step is
complete at the call it belongs to, as it will be in the finished log. Before the call
(``phase="pre"``), the policy is asked what the call *would* do (`Escalation.would_exceed`):
in ``name`` and ``name-args`` modes a repeat is refused before it runs.

Each call converts only the lines appended since the previous one (`.logread`: the
reader's resumable state is saved with the rest of the session's state by
`maxrepeat.guards.session`, under the same per-session lock, so parallel calls of one
turn get one message). The conversion hands out the events that became final
(*settled*), which are fed once to the monitors saved with the state, and the events
that may still change (*open*: the latest turn, a turn waiting for a result), which are
fed at every call on top of them, with the current call. Whenever resuming is not
certain (no state, a state that does not verify or decode, a line that changes a settled
turn: a late result or error flag, a Gemini rewrite or ``$rewindTo``), the log is
converted from its start, so the monitors always see the events of one full read. The
monitors forget a result once its step is final, which is exact while call ids are
unique (the readers drop a call id seen before); a call made from the payload whose id
the log already has makes the guard feed everything again keeping every result, from
then on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from ..core.config import MaxRepeatConfig, unique_names
from ..core.errors import TrajectoryFormatError
from ..core.events import (
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    Event,
    Trajectory,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
)
from ..core.monitor import Monitor
from .logread import LogRead, read_log, read_whole, results_in
from .policy import Action, Decision, Escalation, Policy
from .session import GuardSession, Snapshot, signature_of

__all__ = ["HookCall", "HookOutput", "UNKNOWN", "place_call", "judge", "PLACEMENTS",
           "payload_str", "require"]

#: Longest wait (seconds) for a log that lags behind the hooks (see `_caught_up`).
LAG_WAIT: Final = 2.0
#: Part of the saved state's signature: changes when what the guard saves changes.
RESUME_FORMAT: Final = "resume-1"
#: How the current call stands in the log when the hook runs (see the module docstring).
PLACEMENTS: Final = ("id", "unanswered", "absent")


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


#: Arguments the payload does not give (the call is then matched by name only).
UNKNOWN: Final[Any] = _Unknown()


@dataclass(frozen=True)
class HookCall:
    """One hook invocation, in the log's terms.

    ``name`` and ``arguments`` are spelled as the agent's log spells them (the guard of
    each agent translates); ``result`` / ``ok`` only for ``phase="post"``.
    """

    phase: str
    session: str | None
    log: str | None
    reader: str
    placement: str
    name: str
    arguments: Any = UNKNOWN
    call_id: str | None = None
    result: Any = None
    ok: bool = True
    #: "hold": a stop decided before the call is kept for the next hook of the same call
    #: (Copilot stops from ``permissionRequest``, which runs after ``preToolUse``);
    #: "take": that hook answers with the held stop instead of judging again
    stop: str = ""


class _Extra(msgspec.Struct):
    """What the guard keeps per session besides the escalation: results seen after
    calls, a stop decided before a call for the next hook of that call, and what the
    saved monitors were fed (the settled events: how many, and how many results)."""

    seen: int = 0
    stop: str | None = None
    events: int = 0
    results: int = 0
    exact: bool = False  # a call id came back: every result is kept


def _call_ids(events: Sequence[Event]) -> list[str]:
    return [e.data.tool_call_id for e in events
            if e.type == TOOL_CALL and e.data.tool_call_id is not None]


def _repeats(read: LogRead, later: list[Event]) -> bool:
    """Whether a call id of ``later`` (the open history and the current turn) comes
    twice, or was settled before. The readers never give one id twice (their builder
    drops a call id seen before), so only a call made from the payload can."""
    seen: set[str] = set()
    for cid in _call_ids(later):
        if cid in seen or (read.conv is not None and read.conv.settled_any(cid)):
            return True
        seen.add(cid)
    return False


def _turn_bounds(events: Sequence[Event], i: int) -> tuple[int, int]:
    """[start, end) of the turn holding event ``i`` (turn_start .. turn_end included)."""
    start = i
    while start > 0 and events[start - 1].type not in (TURN_END,) and \
            events[start].type != "turn_start":
        start -= 1
    end = i + 1
    while end < len(events) and events[end - 1].type != TURN_END:
        end += 1
    return start, end


def _find(events: Sequence[Event], call: HookCall) -> int | None:
    """Index of the current call's ``tool_call`` event in the log, or None."""
    if call.placement == "absent":
        return None
    if call.placement == "id":
        for i in range(len(events) - 1, -1, -1):
            e = events[i]
            if e.type == TOOL_CALL and e.data.tool_call_id == call.call_id:
                return i
        return None
    answered = {e.data.tool_call_id for e in events if e.type == TOOL_RESULT}
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if (e.type == TOOL_CALL and e.data.tool_name == call.name
                and (e.data.tool_call_id is None or e.data.tool_call_id not in answered)
                and (call.arguments is UNKNOWN or e.data.arguments == call.arguments)):
            return i
    return None


def place_call(events: Sequence[Event], call: HookCall, base: int = 0
               ) -> tuple[list[Event], list[Event]]:
    """Split the log's events into (history, the current call's turn).

    The current turn holds the call (taken from the log when it is there, else made from
    the payload) and, after the call, its result from the payload when the log lacks it.
    Before the call, results are left out (the call has not run). ``base``: how many
    events of the log come before ``events`` (they name a call made from the payload).
    """
    events = list(events)
    i = _find(events, call)
    if i is None:
        cid = call.call_id or f"maxrepeat-hook-{base + len(events)}"
        current = [turn_start("maxrepeat-hook"), tool_call(call.name, cid, call.arguments)]
        if call.phase == "post":
            current.append(tool_result(cid, call.result, call.ok))
        current.append(turn_end("maxrepeat-hook"))
        return events, current
    start, end = _turn_bounds(events, i)
    history, turn = events[:start], events[start:end]
    found = events[i].data.tool_call_id
    if call.phase == "pre":
        # the refused call and anything after it have not happened
        turn = [e for e in turn if e.type != TOOL_RESULT or e.data.tool_call_id != found]
    elif found is not None and not any(e.type == TOOL_RESULT and e.data.tool_call_id == found
                                       for e in turn):
        at = len(turn) - 1 if turn and turn[-1].type == TURN_END else len(turn)
        turn.insert(at, tool_result(found, call.result, call.ok))
    # events after the current turn (none in practice) stay where they were
    return history, turn + events[end:]


def _settled_call(read: LogRead, call: HookCall) -> bool:
    """Whether the current call may be in the settled part of the log (not in the open
    part): the whole log is then read to find it."""
    if read.conv is None or call.placement == "absent" or _find(read.open, call) is not None:
        return False
    return read.conv.settled_any(call.call_id if call.placement == "id" else None)


def judge(
    call: HookCall,
    configs: Sequence[MaxRepeatConfig],
    *,
    policy: Policy | None = None,
    cache_dir: Path | None = None,
) -> Decision:
    """What the guard does for this hook call (see the module docstring).

    Raises `TrajectoryFormatError` when the log exists but cannot be read.
    """
    names = unique_names(configs)
    policy = policy or Policy()
    log = call.log or None
    signature = signature_of(configs, names, policy, call.reader, RESUME_FORMAT)
    # keyed by the log's path even before the file exists: Copilot CLI may run a call's
    # hooks before it creates its log, and a state saved under "no log" would be lost
    # (with it the count of results seen, which `_caught_up` waits for)
    with GuardSession(cache_dir, agent=call.reader, session=call.session, log=log,
                      signature=signature, missing_ok=True) as gs:
        snap = gs.restore()
        try:
            extra = msgspec.msgpack.decode(snap.extra, type=_Extra) if snap and snap.extra \
                else _Extra()
        except (msgspec.DecodeError, msgspec.ValidationError):
            extra = _Extra()
        seen = extra.seen
        if call.stop == "take" and extra.stop is not None:
            held = extra.stop
            extra.stop = None
            if snap is not None:
                gs.store(msgspec.structs.replace(snap, extra=msgspec.msgpack.encode(extra)))
            return Decision(Action.STOP, held, ())
        resumable = (snap is not None and bool(snap.reader)
                     and len(snap.monitors) == len(configs))
        while True:
            read = _caught_up(gs, call.reader, log, snap if resumable else None, extra, seen)
            if log is not None and _settled_call(read, call):
                read = read_whole(gs, call.reader, log)
            exact = extra.exact
            history, current = place_call(read.open, call, read.base)
            if not exact and _repeats(read, history + current):
                # a call id came back: feed everything again keeping every result, from
                # now on
                exact = True
                if not read.fresh and log is not None:
                    read = read_whole(gs, call.reader, log)
                    history, current = place_call(read.open, call, read.base)
            monitors = _monitors(configs, names, call, log, read,
                                 snap if resumable else None, exact)
            if monitors is not None:
                break
            resumable = False  # saved monitors that do not fit: read from the start
        if read.state:  # what the next call resumes from: the settled events only
            fed = [m.to_bytes() for m in monitors]
            results = (0 if read.fresh else extra.results) + read.settled_results
            extra.events, extra.results = read.base, results
        else:
            fed, extra.events, extra.results = [], 0, 0
        extra.exact = exact
        for m in monitors:
            m.extend(history)
        esc = Escalation(monitors, policy, snap.escalation if snap else None)
        if call.phase == "pre":
            decision = esc.would_exceed(current)
            if decision.action < Action.BLOCK:
                # a pre-call guard only refuses; warnings come with the result
                return Decision(Action.NONE, None, decision.results)
            if call.stop == "hold" and decision.action is Action.STOP:
                extra.stop = decision.message
            else:
                # a refused call gets no post-call hook, but the log records its refusal
                # as its result: count it, so the next hook waits for it too
                extra.seen = seen + 1
            gs.store(Snapshot(read.offset, read.lines, read.state, fed, esc.state,
                              msgspec.msgpack.encode(extra)))
            return decision
        for m in monitors:
            m.feed_all(current)
        decision = esc.decide()
        extra.seen, extra.stop = seen + 1, None
        gs.store(Snapshot(read.offset, read.lines, read.state, fed, esc.state,
                          msgspec.msgpack.encode(extra)))
        return decision


def _monitors(configs: Sequence[MaxRepeatConfig], names: Sequence[str], call: HookCall,
              log: str | None, read: LogRead, snap: Snapshot | None, exact: bool
              ) -> list[Monitor] | None:
    """The saved monitors fed this read's settled events, or new ones fed every settled
    event when the read started from the log's start; None when the saved monitors do
    not fit (the log is then read from its start)."""
    kw: dict[str, Any] = {"id": call.session, "source": log, "format": call.reader,
                          "lenient": read.lenient, "forget_answers": not exact}
    if snap is not None and not read.fresh:
        try:
            monitors = [Monitor.from_bytes(d, c, name=n, **kw)
                        for d, c, n in zip(snap.monitors, configs, names)]
        except ValueError:  # a saved state that does not fit: start again
            pass
        else:
            for m in monitors:
                m.extend(read.settled)
            return monitors
    if not read.fresh:
        return None
    # a first read of a long log: the monitors' state built from the batch grader's
    # tables (the same bytes as feeding every event, at about the cost of `grade()`)
    return [Monitor.from_events(read.settled, c, name=n, **kw) for c, n in zip(configs, names)]


def _caught_up(gs: GuardSession, reader: str, log: str | None, snap: Snapshot | None,
               extra: _Extra, seen: int) -> LogRead:
    """The log's conversion, once the log shows at least the ``seen`` results the guard
    was given by earlier post-call hooks. Copilot CLI writes its log asynchronously: a
    hook can run before the previous call's result is on disk, and the previous call
    would then pass for the current one. Waits at most `LAG_WAIT` seconds, then goes on."""
    if log is None:
        return LogRead([], [], b"", 0, 0, False, True, 0)
    deadline = time.monotonic() + LAG_WAIT
    while True:
        if snap is not None:
            read = read_log(gs, reader, log, snap.reader, snap.offset, snap.lines,
                            extra.events)
        else:
            read = read_log(gs, reader, log, None, 0, 0, 0)
        answered = (0 if read.fresh else extra.results) + read.settled_results \
            + results_in(read.open)
        if answered >= seen or time.monotonic() >= deadline:
            return read
        time.sleep(0.02)


@dataclass(frozen=True)
class HookOutput:
    """What the hook command prints and how it exits: ``stdout`` the JSON object for the
    agent (None: print nothing), ``exit_code`` 0 (the agent reads the JSON)."""

    stdout: dict[str, Any] | None
    exit_code: int = 0


def payload_str(payload: Any, key: str) -> str | None:
    """``payload[key]`` when it is a non-empty string."""
    value = payload.get(key) if isinstance(payload, dict) else None
    return value if isinstance(value, str) and value else None


def require(value: str | None, what: str) -> str:
    """``value``, or `TrajectoryFormatError` naming the missing hook-input field."""
    if value is None:
        raise TrajectoryFormatError("<hook input>", f"{what} must be a non-empty string")
    return value
