"""The one hook engine: what every agent's hook does with one tool call, whatever the agent.

An agent runs its hook as a new process before and after each tool call. The guard of
every agent CLI (Claude Code, Codex CLI, Gemini CLI, Copilot CLI) answers it with the same
sequence, held here once (`judge_call`):

1. open the session's `GuardSession` (its lock, its saved `Snapshot`, verified against the
   log) under a signature of the graders, the policy and the agent's own format;
2. restore the snapshot and the agent's own state (`Follower.restore`);
3. answer with a stop an earlier hook held for this one, without judging (`StopRule.take`);
4. follow the log from where the previous call stopped, or from its start when resuming is
   not certain, and put the current call where the log does not hold it yet
   (`Follower.follow`, with the monitors made by `Monitors`: restored from the snapshot,
   or built from the batch grader's tables on a fresh read); when a call id comes back
   while the monitors forget answered ids (`Reused`), follow again from the log's start,
   keeping every answer from then on (``exact``);
5. run the `Escalation`: before a call it only refuses, after it decides (`decide`);
6. carry a held stop to the hook that must carry it out (`carry_stop`, by the hook's
   `StopRule`);
7. let the agent take note of the decision (`Follower.settle`) and store the snapshot.

What differs per agent is the `Follower`: how its log is read and where the current call
goes (Claude Code's transcript stream and backlog: `._claude_code_log`; the resumable
readers and `.placement` of the log-reading agents: `.agentlog`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec

from ..core.config import MaxRepeatConfig, unique_names
from ..core.events import Event
from ..core.monitor import Monitor
from .policy import Action, Decision, Escalation, EscalationState, Policy
from .session import GuardSession, Snapshot, signature_of

__all__ = [
    "Followed",
    "Follower",
    "Judged",
    "Monitors",
    "Reused",
    "StopRule",
    "carry_stop",
    "decide",
    "judge_call",
]

#: What the hook judges: the call before it runs, after it, or nothing (only the
#: graders' results are reported: a subagent's call).
Phase = Literal["pre", "post", "none"]


class Reused(Exception):
    """A call id came back while the monitors forget answered ids: the log must be
    followed again from its start, keeping every answer (``exact``)."""


class Monitors:
    """Makes the session's monitors, one per grader config, all alike: fresh, restored
    from a snapshot's bytes, or built from the events of a fresh read."""

    def __init__(self, configs: Sequence[MaxRepeatConfig], names: Sequence[str], *,
                 session: str | None, log: str | None, reader: str) -> None:
        self.configs, self.names = list(configs), list(names)
        self._kw: dict[str, Any] = {"id": session, "source": log, "format": reader}

    def _args(self, exact: bool, lenient: bool) -> dict[str, Any]:
        return {**self._kw, "lenient": lenient, "forget_answers": not exact}

    def fresh(self, exact: bool, lenient: bool = False) -> list[Monitor]:
        """Monitors that have seen nothing."""
        kw = self._args(exact, lenient)
        return [Monitor(c, name=n, **kw) for c, n in zip(self.configs, self.names, strict=True)]

    def restored(self, data: Sequence[bytes], exact: bool, lenient: bool) -> list[Monitor]:
        """The monitors a snapshot saved; `ValueError` when they do not fit the configs."""
        if len(data) != len(self.configs):
            raise ValueError("a saved state of other graders")
        kw = self._args(exact, lenient)
        return [Monitor.from_bytes(d, c, name=n, **kw)
                for d, c, n in zip(data, self.configs, self.names, strict=True)]

    def built(self, events: Sequence[Event], exact: bool, lenient: bool) -> list[Monitor]:
        """Fresh monitors that have taken ``events``, built from the batch grader's tables
        (the same state as feeding every event, at about the cost of ``maxrepeat grade``)."""
        kw = self._args(exact, lenient)
        return [Monitor.from_events(events, c, name=n, **kw)
                for c, n in zip(self.configs, self.names, strict=True)]


@dataclass
class Followed:
    """What a `Follower` made of the log for one hook call: ``monitors`` fed the log (and
    what the hooks reported that it lacks); ``current``: the current call's events when
    they are not fed yet (judged as if fed before the call, fed after it; None: fed with
    the log already); what the next call resumes from (``offset`` / ``lines`` in the log,
    the ``reader`` state, the ``saved`` monitors); ``read_from``: the byte offset reading
    started at (0: the log's start)."""

    monitors: list[Monitor]
    current: list[Event] | None
    offset: int
    lines: int
    reader: bytes
    saved: list[bytes]
    read_from: int


@dataclass(frozen=True)
class StopRule:
    """What one hook does about a stop (`Action.STOP`) a hook cannot carry out itself.

    ``take``: answer with a stop an earlier hook held, without judging (Copilot CLI's
    ``permissionRequest``); ``carry``: carry out a held stop with this hook's answer
    (Claude Code: any hook but ``PostToolUseFailure``); ``hold``: a stop decided here is
    held for a later hook (Claude Code's ``PostToolUseFailure``, Copilot CLI's
    ``preToolUse``); ``drop``: forget a held stop (the call it was held for has run)."""

    take: bool = False
    carry: bool = False
    hold: bool = False
    drop: bool = False


