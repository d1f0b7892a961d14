"""Steps and fingerprints (spec §3): filter watched calls, group them by turn, fingerprint.

A step's fingerprint is the multiset of its calls' fingerprints. Call fingerprints are
16-byte BLAKE2b digests of canonical bytes (stable across processes, unlike ``hash``); a
step's key is its sorted digests joined, interned to a small int for the pattern search.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice, repeat
from operator import attrgetter, not_
from typing import Any, Final, cast, overload

import msgspec

from .canonical import canonical_bytes, decode_value, observation_bytes
from .config import MaxRepeatConfig
from .errors import TrajectoryFormatError, type_name
from .events import TOOL_CALL, TOOL_RESULT, TURN_END, TURN_START
from .rules import ALONE, OPEN, place_call, step_is_empty

__all__ = [
    "Call",
    "Step",
    "Fingerprint",
    "MISSING",
    "group_steps",
    "SingleCallSteps",
    "group_steps_loop",
    "StepTable",
    "build_step_table",
    "step_key",
    "name_bytes",
    "digest",
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


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What makes two steps "the same": a digest of the multiset of call fingerprints.

    >>> Fingerprint(bytes(16)).hex()[:8]
    '00000000'
    """

    digest: bytes

    def hex(self) -> str:
        """The digest as hexadecimal text."""
        return self.digest.hex()


@dataclass(frozen=True, slots=True)
class Call:
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


@dataclass(frozen=True, slots=True)
class Step:
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


def _watcher(config: MaxRepeatConfig) -> Callable[[str], bool]:
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

    def __init__(self, calls: list[int]) -> None:
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
        if isinstance(other, SingleCallSteps):
            return self.calls == other.calls
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SingleCallSteps({self.calls!r})"


def group_steps(
    events: Sequence[Any], watches: Callable[[str], bool]
) -> tuple[Sequence[list[int]], dict[str, Any]]:
    """Watched call indices grouped into steps, and the first result per call id.

    Turn rules (spec §3.2): ``turn_start`` opens a turn (closing an open one), ``turn_end``
    closes it (ignored when none is open), a call outside any turn is a step of its own,
    and a turn without watched calls forms no step.

    The work is done by C loops (``map``, ``compress``, one regex) over a byte per event,
    so the cost per event is a few tens of nanoseconds; anything unusual (a call without
    a string tool name) takes `group_steps_loop`, which reports it.
    """
    return _group(events, watches, results=True)


def _group(
    events: Sequence[Any], watches: Callable[[str], bool], *, results: bool
) -> tuple[Sequence[list[int]], dict[str, Any]]:
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
        pairs = [(k, v) for k, v in zip(ids, values) if k is not None]
        ids, values = [k for k, _ in pairs], [v for _, v in pairs]
    # Reversed, so that the first result of each call id is the one that stays.
    return dict(zip(reversed(ids), reversed(values)))


class _LazyResults(Mapping[str, Any]):
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


def group_steps_loop(
    events: Sequence[Any], watches: Callable[[str], bool]
) -> tuple[list[list[int]], dict[str, Any]]:
    """`group_steps` one event at a time (the reference, and the path that reports a call
    without a string tool name)."""
    steps: list[list[int]] = []
    results: dict[str, Any] = {}
    in_turn = False
    current: list[int] | None = None
    for i, event in enumerate(events):
        etype = event.type
        if etype == TOOL_CALL:
            data = event.data
            name = data.tool_name if data is not None else None
            if not isinstance(name, str):
                raise TrajectoryFormatError(
                    None, f"events[{i}].data.toolName must be a string (got {type_name(name)})"
                )
            if not watches(name):
                continue
            place = place_call(in_turn, current is not None)
            if place == ALONE:
                steps.append([i])
            else:
                if place == OPEN:
                    current = []
                    steps.append(current)
                assert current is not None
                current.append(i)
        elif etype == TOOL_RESULT:
            data = event.data
            call_id = data.tool_call_id if data is not None else None
            if call_id is not None and call_id not in results:
                results[call_id] = data.result
        elif etype == TURN_START:
            in_turn = True
            current = None
        elif etype == TURN_END:
            in_turn = False
            current = None
    return steps, results


