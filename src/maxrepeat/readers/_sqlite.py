"""What the readers of agents' SQLite databases share: opening one, its JSON columns, and
one session's trajectory (the guard's read).

A path is opened read-only through SQLite, which reads a write-ahead log beside it too;
bytes without a path (standard input) are opened in memory, and a database in
write-ahead-log mode (as the agents keep theirs) is read as a plain one: memory cannot
hold a log, and the bytes already hold all there is.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Source
from ._toolevents import EventBuilder

__all__ = ["MAGIC", "connect", "json_object", "database_session"]

#: the first bytes of every SQLite database
MAGIC: Final = b"SQLite format 3\x00"


def connect(source: Source) -> sqlite3.Connection:
    """A connection to the database ``source`` is (read-only when it has a path)."""
    if source.path is not None:
        uri = "file:" + source.path.replace("?", "%3F").replace("#", "%23") + "?mode=ro"
        return sqlite3.connect(uri, uri=True)
    data = bytearray(source.read_bytes())
    if data[18:20] == b"\x02\x02":  # write-ahead-log mode, which memory cannot hold
        data[18:20] = b"\x01\x01"
    conn = sqlite3.connect(":memory:")
    conn.deserialize(bytes(data))
    return conn


def json_object(raw: Any) -> dict[str, Any]:
    """A column's JSON object; ``{}`` for anything else (not JSON, not an object).

    >>> json_object('{"role": "assistant"}'), json_object("[1]"), json_object(None)
    ({'role': 'assistant'}, {}, {})
    """
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def database_session(path: str, session: str,
                       events: Callable[[sqlite3.Connection, str], EventBuilder], *,
                       format: str, what: str) -> Trajectory:
    """The trajectory of one ``session`` in the database at ``path``, its turns made by
    ``events``; `TrajectoryFormatError` when the file is not ``what``."""
    try:
        with closing(connect(Source(path, path))) as conn:
            b = events(conn, session)
    except sqlite3.Error as exc:
        raise TrajectoryFormatError(path, f"not {what}: {exc}") from None
    return Trajectory(events=b.events(), source=path, format=format,
                      metadata={"session_id": session})
