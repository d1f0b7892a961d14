"""OpenClaw sessions (npm ``openclaw``, 2026.9): the SQLite database of an agent.

OpenClaw 2026.9 keeps an agent's sessions in one SQLite database,
``$OPENCLAW_STATE_DIR/agents/<agent>/agent/openclaw-agent.sqlite`` (the state folder is
``~/.openclaw`` unless ``OPENCLAW_STATE_DIR`` or ``agent exec --state-dir`` names another;
the default agent is ``main``), in write-ahead-log mode: a path is opened read-only
through SQLite (which reads the ``-wal`` beside it too); bytes without a path (standard
input) are read as they are.

Tables read: ``session_windows`` (``session_id``: one session each) and
``transcript_events`` (``session_id``, ``seq``: the order written, ``event_json``: one
transcript entry; ``event_zstd``: the same JSON compressed with zstd, read when the
``zstandard`` module is installed). An entry is the Pi coding agent's session entry
(OpenClaw runs its agents on Pi's core): ``{"type": "session", ...}``, ``model_change``,
``custom``, and ``{"type": "message", "id", "message": {...}}`` with ``message.role``:

* ``assistant``: one model response, so one turn; its ``content`` blocks of ``type:
  "toolCall"`` (``id``, ``name``, ``arguments``) are its calls (several: parallel calls,
  one step);
* ``toolResult``: the result of call ``toolCallId``: ``content`` (text blocks, joined as
  the model reads them). A failed call is one with ``isError``, a command that exited
  non-zero (``details.exitCode``: the ``exec`` tool reports the exit in its text, with
  ``isError`` false), or a call a plug-in refused before it ran (``details.status``
  ``"blocked"``; the refusal's reason is the result the model reads).

What is taken off a result: the maxrepeat guard's words. When the guard's plug-in
(``maxrepeat hook openclaw``) adds a warning to a result the model reads, it keeps the
tool's own result in ``details.maxrepeatGuard`` (``content``, ``isError``, ``details``),
which this reader uses, so the log grades as the tool answered.

Each session is one trajectory, named ``FILE#session:ID`` when the database holds more
than one. Every other entry and role (user, custom, summaries) is not a tool call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._sqlite import MAGIC, connect, database_session, json_object
from ._toolevents import EventBuilder, content_text

__all__ = ["READER", "MAGIC", "GUARD_KEY", "tool_result", "session_trajectory"]

#: the key of ``details`` under which the guard's plug-in keeps the tool's own result
GUARD_KEY: Final = "maxrepeatGuard"


def tool_result(content: Any, is_error: Any, details: Any) -> tuple[Any, bool]:
    """An OpenClaw tool result as graded: (the text the tool returned, whether the call
    succeeded).

    >>> tool_result([{"type": "text", "text": "x\\n\\n(Command exited with code 2)"}], False,
    ...             {"status": "completed", "exitCode": 2})
    ('x\\n\\n(Command exited with code 2)', False)
    >>> tool_result([{"type": "text", "text": "x WARN"}], False,
    ...             {"maxrepeatGuard": {"content": [{"type": "text", "text": "x"}],
    ...                             "isError": False, "details": {"exitCode": 0}}})
    ('x', True)
    >>> tool_result([{"type": "text", "text": "no"}], False, {"status": "blocked"})
    ('no', False)
    """
    if isinstance(details, dict):
        own = details.get(GUARD_KEY)
        if isinstance(own, dict) and "content" in own:
            content, is_error, details = own.get("content"), own.get("isError"), \
                own.get("details")
    ok = is_error is not True
    if isinstance(details, dict):
        code = details.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            ok = False
        if details.get("status") in ("blocked", "failed", "error"):
            ok = False
    return content_text(content), ok


def _entry(raw: Any, packed: Any) -> dict[str, Any]:
    """One transcript entry from its JSON text, or from its zstd bytes when it has none."""
    if raw is None and isinstance(packed, bytes):
        try:
            import zstandard  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            return {}
        try:
            raw = zstandard.ZstdDecompressor().decompress(packed, max_output_size=1 << 28)
        except zstandard.ZstdError:
            return {}
    return json_object(raw)


def _record(b: EventBuilder, rec: dict[str, Any]) -> None:
    """Feed one transcript entry to the builder."""
    message = rec.get("message")
    if rec.get("type") != "message" or not isinstance(message, dict):
        return
    role = message.get("role")
    if role == "assistant":
        content = message.get("content")
        calls = [c for c in content if isinstance(c, dict) and c.get("type") == "toolCall"
                 and isinstance(c.get("name"), str)] if isinstance(content, list) else []
        if not calls:
            return
        entry = rec.get("id")
        b.start_turn(entry if isinstance(entry, str) else None)
        for c in calls:
            cid = c.get("id")
            b.add_call(c["name"], cid if isinstance(cid, str) and cid else None,
                       c.get("arguments"))
        b.end_turn()
    elif role == "toolResult":
        cid = message.get("toolCallId")
        if isinstance(cid, str) and cid:
            b.add_result(cid, *tool_result(message.get("content"), message.get("isError"),
                                           message.get("details")))


def _events(conn: sqlite3.Connection, session: str) -> EventBuilder:
    """One session's turns, its entries in the order written."""
    b = EventBuilder()
    for raw, packed in conn.execute(
            "SELECT event_json, event_zstd FROM transcript_events WHERE session_id = ? "
            "ORDER BY seq", (session,)):
        _record(b, _entry(raw, packed))
    return b


def session_trajectory(path: str, session: str) -> Trajectory:
    """The trajectory of one ``session`` in the database at ``path`` (the guard's read).
    `TrajectoryFormatError` when the file is not an OpenClaw agent database."""
    return database_session(path, session, _events, format="openclaw",
                            what="an OpenClaw agent database")


def _sessions(conn: sqlite3.Connection) -> list[str]:
    """The sessions with transcript entries, in the order they started."""
    rows = conn.execute("SELECT session_id, MIN(created_at) FROM transcript_events "
                        "GROUP BY session_id ORDER BY 2, 1").fetchall()
    return [sid for sid, _ in rows]


def _read(source: Source) -> Iterator[Item]:
    try:
        with closing(connect(source)) as conn:
            built = [(sid, _events(conn, sid)) for sid in _sessions(conn)]
    except sqlite3.Error as exc:
        yield TrajectoryFormatError(source.name, f"not an OpenClaw agent database: {exc}")
        return
    for sid, b in built:
        name = source.name if len(built) == 1 else f"{source.name}#session:{sid}"
        yield Trajectory(events=b.events(), source=name, format="openclaw",
                         metadata={"session_id": sid})


def _sniff(head: bytes, source: Source) -> int:
    if not head.startswith(MAGIC):
        return 0
    # the schema on the first pages names OpenClaw's agent tables
    return 95 if b"session_nodes" in head else 0


READER = Reader(
    name="openclaw",
    description="OpenClaw agent database openclaw-agent.sqlite (transcript_events: Pi "
    "session entries, assistant toolCall blocks and toolResult messages)",
    extensions=(".sqlite",),
    markers=(b'session_nodes',),
    top=95,
    order=90,
    sniff=_sniff,
    read=_read,
)
