"""``maxrepeat hook claude-code``: the max-repeat grader as a live Claude Code guard.

Claude Code runs the hook command around each tool call with a JSON object on standard
input (``hook_event_name``, ``session_id``, ``transcript_path``, ``tool_name``,
``tool_input``, ``tool_use_id``; after the call ``tool_response``, or ``error`` for a
failed call, which goes to ``PostToolUseFailure`` instead of ``PostToolUse``). The hook
grades the session transcript so far with the ``claude-code`` reader and one `Monitor`
per grader (the figure ``maxrepeat grade`` gives that transcript), and the shared
`Escalation` policy says what to answer:

=========  ====================================================================
``WARN``   ``hookSpecificOutput.additionalContext``: the model reads it with the result
``BLOCK``  after the call ``decision: "block"`` + ``reason``; before it (``PreToolUse``)
           ``permissionDecision: "deny"`` + ``permissionDecisionReason``: it does not run
``STOP``   ``continue: false`` + ``stopReason`` (Claude Code 2.1 ignores ``continue``
           from ``PostToolUseFailure``: the hook then blocks with the reason and stops
           the agent at its next tool call, from ``PreToolUse`` or ``PostToolUse``)
=========  ====================================================================

When the hook runs after a call, the transcript does not hold its result yet, and may
not even hold the call (Claude Code writes a response once it has streamed, its tools
start before): the call and its result are taken from the hook input wherever the
transcript lacks them, as the transcript will show them (`.claude_code_backlog`,
`.claude_code_results`), so the guard speaks at the very call at which ``maxrepeat
grade`` of the finished session first fails, in every match mode, however late the
transcript is written. Before a call (``PreToolUse``) only ``name`` and ``name-args``
graders can tell whether it would extend a loop; any grader enforces a pending stop there.

Each call reads only the lines added since the previous one; state is kept per session
by `maxrepeat.guards.session` (verified against the transcript, never trusted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from ..core.config import MaxRepeatConfig, unique_names
from ..core.errors import TrajectoryFormatError
from ..core.events import Event
from ..core.monitor import Monitor
from ..readers._marks import Marks, decode_state, encode_state, mark
from ..readers.claude_code import SessionStream, record_of_line
from .claude_code_backlog import Backlog, refusal_result
from .claude_code_results import Learned, predicted_result
from .policy import Action, Decision, Escalation, Policy
from .session import GuardSession, Snapshot, signature_of

__all__ = ["HookVerdict", "guard", "hook_output", "EVENTS"]

#: The hook events the guard answers (the settings written by ``hook install``).
EVENTS: Final = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
_AFTER: Final = ("PostToolUse", "PostToolUseFailure")
#: Part of the saved state's signature: changes when what the guard saves changes.
_FORMAT: Final = "backlog-1"


class _Extra(msgspec.Struct):
    """What the Claude Code guard keeps besides monitors and reader state."""

    learned: Learned = msgspec.field(default_factory=Learned)
    pending_stop: str | None = None  # a stop Claude Code did not honour yet
    # The monitors forget a call's result once its step is final (their saved state then
    # stays the same size however long the session), which is exact while no call id
    # comes back; `calls` holds the ids fed so far, and when one does come back the
    # transcript is read again with every result kept (`exact`) from then on.
    # (`calls` also says which calls the transcript holds, for the backlog.)
    calls: Marks = msgspec.field(default_factory=Marks)
    exact: bool = False
    # The calls the hooks reported that the transcript may not hold yet
    # (`.claude_code_backlog`: Claude Code writes a response once it has streamed).
    backlog: Backlog = msgspec.field(default_factory=Backlog)


class _Reused(Exception):
    """A call id came back while the monitors forget answered ids."""


@dataclass(frozen=True)
class HookVerdict:
    """What one hook call decided, and on what: the ``event`` it answered, the policy's
    ``decision`` (with the graders' results so far), the JSON to print (``output``; None:
    print nothing), the byte offset it started reading at (0: a full read) and whether a
    saved state was used."""

    event: str
    decision: Decision
    output: dict[str, Any] | None
    read_from: int
    cache_used: bool

    @property
    def results(self) -> tuple[Any, ...]:
        """The graders' results for the transcript so far (with the current result)."""
        return self.decision.results


