"""The monitor's saved state: what `Monitor.to_bytes` writes and `from_bytes` reads.

Every piece is a msgspec struct, so the state round-trips through msgpack as it is. See
``docs/design/monitor.md`` for what each piece holds and why it stays small.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ..result import Run

__all__ = ["STATE_VERSION", "Answer", "Call", "OpenStep", "DoneStep", "Stretch", "Best",
           "Front", "State"]

#: Bumped whenever the saved state's layout or meaning changes.
STATE_VERSION: Final = 2


class Answer(msgspec.Struct, array_like=True):
    """The first result of one call id, reduced to what fingerprints and previews need."""

    key: bytes | None  # digest of the canonical value; None when the value is empty
    preview: str
    error: str | None = None  # why the value cannot be compared (a grading error if used)


class Call(msgspec.Struct, array_like=True):
    event: int
    name: str
    cid: str | None
    head: str  # preview of the tool name (and arguments, except in name mode)
    digest: bytes  # name / name-args: the call's fingerprint; observation: the name bytes


class OpenStep(msgspec.Struct, array_like=True):
    """A step of the tail: its calls may still grow or their results arrive."""

    index: int
    calls: list[Call]
    closed: bool
    waiting: int = 0  # calls whose result has not arrived (observation mode)
    pushed: bool = False  # in the log: pushed with the observations known then


class DoneStep(msgspec.Struct, array_like=True):
    """A step reduced to what the search and the result need."""

    index: int
    first: int  # event index of its first watched call
    last: int  # event index of its last watched call
    key: bytes | None  # None: empty fingerprint, equal to nothing
    preview: str
    tools: list[str]  # its distinct tool names, sorted
    calls: int
    mhash: bytes = b""  # order-free sum of the call digests: a cheap filter before `key`


class Stretch(msgspec.Struct, array_like=True):
    """Equalities F[i] == F[i-p] back to back, reaching the settled frontier."""

    start: int = 0
    length: int = 0
    primitive: bool = True
    block: list[DoneStep] = msgspec.field(default_factory=list)  # captured at two copies


class Best(msgspec.Struct, array_like=True):
    """A finished stretch with at least two copies (or the first non-empty step)."""

    occurrences: int
    period: int
    start: int
    block: list[DoneStep]
    end_event: int


class Front(msgspec.Struct):
    """The search over the pushed steps: everything a checkpoint must restore."""

    settled: int = 0  # how many steps were pushed
    settled_empty: int = 0
    first_nonempty: DoneStep | None = None
    window: list[DoneStep] = msgspec.field(default_factory=list)  # the last 2P pushed steps
    stretches: list[Stretch] = msgspec.field(default_factory=list)
    best: Best | None = None
    runs: list[Run] = msgspec.field(default_factory=list)
    # The steps covered by `runs`, as disjoint sorted intervals (a `rules.Cover`), and
    # how many they are.
    cover_starts: list[int] = msgspec.field(default_factory=list)
    cover_ends: list[int] = msgspec.field(default_factory=list)
    loop_steps: int = 0

    def copy(self) -> Front:
        """A copy that later pushes to this one leave unchanged (steps are never mutated)."""
        return Front(
            self.settled, self.settled_empty, self.first_nonempty, list(self.window),
            [Stretch(s.start, s.length, s.primitive, s.block) for s in self.stretches],
            self.best, list(self.runs), list(self.cover_starts), list(self.cover_ends),
            self.loop_steps,
        )


class State(msgspec.Struct):
    """The whole state of a monitor."""

    version: int
    front: Front
    events: int = 0
    in_turn: bool = False
    open_turn: bool = False  # the last tail step is the open turn's step
    steps: int = 0
    calls: int = 0
    # The front before the first pushed step that still waits for a result, and the steps
    # pushed since (replayed from there when one of their results arrives).
    checkpoint: Front | None = None
    log: list[OpenStep] = msgspec.field(default_factory=list)
    tail: list[OpenStep] = msgspec.field(default_factory=list)  # steps not pushed yet
    answers: dict[str, Answer] = msgspec.field(default_factory=dict)
    # Why grading stopped (every longer prefix is the same error result), and whether the
    # error comes from a malformed event dict (whose result carries no trajectory data).
    error: str | None = None
    malformed: bool = False
    # Near-duplicate similarity: the recent cluster representatives, most recent first.
    clusters: list[str] = msgspec.field(default_factory=list)
