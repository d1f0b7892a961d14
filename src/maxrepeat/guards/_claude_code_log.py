"""How the Claude Code guard follows its session transcript: the `Follower` the hook engine
(`.engine`) calls for a Claude Code hook (``.claude_code`` answers the hook with it).

The transcript is converted line by line by the ``claude-code`` reader's `SessionStream`
(its state saved with the snapshot), the events fed to the monitors as they come; on a
first read they are collected and the monitors built from the batch grader's tables. The
calls the hooks reported that the transcript does not hold yet (Claude Code writes a
response once it has streamed) are fed on top from the `Backlog`, with each result as the
transcript will record it (`Learned`); a subagent's call is reported, not judged; a stop
decided at ``PostToolUseFailure`` (which Claude Code does not honour) is held for the
next hook.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Event
from ..core.monitor import Monitor
from ..readers._marks import Marks, decode_state, encode_state, mark
from ..readers.claude_code import SessionStream, record_of_line
from .claude_code_backlog import Backlog, refusal_result
from .claude_code_results import Learned, predicted_result
from .engine import Followed, Monitors, Phase, Reused, StopRule
from .policy import Action, Decision
from .session import GuardSession, Snapshot

__all__ = ["AFTER", "EVENTS", "FORMAT", "TranscriptFollower", "hook_output"]

#: The hook events the guard answers (the settings written by ``hook install``).
EVENTS: Final = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
AFTER: Final = ("PostToolUse", "PostToolUseFailure")
#: Part of the saved state's signature: changes when what the guard saves changes.
FORMAT: Final = "backlog-1"


def hook_output(event: str, decision: Decision, *, stop: str | None = None
                ) -> dict[str, Any] | None:
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


class TranscriptFollower:
    """The Claude Code side of one hook call (`engine.Follower`): ``payload`` is the hook
    input, ``event`` its hook event, ``path`` the transcript it names."""

    agent: str = "claude-code"
    reader: str = "claude-code"
    missing_ok: bool = False
    signature: tuple[str, ...] = (FORMAT,)

    def __init__(self, payload: Mapping[str, Any], event: str, path: str,
                 session: str | None) -> None:
        self.payload, self.event, self.path, self.session = payload, event, path, session
        self.log: str | None = path
        cid, name = payload.get("tool_use_id"), payload.get("tool_name")
        self.cid = cid if isinstance(cid, str) else None
        self.name = name
        subagent = isinstance(payload.get("agent_id"), str)
        self.subagent = subagent
        self.phase: Phase = "none" if subagent else "pre" if event == "PreToolUse" else "post"
        failure = event == "PostToolUseFailure"
        self.rule = StopRule(carry=not failure, hold=failure)
        self.stream = SessionStream()
        self.extra = _Extra()
        self.monitors: list[Monitor] = []
        self.saved_calls = Marks()
        #: what the hook prints (set by `settle`)
        self.output: dict[str, Any] | None = None

    @property
    def held(self) -> str | None:
        """A stop Claude Code did not honour yet (decided at ``PostToolUseFailure``)."""
        return self.extra.pending_stop

    @held.setter
    def held(self, value: str | None) -> None:
        self.extra.pending_stop = value

    def restore(self, snap: Snapshot | None, kit: Monitors) -> Snapshot | None:
        """The reader's stream, the extra state and the monitors ``snap`` saved (None
        when it does not decode or fit: the transcript is read from its start)."""
        if snap is not None:
            try:
                self.stream = decode_state(snap.reader, SessionStream)
                self.extra = decode_state(snap.extra, _Extra)
                primary = self.stream.primary
                lenient = primary is not None and self.stream.lenient(primary)
                self.monitors = kit.restored(snap.monitors, self.extra.exact, lenient)
                return snap
            except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
                pass
        self.stream, self.extra = SessionStream(), _Extra()
        return None

    def restart(self) -> None:
        """Read everything again, keeping every answer (what the guard said so far, and
        a stop it still owes, stay as they were)."""
        self.stream = SessionStream()
        self.extra.backlog.restart()
        self.extra = _Extra(pending_stop=self.extra.pending_stop, exact=True,
                            backlog=self.extra.backlog)

    def follow(self, gs: GuardSession, snap: Snapshot | None, kit: Monitors) -> Followed:
        """Feed the transcript's new lines, then what the hooks reported that it lacks."""
        extra = self.extra
        build: Callable[[list[Event], bool], list[Monitor]] | None = None
        if snap is None:
            self.monitors = kit.fresh(extra.exact)

            def build(events: list[Event], lenient: bool) -> list[Monitor]:
                return kit.built(events, extra.exact, lenient)

        offset, lines = (snap.offset, snap.lines) if snap is not None else (0, 0)
        reader, saved, self.saved_calls = _advance(gs, self.path, self.stream, self.monitors,
                                                   extra, offset, lines, build)
        on_top = self._on_top()
        if on_top:
            for m in self.monitors:
                m.extend(on_top)
        return Followed(self.monitors, None, gs.offset, gs.line_count, reader, saved, offset)

    def _on_top(self) -> list[Event]:
        """The current call (and its result) wherever the transcript stands, and what
        earlier hooks reported that it still lacks."""
        backlog, extra = self.extra.backlog, self.extra
        if self.cid is not None and not self.subagent:
            name = self.name if isinstance(self.name, str) else None
            backlog.saw(self.cid, name, self.payload.get("tool_input"))
            if self.event in AFTER:
                backlog.answer(self.cid, *predicted_result(self.payload, extra.learned))
        calls = extra.calls  # the transcript's call ids, its partial last line included
        stream = self.stream
        group = stream.groups.get(stream.primary) if stream.primary is not None else None
        return backlog.on_top(lambda c: mark(c) in calls,
                              open_turn=group is not None and group.turn is not None)

    def settle(self, decision: Decision, carried: str | None) -> bool:
        """The hook's output; a refusal as Claude Code will record it, and the backlog
        pruned of what the transcript's complete lines hold."""
        self.output = out = hook_output(self.event, decision, stop=carried)
        denied = (out or {}).get("hookSpecificOutput", {})
        backlog = self.extra.backlog
        if self.cid is not None and denied.get("permissionDecision") == "deny":
            backlog.answer(self.cid, refusal_result(str(self.name),
                                                    denied["permissionDecisionReason"]), False)
        saved_calls = self.saved_calls
        backlog.prune(lambda c: mark(c) in saved_calls)
        self.extra.calls = saved_calls
        return True

    def state(self) -> bytes:
        """The extra state, encoded with its id digests in side files."""
        return encode_state(self.extra, "extra")


