"""Steps (spec §3): the watched calls of a trajectory, grouped by turn.

`group_steps` filters the watched calls and groups them into steps (as lists of event
indices) with the first result of each call; `Step` and `Call` are the public values
``maxrepeat.steps()`` hands out. What makes two steps the same is in `core.fingerprints`;
the one-event-at-a-time reference and the readers' check of events are in `_steploop`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import compress, islice, repeat
from operator import attrgetter, not_
from typing import Any, Final, overload

import msgspec

from ._steploop import events_readable, events_readable_pure, group_steps_loop
from .config import MaxRepeatConfig
from .events import TOOL_CALL, TOOL_RESULT, TURN_END, TURN_START

__all__ = [
    "Call",
    "Step",
    "Fingerprint",
    "MISSING",
    "watcher",
    "group_steps",
    "SingleCallSteps",
    "LazyResults",
    "group_steps_loop",
    "events_readable",
    "events_readable_pure",
]


class _Missing:
    """The observation of a call that no result answered."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


# Frozen msgspec Structs, like the result types, not dataclasses: a dataclass compiles
# its methods from source at import (~0.5 ms each), and every ``maxrepeat grade``
# imports these (start-up is measured: bench/RESULTS.md).
class Fingerprint(msgspec.Struct, frozen=True):
    """What makes two steps "the same": a digest of the multiset of call fingerprints.

    >>> Fingerprint(bytes(16)).hex()[:8]
    '00000000'
    """

    digest: bytes

    def hex(self) -> str:
        """The digest as hexadecimal text."""
        return self.digest.hex()


class Call(msgspec.Struct, frozen=True):
    """One watched tool call with its observation (`MISSING` when no result answered it).

    >>> from maxrepeat import MaxRepeatConfig, Trajectory, steps, tool_call, tool_result
    >>> run = Trajectory([tool_call("bash", "c1", {"cmd": "ls"}), tool_result("c1", "a.txt")])
    >>> [step] = steps(run, MaxRepeatConfig(1))
    >>> call = step.calls[0]
    >>> call.tool_name, call.arguments, call.observation
    ('bash', {'cmd': 'ls'}, 'a.txt')
    """

    event_index: int
    tool_name: str
    call_id: str | None
    arguments: Any
    observation: Any


class Step(msgspec.Struct, frozen=True):
    """One agent turn's watched calls; ``fingerprint`` is None when it is empty (spec §3).

    >>> from maxrepeat import MaxRepeatConfig, Trajectory, steps, tool_call, turn_end, turn_start
    >>> run = Trajectory([turn_start(), tool_call("bash", "a"), tool_call("bash", "b"),
    ...                   turn_end(), tool_call("bash", "c")])
    >>> [(s.index, len(s.calls)) for s in steps(run, MaxRepeatConfig(1, match="name"))]
    [(0, 2), (1, 1)]
    >>> steps(run, MaxRepeatConfig(1))[0].fingerprint is None  # no results: empty
    True
    """

    index: int
    calls: tuple[Call, ...]
    fingerprint: Fingerprint | None


# One byte per event for the C-level grouping in `group_steps`.
_C, _R, _S, _E, _OTHER = b"C"[0], b"R"[0], b"S"[0], b"E"[0], b"."[0]
_CODES: Final = {TOOL_CALL: _C, TOOL_RESULT: _R, TURN_START: _S, TURN_END: _E}
_NOT_GROUPING: Final = b"R."
# translate tables giving 1 where an event is a call (a result), 0 elsewhere
_IS_CALL: Final = bytes(1 if i == _C else 0 for i in range(256))
_IS_RESULT: Final = bytes(1 if i == _R else 0 for i in range(256))
_STEP_RUNS: Final = re.compile(rb"SC+|C")
_TYPE: Final = attrgetter("type")
_DATA: Final = attrgetter("data")
_NAME: Final = attrgetter("tool_name")
_CALL_ID: Final = attrgetter("tool_call_id")
_RESULT: Final = attrgetter("result")


def watcher(config: MaxRepeatConfig) -> Callable[[str], bool]:
    """Whether ``config`` watches a tool name (cached per name)."""
    if not config.patterns:
        return lambda name: True
    cache: dict[str, bool] = {}

    def watches(name: str) -> bool:
        hit = cache.get(name)
        if hit is None:
            hit = cache[name] = config.watches(name)
        return hit

    return watches


