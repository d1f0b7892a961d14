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
by `maxrepeat.guards.session` (verified against the transcript, never trusted). The
sequence is the hook engine's (`maxrepeat.guards.engine`), the transcript's part
`._claude_code_log.TranscriptFollower`; this module reads the hook input and says what
one call decided (`HookVerdict`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.config import MaxRepeatConfig
from ..core.errors import TrajectoryFormatError
from ._claude_code_log import EVENTS, TranscriptFollower, hook_output
from .engine import judge_call
from .policy import Decision, Policy

__all__ = ["EVENTS", "HookVerdict", "guard", "hook_output"]


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
    follower = TranscriptFollower(payload, event, path, session_id)
    judged = judge_call(follower, configs, policy=policy, cache_dir=cache_dir)
    return HookVerdict(event, judged.decision, follower.output, judged.read_from,
                       judged.read_from > 0)