def digest(data: bytes) -> bytes:
    """A 16-byte BLAKE2b digest (stable across processes)."""
    return hashlib.blake2b(data, digest_size=16).digest()


_digest = digest


def name_bytes(name: str) -> bytes:
    """A tool name as length-prefixed bytes: a call fingerprint's unambiguous first part."""
    raw = name.encode("utf-8", "surrogatepass")
    return len(raw).to_bytes(8, "little") + raw


_name_bytes = name_bytes


@dataclass(frozen=True, slots=True)
class StepTable:
    """The watched steps of one trajectory, fingerprinted for one config.

    ``ids`` holds one int per step: equal ints are equal fingerprints; every empty step
    has its own negative id, so it equals nothing (not even another empty step).
    """

    steps: Sequence[list[int]]
    results: Mapping[str, Any]
    keys: list[bytes | None]
    ids: list[int]
    calls: int

    @property
    def empty_steps(self) -> int:
        """How many steps have an empty fingerprint."""
        return sum(1 for k in self.keys if k is None)


def build_step_table(events: Sequence[Any], config: MaxRepeatConfig) -> StepTable:
    """Group and fingerprint the watched steps of ``events`` (no I/O)."""
    results: Mapping[str, Any]
    if config.match == "observation":
        steps, results = group_steps(events, _watcher(config))
    else:
        steps, _ = _group(events, _watcher(config), results=False)
        results = _LazyResults(events)
    keys = fingerprint_keys(events, steps, results, config)
    if None in keys:
        intern: dict[bytes, int] = {}
        ids: list[int] = []
        for i, key in enumerate(keys):
            if key is None:
                ids.append(-1 - i)
            else:
                ids.append(intern.setdefault(key, len(intern)))
    else:
        # Equal keys get the id of their first step (ids need only be equal or not).
        ids = list(map({}.setdefault, keys, count()))  # type: ignore[arg-type]
    n_calls = len(steps) if isinstance(steps, SingleCallSteps) else sum(map(len, steps))
    return StepTable(steps, results, keys, ids, n_calls)


_ONE_DIGEST: Final = (1).to_bytes(8, "little") + (16).to_bytes(8, "little")


