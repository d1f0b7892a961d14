"""Reading an agent's session log for its hook: from where the previous call stopped.

The Codex CLI, Gemini CLI and Copilot CLI readers have a resumable conversion
(`maxrepeat.readers._resume`): a hook call restores the reader state the previous call
saved (verified with the rest of the state by `maxrepeat.guards.session`), converts only
the lines appended since, and gets the events that became final (*settled*: fed once to
the saved monitors) and the events that may still change (*open*: fed at every call on
top of them). Whenever resuming is not possible or not certain, the log is converted from
its start, so the events are always those of one full read:

* no saved state, or one that does not decode;
* a line that changes a settled turn (`_Changed`: a late result, a late error flag, a
  Gemini rewrite or rewind of a settled message);
* a layout read only whole (a legacy single-JSON Gemini session: `_NotResumable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errors import TrajectoryFormatError
from ..core.events import TOOL_RESULT, Event, Trajectory
from ..readers import Source, get_reader
from ..readers._resume import Resumable, _Changed, _NotResumable, _StateError, resume
from .session import GuardSession

__all__ = ["LogRead", "read_log", "read_whole", "results_in"]


@dataclass
class LogRead:
    """One conversion of the log for a hook call.

    ``settled``: the events settled by this read (all settled events when ``fresh``);
    ``open``: the events after them (for a whole read, every event); ``base``: how many
    events come before ``open`` in the full conversion; ``state``: the reader state to
    save (empty: none, the next call reads from the start); ``offset`` / ``lines``: where
    the read stopped; ``conv``: the conversion (None for a whole read).
    """

    settled: list[Event]
    open: list[Event]
    state: bytes
    offset: int
    lines: int
    lenient: bool
    fresh: bool
    base: int
    conv: Resumable | None = None
    #: how many results ``settled`` holds
    settled_results: int = 0


def results_in(events: Sequence[Event]) -> int:
    """How many results ``events`` hold."""
    return sum(1 for e in events if e.type == TOOL_RESULT)


def read_whole(gs: GuardSession, reader: str, log: str) -> LogRead:
    """The log converted whole by the reader ``maxrepeat grade`` uses (complete lines
    only: a line still being written waits); nothing to resume from."""
    data = b"".join(raw for _, raw in gs.lines(0, 0))
    if not data.strip():
        return LogRead([], [], b"", gs.offset, gs.line_count, False, True, 0)
    error: object = "no trajectory"
    for item in get_reader(reader).read(Source.from_bytes(data, log)):
        if isinstance(item, Trajectory):
            return LogRead([], list(item.events), b"", gs.offset, gs.line_count,
                           item.lenient, True, 0)
        error = item
    raise TrajectoryFormatError(log, f"not readable as {reader}: {error}")


def read_log(gs: GuardSession, reader: str, log: str, state: bytes | None, offset: int,
             lines: int, before: int) -> LogRead:
    """The log's lines from ``offset`` (line ``lines``) on, converted from ``state``
    (None: from the log's start); ``before``: the events the state settled so far.

    Raises `TrajectoryFormatError` when a complete line cannot be read (as a full read
    does; the saved state then stays as it was)."""
    while True:
        try:
            conv = resume(reader, log, state)
            for first, part in gs.line_chunks(offset, lines):
                for number, raw in enumerate(part, first):
                    conv.feed(number, raw)
            settled = conv.settle()
            saved = conv.save()
            opened = conv.open_events()
        except (_Changed, _StateError):
            if state is None:  # a value the state cannot hold: nothing to resume from
                return read_whole(gs, reader, log)
            state, offset, lines, before = None, 0, 0, 0  # from the start
            continue
        except _NotResumable:
            return read_whole(gs, reader, log)
        except TrajectoryFormatError as err:
            raise TrajectoryFormatError(log, f"not readable as {reader}: {err}") from None
        return LogRead(settled, opened, saved, gs.offset, gs.line_count, conv.lenient,
                       state is None, before + len(settled), conv, results_in(settled))