def hook_output(event: str, decision: Decision, *, stop: str | None = None) -> dict[str, Any] | None:
    """The JSON Claude Code reads from a hook for ``event`` (None: nothing to say).
    ``stop``: a stop decided earlier that this hook must carry out.

    >>> from maxrepeat.guards.policy import Decision, Action
    >>> hook_output("PostToolUse", Decision(Action.WARN, "careful", ()))
    {'hookSpecificOutput': {'hookEventName': 'PostToolUse', 'additionalContext': 'careful'}}
    >>> hook_output("PreToolUse", Decision(Action.BLOCK, "no", ()))["hookSpecificOutput"]
    {'hookEventName': 'PreToolUse', 'permissionDecision': 'deny', 'permissionDecisionReason': 'no'}
    """
    action, message = decision.action, decision.message
    if stop is not None and action < Action.STOP:
        action, message = Action.STOP, stop
    if action is Action.NONE or message is None:
        return None
    out: dict[str, Any] = {}
    if action is Action.STOP:
        out["continue"] = False
        out["stopReason"] = message
    if event == "PreToolUse":
        if action >= Action.BLOCK:
            out["hookSpecificOutput"] = {"hookEventName": event, "permissionDecision": "deny",
                                         "permissionDecisionReason": message}
        return out or None
    if action is Action.WARN:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": message}
    else:
        out["decision"] = "block"
        out["reason"] = message
    return out


def _feed(stream: SessionStream, monitors: list[Monitor], record: dict[str, Any],
          lenient: bool, extra: _Extra, collect: list[Event] | None = None,
          complete: bool = True) -> None:
    """Feed a record's events of the session to the monitors, or (``collect``) add them
    to the list the monitors are built from at the end (`Monitor.from_events`).
    ``complete``: the record is a complete line (the backlog takes note of it)."""
    key, events = stream.record(record, lenient)
    if key == stream.primary:
        if collect is not None:
            collect.extend(events)  # call ids are checked once, at the end (`_collected`)
            return
        for e in events:
            cid = e.data.tool_call_id if e.type == "tool_call" and e.data else None
            if cid is not None:
                seen = mark(cid)
                if seen not in extra.calls:
                    extra.calls.add(seen)
                elif not extra.exact:
                    raise _Reused
        if complete and events:
            extra.backlog.logged(events)
        for m in monitors:
            m.lenient = stream.lenient(key)
            if events:
                m.extend(events)


def guard(
    payload: Mapping[str, Any],
    configs: Sequence[MaxRepeatConfig],
    *,
    policy: Policy | None = None,
    cache_dir: Path | None = None,
) -> HookVerdict:
    """Answer one Claude Code hook call: grade the transcript it names (reading only
    what is new), add the current call's result from the payload, apply the policy.

    Raises `TrajectoryFormatError` when the payload names no transcript, the transcript
    cannot be read or a complete line of it is not JSON (the saved state stays as it was).
    """
    event = payload.get("hook_event_name")
    event = event if isinstance(event, str) and event in EVENTS else "PostToolUse"
    session = payload.get("session_id")
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise TrajectoryFormatError("<hook input>", "transcript_path must be a non-empty string")
    session_id = session if isinstance(session, str) and session else None
    policy = policy or Policy()
    names = unique_names(configs)

    def monitor(c: MaxRepeatConfig, n: str, exact: bool, data: bytes | None = None,
                lenient: bool = False, events: list[Event] | None = None) -> Monitor:
        kw: dict[str, Any] = {"name": n, "id": session_id, "source": path,
                              "format": "claude-code", "lenient": lenient,
                              "forget_answers": not exact}
        if events is not None:
            return Monitor.from_events(events, c, **kw)
        return Monitor.from_bytes(data, c, **kw) if data is not None else Monitor(c, **kw)

    def built(events: list[Event], lenient: bool) -> list[Monitor]:
        """Fresh monitors that have taken ``events`` (a first read, built from the
        batch tables instead of fed event by event)."""
        return [monitor(c, n, extra.exact, lenient=lenient, events=events)
                for c, n in zip(configs, names)]

    with GuardSession(cache_dir, agent="claude-code", session=session_id, log=path,
                      signature=signature_of(configs, names, policy, _FORMAT)) as gs:
        snap = gs.restore()
        monitors: list[Monitor] = []
        stream = SessionStream()
        extra = _Extra()
        esc_state = None
        if snap is not None:
            try:
                stream = decode_state(snap.reader, SessionStream)
                extra = decode_state(snap.extra, _Extra)
                primary = stream.primary
                lenient = primary is not None and stream.lenient(primary)
                monitors = [monitor(c, n, extra.exact, d, lenient)
                            for d, c, n in zip(snap.monitors, configs, names)]
                esc_state = snap.escalation
            except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
                snap = None
        if snap is None or len(monitors) != len(configs):
            snap, stream, extra, esc_state = None, SessionStream(), _Extra(), None
            monitors = [monitor(c, n, False) for c, n in zip(configs, names)]
        read_from = snap.offset if snap is not None else 0
        try:
            saved = _advance(gs, path, stream, monitors, extra, read_from,
                             snap.lines if snap is not None else 0,
                             built if snap is None else None)
        except _Reused:
            # a call id came back: read everything again, keeping every answer (what
            # the guard said so far, and a stop it still owes, stay as they were)
            snap, stream = None, SessionStream()
            extra.backlog.restart()
            extra = _Extra(pending_stop=extra.pending_stop, exact=True, backlog=extra.backlog)
            monitors = [monitor(c, n, True) for c, n in zip(configs, names)]
            read_from = 0
            saved = _advance(gs, path, stream, monitors, extra, 0, 0, built)
        saved_reader, saved_monitors, saved_calls = saved
        cid = payload.get("tool_use_id")
        name = payload.get("tool_name")
        subagent = isinstance(payload.get("agent_id"), str)
        backlog = extra.backlog
        if isinstance(cid, str) and not subagent:
            # the current call (and its result), wherever the transcript stands
            backlog.saw(cid, name if isinstance(name, str) else None, payload.get("tool_input"))
            if event in _AFTER:
                backlog.answer(cid, *predicted_result(payload, extra.learned))
        calls = extra.calls  # the transcript's call ids, its partial last line included
        group = stream.groups.get(stream.primary) if stream.primary is not None else None
        on_top = backlog.on_top(lambda c: mark(c) in calls,
                                open_turn=group is not None and group.turn is not None)
        if on_top:
            for m in monitors:
                m.extend(on_top)
        esc = Escalation(monitors, policy, esc_state)
        if subagent:
            decision = Decision(Action.NONE, None, tuple(m.result() for m in monitors))
        elif event == "PreToolUse":
            decision = esc.decide(at_least=Action.BLOCK, refused=True,
                                  judged=[not m.config.observes for m in monitors])
        else:
            decision = esc.decide()
        stop = extra.pending_stop
        if stop is not None and event != "PostToolUseFailure":
            extra.pending_stop = None  # carried out now
        else:
            stop = None
        if decision.action is Action.STOP and event == "PostToolUseFailure":
            extra.pending_stop = decision.message
        out = hook_output(event, decision, stop=stop)
        denied = (out or {}).get("hookSpecificOutput", {})
        if isinstance(cid, str) and denied.get("permissionDecision") == "deny":
            backlog.answer(cid, refusal_result(str(name), denied["permissionDecisionReason"]),
                           False)
        backlog.prune(lambda c: mark(c) in saved_calls)
        extra.calls = saved_calls
        gs.store(Snapshot(gs.offset, gs.line_count, saved_reader, saved_monitors, esc.state,
                          encode_state(extra, "extra")))
    return HookVerdict(event, decision, out, read_from, read_from > 0)