class Follower(Protocol):
    """One agent's part of a hook call: the session it belongs to, how its log is
    followed, where the current call goes, and what it keeps besides the monitors."""

    #: the state's key and its signature's own part (the agent's format)
    agent: str
    session: str | None
    log: str | None
    missing_ok: bool
    signature: tuple[str, ...]
    reader: str
    phase: Phase
    rule: StopRule
    #: a stop held for a later hook
    held: str | None

    def restore(self, snap: Snapshot | None, kit: Monitors) -> Snapshot | None:
        """Take the agent's own state from ``snap``; the snapshot to resume from (None:
        follow the log from its start)."""

    def follow(self, gs: GuardSession, snap: Snapshot | None, kit: Monitors) -> Followed:
        """Read the log from ``snap`` on (None: from its start) and place the current
        call; `Reused` when a call id comes back while answers are forgotten."""

    def restart(self) -> None:
        """A call id came back: the next `follow` reads the log from its start and keeps
        every answer from now on."""

    def settle(self, decision: Decision, carried: str | None) -> bool:
        """Take note of the decision (and of a held stop carried out); whether to store
        the snapshot."""

    def state(self) -> bytes:
        """The agent's own state, encoded for the snapshot."""


@dataclass(frozen=True)
class Judged:
    """What one hook call decided: the ``decision``, a held stop it carries out
    (``carried``) and the byte offset it started reading at (0: a full read)."""

    decision: Decision
    carried: str | None
    read_from: int


def decide(esc: Escalation, phase: Phase, current: list[Event] | None) -> Decision:
    """The escalation's decision for one hook: before a call it only refuses (a call
    already fed is judged on the graders that need no result; ``current`` as if fed),
    after it ``current`` is fed and the policy decides; ``none``: the results only."""
    if phase == "none":
        return Decision(Action.NONE, None, tuple(m.result() for m in esc.monitors))
    if phase == "pre":
        if current is None:
            return esc.decide(at_least=Action.BLOCK, refused=True,
                              judged=[not m.config.observes for m in esc.monitors])
        decision = esc.would_exceed(current)
        if decision.action < Action.BLOCK:
            # a pre-call guard only refuses; warnings come with the result
            return Decision(Action.NONE, None, decision.results)
        return decision
    if current is not None:
        for m in esc.monitors:
            m.feed_all(current)
    return esc.decide()


def carry_stop(rule: StopRule, held: str | None, decision: Decision
               ) -> tuple[str | None, str | None]:
    """(the held stop this hook carries out, the stop held after it)."""
    carried = None
    if held is not None and rule.carry:
        carried, held = held, None
    elif rule.drop:
        held = None
    if rule.hold and decision.action is Action.STOP:
        held = decision.message
    return carried, held


def _followed(gs: GuardSession, f: Follower, snap: Snapshot | None, kit: Monitors
              ) -> Followed:
    try:
        return f.follow(gs, snap, kit)
    except Reused:
        f.restart()
        return f.follow(gs, None, kit)


def _taken(gs: GuardSession, f: Follower, snap: Snapshot | None) -> Judged:
    """The answer of a hook that takes a held stop: the stop, nothing judged."""
    decision = Decision(Action.STOP, f.held, ())
    f.held = None
    if snap is not None:
        gs.store(msgspec.structs.replace(snap, extra=f.state()))
    return Judged(decision, None, 0)


def judge_call(f: Follower, configs: Sequence[MaxRepeatConfig], *,
               policy: Policy | None = None, cache_dir: Path | None = None) -> Judged:
    """Answer one hook call of the agent ``f`` stands for (the module docstring's
    sequence). Raises `TrajectoryFormatError` when the log cannot be read (the saved
    state then stays as it was)."""
    policy = policy or Policy()
    names = unique_names(configs)
    kit = Monitors(configs, names, session=f.session, log=f.log, reader=f.reader)
    with GuardSession(cache_dir, agent=f.agent, session=f.session, log=f.log,
                      signature=signature_of(configs, names, policy, *f.signature),
                      missing_ok=f.missing_ok) as gs:
        snap = f.restore(gs.restore(), kit)
        if f.rule.take and f.held is not None:
            return _taken(gs, f, snap)
        fed = _followed(gs, f, snap, kit)
        state: EscalationState | None = snap.escalation if snap is not None else None
        esc = Escalation(fed.monitors, policy, state)
        decision = decide(esc, f.phase, fed.current)
        carried, f.held = carry_stop(f.rule, f.held, decision)
        if f.settle(decision, carried):
            gs.store(Snapshot(fed.offset, fed.lines, fed.reader, fed.saved, esc.state,
                              f.state()))
    return Judged(decision, carried, fed.read_from)
