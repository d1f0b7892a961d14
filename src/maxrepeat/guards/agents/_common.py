"""What several agent modules of this package do alike, written once.

* `event_of`: the event of a hook input that names it in ``hook_event_name``;
* `judging`: an agent's `Guard` from its ``hook_call`` and ``render`` (the call's log
  followed by the agent's resumable reader, or, given ``database``, read whole from the
  agent's database by `DatabaseFollower`);
* `plugin_call`: the `HookCall` of the payload the plug-ins and extensions maxrepeat
  writes send (OpenClaw, OpenCode, Pi: one shape, see their modules), and
  `logged_result`, a ``tool_response`` with ``content`` / ``isError`` / ``details`` read as
  the agent's reader reads a logged result;
* `block_unless_warned`: the answer of a plug-in that adds a warning to the result under
  one key, and otherwise blocks (``continue: false`` besides for a stop);
* `trust_level`: the level of the longest rule of a trusted-folders file (Gemini CLI,
  Qwen Code) covering a folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent_trust import read_settings
from ..agentlog import LogFollower, judged
from ..engine import Followed, Monitors, judge_call
from ..hookcall import HookCall, HookOutput, hook_event, hook_output, payload_str, require
from ..logread import LogRead
from ..placement import place_call
from ..policy import Action, Decision, Policy
from ..session import GuardSession, Snapshot

if TYPE_CHECKING:
    from ...core.config import MaxRepeatConfig
    from ...core.events import Trajectory
    from . import Guard

__all__ = ["DatabaseFollower", "block_unless_warned", "event_of", "judging",
           "logged_result", "plugin_call", "trust_level"]

#: a reader's one session of a database: (database, session id) -> its trajectory
SessionReader = Callable[[str, str], "Trajectory"]


def event_of(payload: Mapping[str, Any]) -> str:
    """The hook input's event (``hook_event_name``; empty when it names none)."""
    event = payload.get("hook_event_name")
    return event if isinstance(event, str) else ""


class DatabaseFollower(LogFollower):
    """`LogFollower` for a log that is a database: the session's rows read whole at every
    call by ``read_session`` (nothing to resume; the saved snapshot keeps the escalation
    and claims nothing about the file's bytes), the current call placed by its id."""

    def __init__(self, call: HookCall, read_session: SessionReader) -> None:
        super().__init__(call)
        self.read_session = read_session

    def follow(self, gs: GuardSession, snap: Snapshot | None, kit: Monitors) -> Followed:
        events: list[Any] = []
        if self.log is not None and self.session and not gs.missing:
            events = list(self.read_session(self.log, self.session).events)
        read = LogRead([], events, b"", 0, 0, False, True, 0)
        history, current = place_call(events, self.call, 0, ())
        monitors = kit.built([], True, False)
        return self._followed(read, monitors, history, current, True)


def judging(hook_call: Callable[[Mapping[str, Any]], HookCall],
            render: Callable[[HookCall, Decision], HookOutput],
            database: SessionReader | None = None) -> Guard:
    """The guard of an agent: its payload made a call by ``hook_call``, judged, the
    decision told by ``render``; the history from the call's log, or, with ``database``,
    from the session's rows of the agent's database (`DatabaseFollower`)."""

    def guard(payload: Mapping[str, Any], configs: Sequence[MaxRepeatConfig], *,
              policy: Policy | None = None, cache_dir: Path | None = None
              ) -> tuple[HookOutput, Decision]:
        call = hook_call(payload)
        if database is None:
            return judged(call, configs, partial(render, call), policy=policy,
                          cache_dir=cache_dir)
        decision = judge_call(DatabaseFollower(call, database), configs, policy=policy,
                              cache_dir=cache_dir).decision
        return render(call, decision), decision

    return guard


def logged_result(read: Callable[[Any, Any, Any], tuple[Any, bool]],
                  response: Any) -> tuple[Any, bool]:
    """A ``tool_response`` of ``content``, ``isError`` and ``details`` as ``read`` (the
    reader's) reads a logged result, and whether it is a success; anything else as it is,
    a success."""
    if not isinstance(response, dict):
        return response, True
    return read(*(response.get(k) for k in ("content", "isError", "details")))


def plugin_call(payload: Mapping[str, Any], events: tuple[str, str], reader: str,
                result_of: Callable[[Any], tuple[Any, bool]],
                session_required: bool = True) -> HookCall:
    """The payload of a plug-in maxrepeat writes (``hook_event_name`` one of ``events``,
    the first before the call; ``session_id``, ``transcript_path``, ``tool_name``,
    ``tool_call_id``, ``tool_input``, ``tool_response``) as the guard's `HookCall`, the
    call placed by its id, the result from ``result_of(tool_response)``
    (`TrajectoryFormatError` when a field the guard needs is missing)."""
    event = hook_event(payload, events)
    data = dict(payload)
    result, ok = result_of(payload.get("tool_response"))
    session = payload_str(data, "session_id")
    return HookCall(
        phase="pre" if event == events[0] else "post",
        session=require(session, "session_id") if session_required else session,
        log=payload_str(data, "transcript_path"),
        reader=reader,
        placement="id",
        name=require(payload_str(data, "tool_name"), "tool_name"),
        arguments=payload.get("tool_input"),
        call_id=payload_str(data, "tool_call_id"),
        result=result,
        ok=ok,
    )


def block_unless_warned(call: HookCall, decision: Decision, warn_key: str) -> HookOutput:
    """A plug-in's instructions: after the call, a warning as ``{warn_key: MESSAGE}``;
    otherwise ``{"decision": "block", "reason": MESSAGE}``, with ``"continue": false``
    for a stop."""

    def write(msg: str) -> dict[str, Any]:
        if decision.action is Action.WARN and call.phase == "post":
            return {warn_key: msg}
        stop = {"continue": False} if decision.action is Action.STOP else {}
        return {"decision": "block", "reason": msg, **stop}

    return hook_output(decision, write)


def trust_level(rules_file: Path, folder: Path) -> str:
    """The level (``TRUST_FOLDER``, ``TRUST_PARENT``, ...) of the longest rule of a
    trusted-folders file that covers ``folder`` (a ``TRUST_PARENT`` rule covers its
    parent's tree); empty when none does."""
    _, rules = read_settings(rules_file)
    best, level = -1, ""
    for rule, value in (rules.items() if isinstance(rules, dict) else ()):
        base = Path(rule).parent if value == "TRUST_PARENT" else Path(rule)
        if folder.resolve().is_relative_to(base.resolve()) and len(rule) > best:
            best, level = len(rule), str(value)
    return level