def _advance(gs: GuardSession, path: str, stream: SessionStream, monitors: list[Monitor],
             extra: _Extra, offset: int, lines: int,
             build: Callable[[list[Event], bool], list[Monitor]] | None = None,
             ) -> tuple[bytes, list[bytes], Marks]:
    """Feed the transcript's complete lines from ``offset`` on, then its unterminated last
    line when it reads as a record; what the next call starts from (reader, monitors and
    call ids after the complete lines). `_Reused` when a call id comes back while the
    monitors forget answers. ``build``: the monitors are fresh; the complete lines' events
    are collected and ``build(events, lenient)`` replaces them (a first read costs about
    what ``maxrepeat grade`` of the transcript costs, not the monitors' per-event work)."""
    collect: list[Event] | None = [] if build is not None else None
    for number, raw in gs.lines(offset, lines):
        if raw.strip():
            record, lenient = record_of_line(raw, path, number)
            extra.learned.learn(record)
            _feed(stream, monitors, record, lenient, extra, collect)
    if build is not None and collect is not None:
        _collected(collect, extra.calls, strict=not extra.exact)
        extra.backlog.logged(collect)
        primary = stream.primary
        monitors[:] = build(collect, primary is not None and stream.lenient(primary))
    # What the next call starts from: the complete lines only (the partial last line
    # and the current result are read from the transcript once it holds them).
    saved = (encode_state(stream, "reader"), [m.to_bytes() for m in monitors],
             extra.calls.copy())
    if gs.partial.strip():
        try:
            record, lenient = record_of_line(gs.partial, path, gs.line_count + 1)
        except TrajectoryFormatError:
            pass  # still being written: the next call reads it whole
        else:
            _feed(stream, monitors, record, lenient, extra, complete=False)
    return saved


def _collected(events: list[Event], calls: Marks, strict: bool = True) -> None:
    """Add the call ids of ``events`` to ``calls`` (empty: a first read); `_Reused` when
    one comes twice and ``strict`` (what `_feed` checks call by call, in one pass)."""
    cids: list[str] = [e.data.tool_call_id for e in events
                       if e.type == "tool_call" and e.data and e.data.tool_call_id is not None]
    marks = list(map(mark, cids))
    if len(set(marks)) != len(marks) or (len(calls) and any(m in calls for m in marks)):
        if strict:
            raise _Reused
        marks = [m for m in dict.fromkeys(marks) if m not in calls]
    calls.extend(marks)