def _feed(stream: SessionStream, monitors: list[Monitor], record: dict[str, Any],
          lenient: bool, extra: _Extra, collect: list[Event] | None = None,
          complete: bool = True) -> None:
    """Feed a record's events of the session to the monitors, or (``collect``) add them
    to the list the monitors are built from at the end (`Monitor.from_events`).
    ``complete``: the record is a complete line (the backlog takes note of it)."""
    key, events = stream.record(record, lenient)
    if key != stream.primary:
        return
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
                raise Reused
    if complete and events:
        extra.backlog.logged(events)
    for m in monitors:
        m.lenient = stream.lenient(key)
        if events:
            m.extend(events)


def _advance(gs: GuardSession, path: str, stream: SessionStream, monitors: list[Monitor],
             extra: _Extra, offset: int, lines: int,
             build: Callable[[list[Event], bool], list[Monitor]] | None = None,
             ) -> tuple[bytes, list[bytes], Marks]:
    """Feed the transcript's complete lines from ``offset`` on, then its unterminated last
    line when it reads as a record; what the next call starts from (reader, monitors and
    call ids after the complete lines). `Reused` when a call id comes back while the
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
    """Add the call ids of ``events`` to ``calls`` (empty: a first read); `Reused` when
    one comes twice and ``strict`` (what `_feed` checks call by call, in one pass)."""
    cids: list[str] = [e.data.tool_call_id for e in events
                       if e.type == "tool_call" and e.data and e.data.tool_call_id is not None]
    marks = list(map(mark, cids))
    if len(set(marks)) != len(marks) or (len(calls) and any(m in calls for m in marks)):
        if strict:
            raise Reused
        marks = [m for m in dict.fromkeys(marks) if m not in calls]
    calls.extend(marks)
