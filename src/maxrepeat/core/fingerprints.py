"""Fingerprints (spec §3): what makes two steps "the same".

A step's fingerprint is the multiset of its calls' fingerprints. Call fingerprints are
16-byte BLAKE2b digests of canonical bytes (stable across processes, unlike ``hash``); a
step's key is its sorted digests joined, interned to a small int for the pattern search
(`StepTable.ids`). The keys are made in `_stepkeys` (re-exported here); this module
builds a trajectory's `StepTable` on them, by the C extension when it can.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, overload

import msgspec

from . import accel
from ._stepkeys import digest, fingerprint_keys, intern_ids, name_bytes, step_key
from .canonical import canonical_bytes, decode_value, observation_bytes
from .config import MaxRepeatConfig
from .steps import (
    MISSING,
    Call,
    Fingerprint,
    LazyResults,
    SingleCallSteps,
    Step,
    group_steps,
    watcher,
)

__all__ = [
    "StepTable",
    "build_step_table",
    "build_step_table_pure",
    "fingerprint_keys",
    "make_steps",
    "intern_ids",
    "step_key",
    "name_bytes",
    "digest",
]


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class StepTable(msgspec.Struct, frozen=True):
    """The watched steps of one trajectory, fingerprinted for one config.

    ``ids`` holds one int per step: equal ints are equal fingerprints; every empty step
    has its own negative id, so it equals nothing (not even another empty step).
    """

    steps: Sequence[list[int]]
    results: Mapping[str, Any]
    keys: Sequence[bytes | None]
    ids: Sequence[int]
    calls: int
    #: how many steps are empty, when known (-1: counted when asked)
    empty: int = -1

    @property
    def empty_steps(self) -> int:
        """How many steps have an empty fingerprint."""
        if self.empty >= 0:
            return self.empty
        return sum(1 for i in self.ids if i < 0)  # empty steps have negative ids


def build_step_table(events: Sequence[Any], config: MaxRepeatConfig) -> StepTable:
    """Group and fingerprint the watched steps of ``events`` (no I/O): by the native fast
    path when it is active (`core.accel`), else (and for what it hands back) in Python."""
    native = accel.native
    if native is not None and config.near is None:
        table = _native_table(native, events, config)
        if table is not None:
            return table
    elif native is not None and config.match != "name":
        from .near.native import native_near_table  # it builds on this module

        table = native_near_table(native, events, config)
        if table is not None:
            return table
    return build_step_table_pure(events, config)


_MODES: Final = {"name": 0, "name-args": 1, "observation": 2}


def _native_table(native: Any, events: Sequence[Any], config: MaxRepeatConfig) -> StepTable | None:
    """`build_step_table_pure` done by the C extension; None when the trajectory has
    something unusual (a call without data or without a string tool name) that the pure
    path reports.

    Grading needs the ids, not the keys: ``build_ids`` numbers the steps by a fast
    128-bit hash of the same canonical bytes, and keeps the first results by call id in
    a C table; the keys (BLAKE2b, published as `Step.fingerprint`) are made by
    ``build_table`` only when something reads them (`NativeKeys`)."""
    out = native.build_ids(
        events, _MODES[config.match], config.max_cycle_period,
        watcher(config) if config.patterns else None, msgspec.Raw, canonical_bytes,
        observation_bytes, name_bytes)
    if out is None:
        return None
    shape, single, found, raw_ids, n_calls, empty = out
    # int64 arrays, not lists: no int object per step (and none for the cyclic GC to walk)
    ids = array("q")
    ids.frombytes(raw_ids)
    steps: Sequence[list[int]]
    if single:
        calls = array("q")
        calls.frombytes(shape)
        steps = SingleCallSteps(calls)
    else:
        steps = shape
    results: Mapping[str, Any] = found if found is not None else LazyResults(events)
    return StepTable(steps, results, NativeKeys(native, events, config, len(ids)), ids, n_calls,
                     empty)


class NativeKeys(Sequence["bytes | None"]):
    """The keys of a table built by ``build_ids``, made (by the C ``build_table``, the
    same bytes as the reference's) the first time one is read."""

    __slots__ = ("_native", "_events", "_config", "_n", "_keys")

    def __init__(self, native: Any, events: Sequence[Any], config: MaxRepeatConfig,
                 n: int) -> None:
        self._native = native
        self._events = events
        self._config = config
        self._n = n
        self._keys: list[bytes | None] | None = None

    def _all(self) -> list[bytes | None]:
        if self._keys is None:
            table = _native_keyed_table(self._native, self._events, self._config)
            if table is None:  # pragma: no cover - build_ids would have handed it back
                table = build_step_table_pure(self._events, self._config)
            self._keys = list(table.keys)
        return self._keys

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> bytes | None: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[bytes | None]: ...
    def __getitem__(self, index: int | slice) -> bytes | None | Sequence[bytes | None]:
        return self._all()[index]

    def __iter__(self) -> Iterator[bytes | None]:
        return iter(self._all())


def _native_keyed_table(native: Any, events: Sequence[Any], config: MaxRepeatConfig
                        ) -> StepTable | None:
    """The table with its BLAKE2b keys, by the C extension (None: the pure path must run)."""
    out = native.build_table(
        events, _MODES[config.match], config.max_cycle_period,
        watcher(config) if config.patterns else None, msgspec.Raw, canonical_bytes,
        observation_bytes, name_bytes)
    if out is None:
        return None
    shape, single, found, keys, ids, n_calls = out
    steps: Sequence[list[int]] = SingleCallSteps(shape) if single else shape
    results: Mapping[str, Any] = found if found is not None else LazyResults(events)
    return StepTable(steps, results, keys, ids, n_calls)


def build_step_table_pure(events: Sequence[Any], config: MaxRepeatConfig) -> StepTable:
    """`build_step_table` in pure Python: the reference the native path must equal."""
    results: Mapping[str, Any]
    if config.match == "observation":
        steps, results = group_steps(events, watcher(config))
    else:
        steps, _ = group_steps(events, watcher(config), results=False)
        results = LazyResults(events)
    if config.near is not None and config.match != "name":
        from .near.steps import near_keys  # it builds on this module

        keys = near_keys(events, steps, config)
    else:
        keys = fingerprint_keys(events, steps, results, config)
    n_calls = len(steps) if isinstance(steps, SingleCallSteps) else sum(map(len, steps))
    return StepTable(steps, results, keys, intern_ids(keys), n_calls)


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
    for index, (step, key) in enumerate(zip(table.steps, table.keys, strict=True)):
        calls = []
        for i in step:
            data = events[i].data
            call_id = data.tool_call_id
            obs = table.results.get(call_id, MISSING) if call_id is not None else MISSING
            calls.append(Call(i, data.tool_name, call_id, plain(data.arguments),
                              obs if obs is MISSING else plain(obs)))
        fp = Fingerprint(digest(key)) if key is not None else None
        out.append(Step(index, tuple(calls), fp))
    return tuple(out)


def _same(value: Any) -> Any:
    return value
