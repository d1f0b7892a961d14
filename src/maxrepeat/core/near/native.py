"""Near-duplicate step tables by the C extension (core/_near.c), for `build_step_table`
when the native path is active: the bridge between the config and ``near_ids`` /
``near_keys``, whose fallbacks are the pure path's own functions (core/near/steps.py), so
both paths give the same keys. See docs/design/native.md, "Near-duplicate keys".
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from functools import partial
from typing import Any

import msgspec

from ..canonical import canonical_bytes, decode_value, is_empty
from ..config import MaxRepeatConfig
from ..fingerprints import NativeKeys, StepTable, name_bytes
from ..steps import LazyResults, SingleCallSteps, watcher
from .matching import Transform
from .normalizers import native_mask
from .steps import arguments_body

__all__ = ["native_near_table"]


def native_near_table(native: Any, events: Sequence[Any],
                      config: MaxRepeatConfig) -> StepTable | None:
    """`build_step_table` with near-duplicate settings by the C extension (core/_near.c),
    or None when the pure path must run: settings whose rewrite of a string depends on
    more than the string (``replace`` is user code, ``similarity`` keeps clusters), a
    normalizer without C matchers (`native_mask` is None), an unusual trajectory, or a
    value the reference cannot compare.

    C only proves strings unchanged: a value holding a string that a normalizer could
    change is rewritten and encoded here, by the same functions as the pure path
    (``fallback_*``), so both paths give the same keys (tests/core/near/test_near_native.py). As for
    exact matching (``build_ids``), grading gets the step ids (calls hashed by a fast
    128-bit hash of the parts of their keys) and the first results; the BLAKE2b keys
    (``near_keys``) are made when something reads them (`_NearKeys`).
    """
    near = config.near
    assert near is not None
    if near.replace or near.similarity is not None or config.match == "name" \
            or native_mask(near.normalizers) is None:
        return None
    mode, mask, *callbacks = _native_args(config)
    watches = watcher(config) if config.patterns else None
    got = native.near_ids(events, mode, config.max_cycle_period, watches, mask, msgspec.Raw,
                          *callbacks)
    if got is None:
        return None
    shape, single, raw_ids, found, n_calls, empty = got
    # int64 bytes, as build_ids gives them: no int object per step
    ids = array("q", raw_ids)
    steps: Sequence[list[int]]
    if single:
        calls = array("q", shape)
        steps = SingleCallSteps(calls)
    else:
        steps = shape
    results: Any = found if found is not None else LazyResults(events)
    keys_args = (events, steps, single, mode, config.max_cycle_period, mask, msgspec.Raw,
                 *callbacks)
    return StepTable(steps, results, _NearKeys(native, keys_args, events, config, len(ids)),
                     ids, n_calls, empty)


def _native_args(config: MaxRepeatConfig) -> tuple[Any, ...]:
    """(mode, normalizer mask, tool_info, fallback_args, fallback_obs) of ``near_ids``
    and ``near_keys`` for one config."""
    near = config.near
    assert near is not None
    transform = Transform(near)  # pure here (no similarity): its cache only saves work
    text = transform.text if near.rewrites_strings else None

    def tool_info(name: str) -> tuple[bytes, tuple[bytes, ...]]:
        ignored = near.ignored(name) if config.match == "name-args" else frozenset()
        return name_bytes(name), tuple(k.encode("utf-8", "surrogatepass") for k in sorted(ignored))

    def fallback_obs(result: Any) -> bytes | None:
        value = decode_value(result)
        value = text(value) if text is not None and type(value) is str \
            else transform.value(value)
        return None if is_empty(value) else canonical_bytes(value)

    mode = (2 if config.match == "observation" else 3 if near.observation else 1)
    mask = native_mask(near.normalizers)
    assert mask is not None  # native_near_table declines otherwise
    return (mode, mask, tool_info, partial(arguments_body, transform),
            fallback_obs)


class _NearKeys(NativeKeys):
    """The keys of a table built by ``near_ids``: made by ``near_keys`` (the reference's
    bytes) the first time one is read, or by the pure path if it hands them back."""

    __slots__ = ("_args",)

    def __init__(self, native: Any, args: tuple[Any, ...], events: Sequence[Any],
                 config: MaxRepeatConfig, n: int) -> None:
        super().__init__(native, events, config, n)
        self._args = args

    def _all(self) -> list[bytes | None]:
        if self._keys is None:
            events, steps, single, *rest = self._args
            # near_keys takes build_table's shape: a list of call indices when single
            shape = steps.calls.tolist() if single else steps
            got = self._native.near_keys(events, shape, single, *rest)
            if got is None:  # a value the reference rejects: near_ids handed it back too
                from ..fingerprints import build_step_table_pure

                got = (list(build_step_table_pure(self._events, self._config).keys), None)
            self._keys = list(got[0])
        return self._keys
