"""The live guard for agents whose hook input names the call but not the history.

Codex CLI, Gemini CLI and Copilot CLI run a hook command before and after each tool call
with the call on standard input (tool name, arguments, for the post-call hook its result),
but without the calls before it. The history is in the agent's own session log, which
each agent writes as it goes: the guard reads that log with the agent's reader (the same
conversion ``maxrepeat grade`` applies to the finished log), adds the current call where
the log does not have it yet, and asks the shared escalation policy
(`maxrepeat.guards.policy`) what to do.

Where the current call stands in the log when the hook runs differs per agent (measured
with each agent's release, see ``docs/design/agent-guards.md``; `.placement` places it):

* ``"id"``: the call is already written, with the id the payload names (Codex CLI);
* ``"unanswered"``: the call is already written, but the payload names no id: it is the
  latest call of that name (and arguments) without a result (Copilot CLI);
* ``"absent"``: the call is not written yet (Gemini CLI writes a model message's calls
  once they have all finished). The calls of the same message judged by earlier hooks
  are not written either (parallel calls of one response): the guard keeps them in the
  session state (`_Pending`) and puts the current call in their step, until the log
  shows more results than when they were kept (the message was written).

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

The sequence is the hook engine's (`maxrepeat.guards.engine`); `LogFollower` is these
agents' part of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from ..core.config import MaxRepeatConfig
from ..core.events import Event
from ..core.monitor import Monitor
from .engine import Followed, Monitors, Phase, Reused, StopRule, judge_call
from .hookcall import UNKNOWN, HookCall, HookOutput
from .logread import LogRead, read_log, read_whole, results_in
from .placement import place_call, repeats, settled_call
from .policy import Action, Decision, Policy
from .session import GuardSession, Snapshot

__all__ = ["LogFollower", "judge", "judged"]

#: Longest wait (seconds) for a log that lags behind the hooks (see `_caught_up`).
LAG_WAIT: Final = 2.0
#: Part of the saved state's signature: changes when what the guard saves changes.
RESUME_FORMAT: Final = "resume-1"


class _Pending(msgspec.Struct, array_like=True):
    """A call of the current model response judged by an earlier hook but not in the
    log yet (``"absent"`` placement): its name, arguments and result."""

    name: str
    arguments: Any
    result: Any
    ok: bool


class _Extra(msgspec.Struct):
    """What the guard keeps per session besides the escalation: results seen after
    calls, a stop decided before a call for the next hook of that call, what the saved
    monitors were fed (the settled events: how many, and how many results), and the
    calls of the current response not written yet with how many results the log showed
    when they were kept."""

    seen: int = 0
    stop: str | None = None
    events: int = 0
    results: int = 0
    exact: bool = False  # a call id came back: every result is kept
    pending: list[_Pending] = msgspec.field(default_factory=list)
    pending_at: int = 0


def judge(call: HookCall, configs: Sequence[MaxRepeatConfig], *, policy: Policy | None = None,
          cache_dir: Path | None = None) -> Decision:
    """What the guard does for this hook call (see the module docstring). Raises
    `TrajectoryFormatError` when the log exists but cannot be read."""
    return judge_call(LogFollower(call), configs, policy=policy, cache_dir=cache_dir).decision


def judged(call: HookCall, configs: Sequence[MaxRepeatConfig],
           render: Callable[[Decision], HookOutput], *, policy: Policy | None = None,
           cache_dir: Path | None = None) -> tuple[HookOutput, Decision]:
    """An agent guard's answer to one hook call: what ``render`` prints for the decision
    `judge` makes, and that decision."""
    decision = judge(call, configs, policy=policy, cache_dir=cache_dir)
    return render(decision), decision


class LogFollower:
    """The part of one hook call (`engine.Follower`) of an agent whose hook input names
    the call but not the history: its log read by the agent's resumable reader
    (`.logread`), the current call placed in it (`.placement`)."""

    missing_ok: bool = True

    def __init__(self, call: HookCall) -> None:
        self.call = call
        self.agent = self.reader = call.reader
        self.session = call.session
        # keyed by the log's path even before the file exists: Copilot CLI may run a
        # call's hooks before it creates its log, and a state saved under "no log" would
        # be lost (with it the count of results seen, which `_caught_up` waits for)
        self.log = call.log or None
        self.signature: tuple[str, ...] = (call.reader, RESUME_FORMAT)
        self.phase: Phase = "pre" if call.phase == "pre" else "post"
        self.rule = StopRule(take=call.stop == "take", hold=call.stop == "hold",
                             drop=call.phase != "pre")
        self.absent = call.placement == "absent"
        self.extra = _Extra()
        self.resumable = False
        self.again = False  # a call id came back: the whole log is read again
        self.answered = 0  # how many results the log shows
        self.pending: list[_Pending] = []  # the calls of this response the log lacks

    @property
    def held(self) -> str | None:
        """A stop decided before the call, for the next hook of that call."""
        return self.extra.stop

    @held.setter
    def held(self, value: str | None) -> None:
        self.extra.stop = value

    def restore(self, snap: Snapshot | None, kit: Monitors) -> Snapshot | None:
        """The extra state ``snap`` saved; ``snap`` itself (its reader state and monitors
        are used when they fit, its escalation in any case)."""
        try:
            self.extra = msgspec.msgpack.decode(snap.extra, type=_Extra) \
                if snap and snap.extra else _Extra()
        except (msgspec.DecodeError, msgspec.ValidationError):
            self.extra = _Extra()
        self.resumable = (snap is not None and bool(snap.reader)
                          and len(snap.monitors) == len(kit.configs))
        return snap

    def restart(self) -> None:
        """A call id came back: the whole log is read again, every result kept."""
        self.again = True

    def follow(self, gs: GuardSession, snap: Snapshot | None, kit: Monitors) -> Followed:
        """The log converted from where ``snap`` stopped (from its start when resuming
        is not certain), the monitors fed its settled events and the history before the
        current call; the current call's turn is left to judge."""
        if self.again:
            assert self.log is not None
            read = read_whole(gs, self.reader, self.log)
            history, current = place_call(read.open, self.call, read.base, self.pending)
            monitors = self._monitors(kit, read, None, True)
            assert monitors is not None
            return self._followed(read, monitors, history, current, True)
        resumable = self.resumable and snap is not None
        while True:
            read, history, current = self._placed(gs, snap if resumable else None)
            exact = self.extra.exact
            if not exact and repeats(read, history + current):
                # a call id came back: feed everything again keeping every result, from
                # now on
                if not read.fresh:
                    raise Reused
                exact = True
            monitors = self._monitors(kit, read, snap if resumable else None, exact)
            if monitors is not None:
                return self._followed(read, monitors, history, current, exact)
            resumable = False  # saved monitors that do not fit: read from the start

    def _placed(self, gs: GuardSession, snap: Snapshot | None
                ) -> tuple[LogRead, list[Event], list[Event]]:
        """The log's conversion once it caught up with the hooks, split into the history
        and the current call's turn."""
        extra = self.extra
        # the results of calls not written yet are not waited for
        target = extra.seen - len(extra.pending) if self.absent else extra.seen
        read = _caught_up(gs, self.reader, self.log, snap, extra, target)
        if self.log is not None and settled_call(read, self.call):
            read = read_whole(gs, self.reader, self.log)
        self.answered = _answered(read, extra)
        if self.absent and extra.pending and self.answered > extra.pending_at:
            extra.pending = []  # the response they belong to has been written
        self.pending = extra.pending if self.absent else []
        history, current = place_call(read.open, self.call, read.base, self.pending)
        return read, history, current

    def _monitors(self, kit: Monitors, read: LogRead, snap: Snapshot | None, exact: bool
                  ) -> list[Monitor] | None:
        """The saved monitors fed this read's settled events, or new ones built from
        every settled event when the read started from the log's start; None when the
        saved monitors do not fit (the log is then read from its start)."""
        if snap is not None and not read.fresh:
            try:
                monitors = kit.restored(snap.monitors, exact, read.lenient)
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
        return kit.built(read.settled, exact, read.lenient)

    def _followed(self, read: LogRead, monitors: list[Monitor], history: list[Event],
                  current: list[Event], exact: bool) -> Followed:
        """What the next call resumes from (the settled events only), then the open
        history fed on top."""
        extra = self.extra
        if read.state:
            fed = [m.to_bytes() for m in monitors]
            results = (0 if read.fresh else extra.results) + read.settled_results
            extra.events, extra.results = read.base, results
        else:
            fed, extra.events, extra.results = [], 0, 0
        extra.exact = exact
        for m in monitors:
            m.extend(history)
        return Followed(monitors, current, read.offset, read.lines, read.state, fed,
                        0 if read.fresh else read.offset)

    def settle(self, decision: Decision, carried: str | None) -> bool:
        """Count the result the call gets (or the refusal the log records for it) and
        keep a call the log does not show yet; False for a call let through before it
        runs (nothing to save)."""
        call, extra = self.call, self.extra
        if call.phase == "pre":
            if decision.action < Action.BLOCK:
                return False
            if self.rule.hold and decision.action is Action.STOP:
                return True  # held for the next hook of this call
            # a refused call gets no post-call hook, but the log records its refusal as
            # its result: count it, so the next hook waits for it too
            result, ok = decision.message, False
        else:
            result, ok = call.result, call.ok
        extra.seen += 1
        if self.absent:
            _keep(extra, call, result, ok, self.answered)
        return True

    def state(self) -> bytes:
        """The extra state, encoded."""
        return msgspec.msgpack.encode(self.extra)


def _answered(read: LogRead, extra: _Extra) -> int:
    """How many results the log shows (settled before, settled now, open)."""
    return (0 if read.fresh else extra.results) + read.settled_results + results_in(read.open)


def _keep(extra: _Extra, call: HookCall, result: Any, ok: bool, answered: int) -> None:
    """Remember a call the log does not show yet, for the next hooks of its response."""
    args = None if call.arguments is UNKNOWN else call.arguments
    extra.pending.append(_Pending(call.name, args, result, ok))
    extra.pending_at = answered


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
        if _answered(read, extra) >= seen or time.monotonic() >= deadline:
            return read
        time.sleep(0.02)
