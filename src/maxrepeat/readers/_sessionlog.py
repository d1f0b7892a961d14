"""The full read and the resumable conversion (`._resume`) of a JSON Lines session log,
written once for the readers whose log is converted a record at a time by one converter
object (Pi, Qwen Code, Codex CLI):

* `read_log`: every record to the converter, a cut last line or a bad line reported, then
  the trajectory (its ``session_id`` the converter's ``session``);
* `LineResume`: the `._resume.Resumable` whose lines go to its ``record`` (a reader
  supplies it and ``save``);
* `SessionResume`: the whole `LineResume` of a `SessionConverter`, whose only state
  besides the events is the session id.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Protocol

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Event, Trajectory
from . import Item, Source
from ._json import CutLastLineError
from ._marks import decode_state
from ._resume import BuilderState, ResumableBuilder, encode, line_record
from ._toolevents import EventBuilder, iter_records

__all__ = ["Converter", "LineResume", "SessionConverter", "SessionResume", "read_log"]


class Converter(Protocol):
    """A log's conversion: its events (``b``), the session id once seen, and a record
    (from line ``number``) at a time."""

    b: EventBuilder
    session: str | None

    def record(self, number: int, rec: dict[str, Any]) -> None: ...


def read_log(source: Source, fmt: str, conv: Converter) -> Iterator[Item]:
    """Read ``source`` whole with ``conv``: a cut last line is reported and the complete
    lines before it graded (a live or crashed session); another bad line is reported and
    ends the read; then the trajectory (format ``fmt``)."""
    lenient = False
    try:
        for n, rec, loose in iter_records(source):
            lenient = lenient or loose
            conv.record(n, rec)
    except CutLastLineError as err:
        yield err
    except TrajectoryFormatError as err:
        yield err
        return
    meta = {"session_id": conv.session} if conv.session else {}
    yield Trajectory(events=conv.b.events(), source=source.name, format=fmt,
                     lenient=lenient, metadata=meta)


class LineResume:
    """A reader's resumable conversion (`._resume.Resumable`): each line's record to
    `record`; a reader gives ``b`` (its `ResumableBuilder`), `record` and ``save``."""

    source: str
    lenient: bool
    b: ResumableBuilder

    def record(self, number: int, rec: dict[str, Any]) -> None:
        """Convert the record of line ``number``."""
        raise NotImplementedError

    def feed(self, number: int, raw: bytes) -> None:
        found = line_record(number, raw, self.source)
        if found is not None:
            self.lenient = self.lenient or found[1]
            self.record(number, found[0])

    def settle(self) -> list[Event]:
        return self.b.settle()

    def open_events(self) -> list[Event]:
        return self.b.open_events()

    def settled_any(self, call_id: str | None) -> bool:
        return self.b.settled_any(call_id)


class SessionConverter:
    """A `Converter` whose only state besides its events is the session id."""

    def __init__(self, builder: EventBuilder) -> None:
        self.b = builder
        self.session: str | None = None

    def record(self, number: int, rec: dict[str, Any]) -> None:
        """Convert the record of line ``number``."""
        raise NotImplementedError


class _State(msgspec.Struct, array_like=True):
    builder: BuilderState
    session: str | None
    lenient: bool


class SessionResume(LineResume):
    """The `LineResume` of a reader's `SessionConverter` (``convert``): the same records
    as `read_log`, a line at a time, from a saved state (None: the log's start)."""

    convert: ClassVar[type[SessionConverter]]

    def __init__(self, source: str, state: bytes | None) -> None:
        self.source = source
        self.lenient = False
        st = decode_state(state, _State) if state is not None else None
        self.b = ResumableBuilder(st.builder) if st is not None else ResumableBuilder()
        self.s = self.convert(self.b)
        if st is not None:
            self.s.session, self.lenient = st.session, st.lenient

    def record(self, number: int, rec: dict[str, Any]) -> None:
        self.s.record(number, rec)

    def save(self) -> bytes:
        return encode(_State(self.b.state(), self.s.session, self.lenient))
