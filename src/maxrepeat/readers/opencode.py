"""OpenCode sessions (``opencode-ai``, 1.18): the SQLite database OpenCode keeps them in.

OpenCode 1.18 writes every session of a user to one SQLite database,
``$XDG_DATA_HOME/opencode/opencode.db`` (``~/.local/share/opencode/opencode.db``;
``OPENCODE_DB`` names another), in write-ahead-log mode: while OpenCode runs, the newest
rows are in ``opencode.db-wal`` beside it, so a path is opened read-only through SQLite
(which reads the WAL too); bytes without a path (standard input) are read as they are, a
copy in write-ahead-log mode as a plain database (``readers._sqlite``).

Tables read: ``session`` (``id``, ``parent_id``: a subagent's session names the session
that started it), ``message`` (``id``, ``session_id``, ``data``: JSON with ``role``) and
``part`` (``id``, ``message_id``, ``session_id``, ``data``: JSON with ``type``). Ids grow
with time, so ordering by id is the order things happened.

What marks a model response: one ``assistant`` message is one model response, so one
turn; its ``tool`` parts are its calls (several: parallel calls, one step). A tool part
is ``{"type": "tool", "tool": NAME, "callID": ID, "state": {"status", "input", ...}}``:

* ``completed``: the result is ``state.output`` (the text the model read) without the
  note the maxrepeat guard appended to it (``\\n\\n<maxrepeat-guard>…</maxrepeat-guard>``:
  not the tool's output); a shell command that exited non-zero
  (``state.metadata.exit``) is a failed call;
* ``error``: a failed call, its result ``state.error`` (a call a plug-in refused before it
  ran holds the refusal; one cut short by an abort ``Tool execution aborted``);
* ``pending`` / ``running``: the call without a result (the session was read while the
  call ran, or OpenCode ended before it finished).

Each session is one trajectory, named ``FILE#session:ID`` when the database holds more than
one; a subagent's session carries ``parent_session_id`` in its metadata.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._sqlite import MAGIC, connect, database_session, json_object
from ._toolevents import EventBuilder

__all__ = ["READER", "MAGIC", "GUARD_NOTE", "session_trajectory", "strip_note"]

#: the note the guard appends to a result the model reads (`strip_note` takes it off)
GUARD_NOTE: Final = re.compile(r"\n\n<maxrepeat-guard>.*</maxrepeat-guard>\Z", re.DOTALL)


def strip_note(text: str) -> str:
    """A result without the guard's note.

    >>> strip_note("out\\n\\n<maxrepeat-guard>stop</maxrepeat-guard>")
    'out'
    """
    return GUARD_NOTE.sub("", text)


def _result(state: dict[str, Any]) -> tuple[Any, bool] | None:
    """A tool part's result and whether the call succeeded (None: no result yet)."""
    status = state.get("status")
    if status == "completed":
        output = state.get("output")
        meta = state.get("metadata")
        code = meta.get("exit") if isinstance(meta, dict) else None
        ok = not (isinstance(code, int) and not isinstance(code, bool) and code != 0)
        return (strip_note(output) if isinstance(output, str) else output), ok
    if status == "error":
        return state.get("error"), False
    return None


def _add_part(b: EventBuilder, data: dict[str, Any]) -> None:
    if data.get("type") != "tool":
        return
    name, call_id = data.get("tool"), data.get("callID")
    state = data.get("state")
    if not isinstance(name, str) or not isinstance(call_id, str) or not isinstance(state, dict):
        return
    if b.add_call(name, call_id, state.get("input")):
        found = _result(state)
        if found is not None:
            b.add_result(call_id, *found)


def _events(conn: sqlite3.Connection, session: str) -> EventBuilder:
    """One session's turns: each assistant message with its tool parts, in id order."""
    b = EventBuilder()
    messages = conn.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY id",
                            (session,)).fetchall()
    parts: dict[str, list[dict[str, Any]]] = {}
    for mid, raw in conn.execute("SELECT message_id, data FROM part WHERE session_id = ? "
                                 "ORDER BY id", (session,)):
        parts.setdefault(mid, []).append(json_object(raw))
    for mid, raw in messages:
        if json_object(raw).get("role") != "assistant":
            continue
        b.start_turn(mid)
        for data in parts.get(mid, ()):
            _add_part(b, data)
        b.end_turn()
    return b


def session_trajectory(path: str, session: str) -> Trajectory:
    """The trajectory of one ``session`` in the database at ``path`` (the guard's read).
    `TrajectoryFormatError` when the file is not an OpenCode database."""
    return database_session(path, session, _events, format="opencode",
                            what="an OpenCode database")


def _sessions(conn: sqlite3.Connection) -> list[tuple[str, str | None]]:
    return [(sid, parent) for sid, parent in
            conn.execute("SELECT id, parent_id FROM session ORDER BY id")]


def _read(source: Source) -> Iterator[Item]:
    try:
        with closing(connect(source)) as conn:
            sessions = _sessions(conn)
            built = [(sid, parent, _events(conn, sid)) for sid, parent in sessions]
    except sqlite3.Error as exc:
        yield TrajectoryFormatError(source.name, f"not an OpenCode database: {exc}")
        return
    for sid, parent, b in built:
        name = source.name if len(built) == 1 else f"{source.name}#session:{sid}"
        meta: dict[str, Any] = {"session_id": sid}
        if parent:
            meta["parent_session_id"] = parent
        yield Trajectory(events=b.events(), source=name, format="opencode", metadata=meta)


def _sniff(head: bytes, source: Source) -> int:
    if not head.startswith(MAGIC):
        return 0
    # the schema on the first page names OpenCode's tables when it fits there
    return 90 if b"session_message" in head or b"`part`" in head else 60


READER = Reader(
    name="opencode",
    description="OpenCode session database opencode.db (SQLite: session, message, part)",
    extensions=(".db",),
    markers=(b'SQLite format 3\x00',),
    top=90,
    order=100,
    sniff=_sniff,
    read=_read,
)
