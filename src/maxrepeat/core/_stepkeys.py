"""Step keys (spec §3): the bytes that make two steps "the same".

A call's fingerprint is a 16-byte BLAKE2b digest of its canonical bytes (stable across
processes, unlike ``hash``); a step's key is its sorted digests joined (`step_key`),
interned to a small int for the pattern search (`intern_ids`). `fingerprints` builds
the table of a trajectory's steps on these (in C when it can: the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import count
from operator import attrgetter
from typing import Any, Final, cast

import msgspec

from .canonical import canonical_bytes, observation_bytes
from .config import MaxRepeatConfig
from .rules import step_is_empty
from .steps import MISSING, SingleCallSteps

__all__ = ["digest", "name_bytes", "intern_ids", "fingerprint_keys", "step_key"]

try:
    # The C module behind hashlib.blake2b: importing hashlib also loads OpenSSL's
    # _hashlib (~2 ms of every start; start-up is measured in bench/RESULTS.md).
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

_DATA: Final = attrgetter("data")
_NAME: Final = attrgetter("tool_name")


def digest(data: bytes) -> bytes:
    """A 16-byte BLAKE2b digest (stable across processes)."""
    return blake2b(data, digest_size=16).digest()


def name_bytes(name: str) -> bytes:
    """A tool name as length-prefixed bytes: a call fingerprint's unambiguous first part."""
    raw = name.encode("utf-8", "surrogatepass")
    return len(raw).to_bytes(8, "little") + raw


def intern_ids(keys: list[bytes | None]) -> list[int]:
    """One int per step key: equal keys, equal ints; each empty key its own negative int.

    >>> intern_ids([b"a", None, b"a", b"b"])
    [0, -2, 0, 1]
    """
    if None in keys:
        intern: dict[bytes, int] = {}
        ids: list[int] = []
        for i, key in enumerate(keys):
            if key is None:
                ids.append(-1 - i)
            else:
                ids.append(intern.setdefault(key, len(intern)))
        return ids
    # Equal keys get the id of their first step (ids need only be equal or not).
    return list(map({}.setdefault, keys, count()))  # type: ignore[arg-type]


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
    if config.match == "name":
        return _name_keys(events, steps)
    mode = config.match
    nbytes = _name_bytes_cached()
    args_mode = mode == "name-args"
    cache: dict[Any, Any] = {}
    # [lookups, hits, caching]: a trajectory whose values hardly repeat stops paying
    # for the lookups after a sample (the cache only saves work, never changes a digest).
    stats = [0, 0, True]
    empty_digests: dict[str, bytes] = {}
    get = results.get
    raw_type = msgspec.Raw

    def calldigest(i: int) -> bytes | None:
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
            out: bytes | None = digest(nbytes(name) + canonical_bytes(value))
        else:
            body = None if value is MISSING else observation_bytes(value)
            out = None if body is None else digest(nbytes(name) + body)
        if ck is not None:
            cache[ck] = out
        return out

    def emptydigest(name: str) -> bytes:
        d = empty_digests.get(name)
        if d is None:
            d = empty_digests[name] = digest(nbytes(name) + b"\x00no-observation")
        return d

    if isinstance(steps, SingleCallSteps):  # empty only when observing
        return [None if d is None else _ONE_DIGEST + d for d in map(calldigest, steps.calls)]
    empty_after = config.max_cycle_period if mode == "observation" else None
    return [_joined(events, step, calldigest, emptydigest, empty_after) for step in steps]


def _name_bytes_cached() -> Callable[[str], bytes]:
    """`name_bytes` remembering its answers (a trajectory's tool names repeat)."""
    cache: dict[str, bytes] = {}

    def nbytes(name: str) -> bytes:
        nb = cache.get(name)
        if nb is None:
            nb = cache[name] = name_bytes(name)
        return nb
    return nbytes


def _name_keys(events: Sequence[Any], steps: Sequence[Sequence[int]]) -> list[bytes | None]:
    """`fingerprint_keys` in ``name`` mode: each step's tool names."""
    nbytes = _name_bytes_cached()

    if isinstance(steps, SingleCallSteps):
        names = list(map(_NAME, map(_DATA, map(events.__getitem__, steps.calls))))
        single = {name: step_key([nbytes(name)]) for name in set(names)}
        return list(map(single.__getitem__, names))
    return [step_key([nbytes(events[i].data.tool_name) for i in step]) for step in steps]


def _joined(events: Sequence[Any], step: Sequence[int],
            calldigest: Callable[[int], bytes | None], emptydigest: Callable[[str], bytes],
            empty_after: int | None) -> bytes | None:
    """The key of a step of several calls from their digests; None when observing
    (``empty_after``: the cycle period) and `step_is_empty` says so."""
    digests: list[bytes] = []
    empties = 0
    for i in step:
        d = calldigest(i)
        if d is None:
            empties += 1
            d = emptydigest(events[i].data.tool_name)
        digests.append(d)
    if empty_after is not None and step_is_empty(empties, len(step), empty_after):
        return None
    if len(digests) == 1:
        return _ONE_DIGEST + digests[0]
    return step_key(digests)


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