def fingerprint_keys(
    events: Sequence[Any],
    steps: Sequence[Sequence[int]],
    results: Mapping[str, Any],
    config: MaxRepeatConfig,
) -> list[bytes | None]:
    """One key per step (None when empty): the sorted call digests, joined.

    A call's digest is computed once per distinct (tool, value) pair: the input's bytes
    of an argument or observation (a Raw slice) look up the digest of its canonical bytes,
    so a loop repeating one action hashes it once.
    """
    mode = config.match
    period = config.max_cycle_period
    name_cache: dict[str, bytes] = {}
    single: dict[Any, bytes | None] = {}
    keys: list[bytes | None] = []

    def nbytes(name: str) -> bytes:
        nb = name_cache.get(name)
        if nb is None:
            nb = name_cache[name] = _name_bytes(name)
        return nb

    if mode == "name":
        if isinstance(steps, SingleCallSteps):
            names = list(map(_NAME, map(_DATA, map(events.__getitem__, steps.calls))))
            for name in set(names):
                single[name] = step_key([nbytes(name)])
            return list(map(single.__getitem__, names))
        for step in steps:
            keys.append(step_key([nbytes(events[i].data.tool_name) for i in step]))
        return keys

    args_mode = mode == "name-args"
    cache: dict[Any, Any] = {}
    # [lookups, hits, caching]: a trajectory whose values hardly repeat stops paying
    # for the lookups after a sample (the cache only saves work, never changes a digest).
    stats = [0, 0, True]
    empty_digests: dict[str, bytes] = {}
    get = results.get
    raw_type = msgspec.Raw

    def call_digest(i: int) -> bytes | None:
        """The digest of call ``i``; None for an empty observation (observation mode).
        Cached by the input's bytes of the value: repeats of one action hash once."""
        data = events[i].data
        name = data.tool_name
        if args_mode:
            value = data.arguments
        else:
            call_id = data.tool_call_id
            value = get(call_id, MISSING) if call_id is not None else MISSING
        kind = type(value)
        ck: Any = None
        if stats[2]:
            if kind is raw_type:
                ck = nbytes(name) + bytes(value)
            elif kind is str:
                ck = (name, value)
        if ck is not None:
            hit = cache.get(ck, _NO)
            stats[0] += 1
            if hit is not _NO:
                stats[1] += 1
                return cast("bytes | None", hit)
            if stats[0] == _CACHE_SAMPLE and stats[1] * 8 < stats[0]:
                stats[2] = False
                cache.clear()
        if args_mode:
            out: bytes | None = _digest(nbytes(name) + canonical_bytes(value))
        else:
            body = None if value is MISSING else observation_bytes(value)
            out = None if body is None else _digest(nbytes(name) + body)
        if ck is not None:
            cache[ck] = out
        return out

    def empty_digest(name: str) -> bytes:
        d = empty_digests.get(name)
        if d is None:
            d = empty_digests[name] = _digest(nbytes(name) + b"\x00no-observation")
        return d

    if isinstance(steps, SingleCallSteps):
        for i in steps.calls:
            d = call_digest(i)
            keys.append(None if d is None else _ONE_DIGEST + d)  # empty only when observing
        return keys
    for step in steps:
        digests: list[bytes] = []
        empties = 0
        for i in step:
            d = call_digest(i)
            if d is None:
                empties += 1
                d = empty_digest(events[i].data.tool_name)
            digests.append(d)
        if mode == "observation" and step_is_empty(empties, len(step), period):
            keys.append(None)
        elif len(digests) == 1:
            keys.append(_ONE_DIGEST + digests[0])
        else:
            keys.append(step_key(digests))
    return keys


_NO: Final = object()
#: Lookups after which a digest cache with fewer than 1 hit in 8 is dropped.
_CACHE_SAMPLE: Final = 4096


def step_key(digests: list[bytes]) -> bytes:
    """The key of a non-empty step from its calls' digests (sorts ``digests`` in place).

    >>> step_key([b"b", b"a"]) == step_key([b"a", b"b"])
    True
    """
    if len(digests) > 1:
        digests.sort()
    # Count- and length-prefixed: an unambiguous encoding of the multiset, so that
    # no two different multisets share a key (name-mode entries vary in length).
    return len(digests).to_bytes(8, "little") + b"".join(
        len(d).to_bytes(8, "little") + d for d in digests
    )


def make_steps(
    events: Sequence[Any], table: StepTable, *, decode: bool = False
) -> tuple[Step, ...]:
    """The `Step` values of a table (built on demand: reports need them).

    Arguments and observations read from a file may still be the input's bytes
    (``msgspec.Raw``): ``decode`` turns them into plain values, as the public
    ``maxrepeat.steps()`` hands out; reports leave them, and decode only what they show.
    """
    plain = decode_value if decode else _same
    out: list[Step] = []
    for index, (step, key) in enumerate(zip(table.steps, table.keys)):
        calls = []
        for i in step:
            data = events[i].data
            call_id = data.tool_call_id
            obs = table.results.get(call_id, MISSING) if call_id is not None else MISSING
            calls.append(Call(i, data.tool_name, call_id, plain(data.arguments),
                              obs if obs is MISSING else plain(obs)))
        fp = Fingerprint(_digest(key)) if key is not None else None
        out.append(Step(index, tuple(calls), fp))
    return tuple(out)


def _same(value: Any) -> Any:
    return value
