"""One hook call of an agent whose hook input names the call but not the history (Codex
CLI, Gemini CLI, Copilot CLI): the call in the log's terms (`HookCall`), read from the
hook input with `hook_event`, `payload_str` / `require`, and what the hook prints
(`HookOutput`, by `hook_output`). The
guard that judges it is `.agentlog`; each agent's module in `maxrepeat.guards.agents`
translates its own input and output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from .policy import Action, Decision

__all__ = ["HookCall", "HookOutput", "UNKNOWN", "PLACEMENTS", "payload_str", "require",
           "hook_event", "hook_output"]

#: How the current call stands in the log when the hook runs (see `.agentlog`).
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


def hook_event(payload: Mapping[str, Any], events: Sequence[str]) -> str:
    """The hook input's ``hook_event_name`` when it is one of the ``events`` the guard
    handles; `TrajectoryFormatError` otherwise.

    >>> hook_event({"hook_event_name": "AfterTool"}, ("BeforeTool", "AfterTool"))
    'AfterTool'
    """
    event = payload.get("hook_event_name")
    if event not in events:
        raise TrajectoryFormatError(
            "<hook input>", f"hook_event_name must be one of {', '.join(events)} "
            f"(got {event!r}); register the guard for those events only")
    assert isinstance(event, str)
    return event


def hook_output(decision: Decision, write: Callable[[str], dict[str, Any] | None]
                ) -> HookOutput:
    """What a hook prints for ``decision``: nothing when the guard has nothing to say (no
    action, or no message), else the JSON object ``write`` makes of the message (None:
    nothing either).

    >>> hook_output(Decision(Action.NONE, None, ()), lambda m: {"m": m}).stdout is None
    True
    >>> hook_output(Decision(Action.WARN, "M", ()), lambda m: {"m": m}).stdout
    {'m': 'M'}
    """
    msg = decision.message
    if msg is None or decision.action is Action.NONE:
        return HookOutput(None)
    return HookOutput(write(msg))