class SingleCallSteps(Sequence[list[int]]):
    """Steps of one call each (the usual shape), kept as the list of call indices: a
    long trajectory then costs no list per step (allocation and GC time dominate there).

    >>> steps = SingleCallSteps([3, 7])
    >>> steps[1], list(steps), steps == [[3], [7]]
    ([7], [[3], [7]], True)
    """

    __slots__ = ("calls",)

    def __init__(self, calls: Sequence[int]) -> None:
        self.calls = calls

    def __len__(self) -> int:
        return len(self.calls)

    @overload
    def __getitem__(self, index: int) -> list[int]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[int]]: ...

    def __getitem__(self, index: int | slice) -> list[int] | list[list[int]]:
        if isinstance(index, slice):
            return [[i] for i in self.calls[index]]
        return [self.calls[index]]

    def __iter__(self) -> Iterator[list[int]]:
        return ([i] for i in self.calls)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SingleCallSteps):  # a list or an array of int64s
            return list(self.calls) == list(other.calls)
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SingleCallSteps({self.calls!r})"


def group_steps(
    events: Sequence[Any], watches: Callable[[str], bool], *, results: bool = True
) -> tuple[Sequence[list[int]], dict[str, Any]]:
    """Watched call indices grouped into steps, and the first result per call id (an
    empty mapping when ``results`` is false: grading by name or arguments needs none).

    Turn rules (spec §3.2): ``turn_start`` opens a turn (closing an open one), ``turn_end``
    closes it (ignored when none is open), a call outside any turn is a step of its own,
    and a turn without watched calls forms no step.

    The work is done by C loops (``map``, ``compress``, one regex) over a byte per event,
    so the cost per event is a few tens of nanoseconds; anything unusual (a call without
    a string tool name) takes `group_steps_loop`, which reports it.
    """
    n = len(events)
    codes = bytearray(map(_CODES.get, map(_TYPE, events), repeat(_OTHER, n)))
    calls = list(compress(range(n), codes.translate(_IS_CALL)))
    datas = list(map(_DATA, map(events.__getitem__, calls)))
    if None in datas:
        return group_steps_loop(events, watches)
    names = list(map(_NAME, datas))
    if not set(map(type, names)) <= {str}:
        return group_steps_loop(events, watches)
    unwatched = {name for name in set(names) if not watches(name)}
    if unwatched:
        keep = [name not in unwatched for name in names]
        for i in compress(calls, map(not_, keep)):
            codes[i] = _OTHER  # an unwatched call is as if absent
        calls = list(compress(calls, keep))
    # Only turn boundaries and calls matter for grouping: "S C C" is one step, a "C"
    # outside a turn is one step each, and an empty turn ("S" alone) is none.
    runs = _STEP_RUNS.findall(codes.translate(None, _NOT_GROUPING))
    steps: Sequence[list[int]]
    if len(runs) == len(calls):
        steps = SingleCallSteps(calls)
    else:
        it = iter(calls)
        steps = [list(islice(it, len(r) - (r[0] == _S))) for r in runs]
    return steps, _first_results(events, codes) if results else {}


def _first_results(events: Sequence[Any], codes: bytes | bytearray | None = None) -> dict[str, Any]:
    """The first result of each call id (``codes``: the event bytes, when already made)."""
    n = len(events)
    if codes is None:
        codes = bytearray(map(_CODES.get, map(_TYPE, events), repeat(_OTHER, n)))
    rdatas = [d for d in map(_DATA, map(events.__getitem__,
                                        compress(range(n), codes.translate(_IS_RESULT))))
              if d is not None]
    ids = list(map(_CALL_ID, rdatas))
    values = list(map(_RESULT, rdatas))
    if None in ids:
        pairs = [(k, v) for k, v in zip(ids, values, strict=True) if k is not None]
        ids, values = [k for k, _ in pairs], [v for _, v in pairs]
    # Reversed, so that the first result of each call id is the one that stays.
    return dict(zip(reversed(ids), reversed(values), strict=True))


class LazyResults(Mapping[str, Any]):
    """The first results, found only if asked for: grading by name or arguments reads
    them only for a step preview, or not at all."""

    __slots__ = ("_events", "_found")

    def __init__(self, events: Sequence[Any]) -> None:
        self._events = events
        self._found: dict[str, Any] | None = None

    def _all(self) -> dict[str, Any]:
        if self._found is None:
            self._found = _first_results(self._events)
        return self._found

    def __getitem__(self, key: str) -> Any:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
