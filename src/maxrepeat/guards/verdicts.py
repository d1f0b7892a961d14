"""The verdicts a live guard spoke, kept for ``maxrepeat hook status``.

Each agent hook call that answers the agent (a warning, a refusal, a stop) appends one
JSON line to ``verdicts.jsonl`` in the hook's cache folder (beside the per-session states
of `maxrepeat.guards.session`): when, which agent, session and hook event, what the agent
was told (the action as the hook's output carries it, and its message), and the grader
settings it was judged with (`signature_of` without the guard's own extras, so that status
can tell which installed guard spoke). A call that says nothing writes nothing, so the
file costs the quiet calls nothing. The journal is kept
under `LIMIT` bytes (its older half is dropped when it grows past it); a journal that
cannot be written costs only the record (the hook's answer is never changed by it).

>>> import tempfile
>>> from maxrepeat.guards.policy import Action, Decision
>>> folder = Path(tempfile.mkdtemp())
>>> from maxrepeat.core.config import MaxRepeatConfig
>>> configs = [MaxRepeatConfig(max=2, match="name-args")]
>>> record(folder, "codex", {"session_id": "s1", "hook_event_name": "PostToolUse"},
...        Decision(Action.STOP, "maxrepeat loop guard (stopped): ...", ()),
...        {"continue": False, "stopReason": "maxrepeat loop guard (stopped): ..."}, configs)
>>> [(v.agent, v.session, v.action) for v in recent(folder, "codex", signature(configs))]
[('codex', 's1', 'stop')]
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..core.config import MaxRepeatConfig, unique_names
from .policy import Decision, Policy
from .statefile import default_cache_dir, signature_of, write_atomic

__all__ = ["JOURNAL", "LIMIT", "Verdict", "record", "recent", "signature"]

#: the journal's file name in the cache folder
JOURNAL: Final = "verdicts.jsonl"
#: the journal's largest size in bytes before its older half is dropped
LIMIT: Final = 1 << 20
_APPEND: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Verdict:
    """One spoken verdict: ``time`` (Unix seconds), ``agent``, ``session``, ``event``
    (the hook event, when the input names it), ``action`` (``warn``, ``block`` or
    ``stop``), ``message`` and ``signature`` (the grader settings)."""

    time: float
    agent: str
    session: str
    event: str
    action: str
    message: str
    signature: str


def signature(configs: Sequence[MaxRepeatConfig], policy: Policy | None = None) -> str:
    """The grader settings a verdict is recorded with (graders, names and policy)."""
    return signature_of(configs, unique_names(configs), policy or Policy())


def _event(agent: str, payload: Mapping[str, Any]) -> str:
    """The event a hook input belongs to, as the agent's descriptor tells it."""
    from .agents import get

    try:
        return get(agent).event_of(payload)
    except (KeyError, ValueError):
        return ""


def _told(output: Mapping[str, Any], decision: Decision) -> tuple[str, str]:
    """What the agent was told (its action and message), from the hook's output: a
    guard answers an agent as it can, not always as the policy decided (Codex refuses
    a call where the policy stops, for instance)."""
    if output.get("continue") is False or output.get("interrupt") is True \
            or output.get("cancel") is True:  # Cline's cancel ends the run
        action = "stop"
    elif output.get("decision") in ("block", "deny") or output.get("behavior") == "deny" \
            or "deny" in (output.get("permissionDecision"),
                          _inner(output).get("permissionDecision")):
        action = "block"
    else:
        action = "warn"
    for key in ("stopReason", "reason", "permissionDecisionReason", "message",
                "additionalContext", "errorMessage", "contextModification"):
        for where in (output, _inner(output)):
            if isinstance(where.get(key), str):
                return action, str(where[key])
    return action, decision.message or ""


def _inner(output: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = output.get("hookSpecificOutput")
    return inner if isinstance(inner, dict) else {}


def record(cache_dir: Path | None, agent: str, payload: Mapping[str, Any],
           decision: Decision, output: Mapping[str, Any], configs: Sequence[MaxRepeatConfig],
           policy: Policy | None = None) -> None:
    """Append what the hook answered the agent (``output``, for ``decision``)."""
    session = payload.get("session_id", payload.get("sessionId"))
    context = payload.get("sessionContext")  # Cline names its session there
    if session is None and isinstance(context, dict):
        session = context.get("rootSessionId")
    action, message = _told(output, decision)
    line = json.dumps({"time": round(time.time(), 3), "agent": agent,
                       "session": session if isinstance(session, str) else "",
                       "event": _event(agent, payload), "action": action, "message": message,
                       "signature": signature(configs, policy)},
                      ensure_ascii=False) + "\n"
    path = (cache_dir if cache_dir is not None else default_cache_dir()) / JOURNAL
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, _APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "surrogatepass"))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > LIMIT:
            data = path.read_bytes()
            cut = data.find(b"\n", len(data) // 2) + 1
            write_atomic(path, data[cut:])
    except (OSError, ValueError):
        pass  # the record is lost, the hook's answer is not


def recent(cache_dir: Path | None = None, agent: str | None = None,
           signature: str | None = None, limit: int = 5,
           session: str | None = None) -> list[Verdict]:
    """The newest ``limit`` verdicts of the journal, newest first, of ``agent``, the
    grader ``signature`` and the ``session`` when given (lines that are not verdicts are
    skipped)."""
    path = (cache_dir if cache_dir is not None else default_cache_dir()) / JOURNAL
    try:
        data = path.read_bytes()
    except OSError:
        return []
    found: list[Verdict] = []
    for raw in reversed(data.splitlines()):
        try:
            item = json.loads(raw)
            verdict = Verdict(float(item["time"]), *(str(item[k]) for k in (
                "agent", "session", "event", "action", "message", "signature")))
        except (ValueError, KeyError, TypeError):
            continue
        if (agent is None or verdict.agent == agent) and (
                signature is None or verdict.signature == signature) and (
                session is None or verdict.session == session):
            found.append(verdict)
            if len(found) >= limit:
                break
    return found
