"""Step keys with near-duplicate matching on (`grade()`'s path when a grader sets one of
the near-duplicate keys; the exact path in ``steps.py`` stays as it is).

The values are rewritten by one `Transform` in event order, exactly as the `Monitor`
meets them: observations are the first result of each call id in the order the results
stand (every result, watched or not, as the monitor records each when it arrives), and
arguments are the watched calls' in order. A value that cannot be compared is an error
only if a watched step uses it, as in the monitor.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

import msgspec

from .canonical import (canonical_bytes, comparison_value, decode_value, is_empty,
                        normalized_bytes)
from .config import MaxRepeatConfig
from .events import TOOL_RESULT
from .neardup import Transform
from .rules import step_is_empty
from .steps import LazyResults, SingleCallSteps, watcher
from .fingerprints import NativeKeys, StepTable, digest, name_bytes, step_key
from .normalizers import native_mask

__all__ = ["near_keys", "native_near_table", "observed_key", "NO_OBSERVATION"]

NO_OBSERVATION: Final = b"\x00no-observation"
#: `step_key` of one 16-byte digest is this prefix and the digest
_ONE_DIGEST: Final = (1).to_bytes(8, "little") + (16).to_bytes(8, "little")


def observed_key(name_digest: bytes, key: bytes | None) -> bytes:
    """An observation-mode call digest from the tool's name bytes and the observation's
    digest (None: missing or empty). The monitor builds the same bytes."""
    if key is None:
        return digest(name_digest + NO_OBSERVATION)
    return digest(name_digest + b"\x01" + key)


class _Unusable:
    """A first result that cannot be compared: raising it is deferred until it is used."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def observation_keys(events: Sequence[Any], transform: Transform) -> dict[str, Any]:
    """Per call id, the digest of its first result after the transform (None: empty)."""
    out: dict[str, Any] = {}
    text = transform.text if transform.near.rewrites_strings else None
    for event in events:
        if event.type != TOOL_RESULT or event.data is None:
            continue
        cid = event.data.tool_call_id
        if cid is None or cid in out:
            continue
        try:
            value = decode_value(event.data.result)
            # a string (the commonest observation) skips the walk over JSON values
            value = text(value) if text is not None and type(value) is str \
                else transform.value(value)
            out[cid] = None if is_empty(value) else digest(canonical_bytes(value))
        except (RecursionError, ValueError, TypeError) as exc:
            out[cid] = _Unusable(exc)
    return out


def near_keys(
    events: Sequence[Any], steps: Sequence[Sequence[int]], config: MaxRepeatConfig
) -> list[bytes | None]:
    """One key per step (None when empty), with the config's near-duplicate settings."""
    near = config.near
    assert near is not None
    transform = Transform(near)
    keys: list[bytes | None] = []
    names: dict[str, bytes] = {}
    if config.match == "name-args" and near.observation:
        return _with_observation(events, steps, config, transform)
    if config.match == "name-args":
        raw_type = msgspec.Raw
        for step in (([i] for i in steps.calls) if isinstance(steps, SingleCallSteps) else steps):
            digests = []
            for i in step:
                data = events[i].data
                name = data.tool_name
                nb = names.get(name)
                if nb is None:
                    nb = names[name] = name_bytes(name)
                raw = data.arguments
                if type(raw) is raw_type:
                    # read from a file: decoded normalized, encoded without a second walk
                    body = normalized_bytes(transform.arguments(name, comparison_value(raw)))
                else:
                    body = canonical_bytes(transform.arguments(name, decode_value(raw)))
                digests.append(digest(nb + body))
            keys.append(_ONE_DIGEST + digests[0] if len(digests) == 1 else step_key(digests))
        return keys
    answers = observation_keys(events, transform)
    period = config.max_cycle_period
    for step in (([i] for i in steps.calls) if isinstance(steps, SingleCallSteps) else steps):
        digests = []
        empties = 0
        for i in step:
            data = events[i].data
            cid = data.tool_call_id
            key = answers.get(cid) if cid is not None else None
            if isinstance(key, _Unusable):
                raise key.error
            if key is None:
                empties += 1
            nb = names.get(data.tool_name)
            if nb is None:
                nb = names[data.tool_name] = name_bytes(data.tool_name)
            digests.append(observed_key(nb, key))
        if step_is_empty(empties, len(step), period):
            keys.append(None)
        else:
            keys.append(_ONE_DIGEST + digests[0] if len(digests) == 1 else step_key(digests))
    return keys


def _arguments_body(transform: Transform, name: str, raw: Any) -> bytes:
    """A call's arguments after the transform, as canonical bytes (`reduce_call`'s)."""
    if type(raw) is msgspec.Raw:
        # read from a file: decoded normalized, encoded without a second walk
        return normalized_bytes(transform.arguments(name, comparison_value(raw)))
    return canonical_bytes(transform.arguments(name, decode_value(raw)))


def _arguments_digest(transform: Transform, name: str, nb: bytes, raw: Any) -> bytes:
    """A call's name-args digest after the transform (as `reduce_call` makes it)."""
    return digest(nb + _arguments_body(transform, name, raw))


def native_near_table(native: Any, events: Sequence[Any],
                      config: MaxRepeatConfig) -> StepTable | None:
    """`build_step_table` with near-duplicate settings by the C extension (core/_near.c),
    or None when the pure path must run: settings whose rewrite of a string depends on
    more than the string (``replace`` is user code, ``similarity`` keeps clusters), an
    unusual trajectory, or a value the reference cannot compare.

    C only proves strings unchanged: a value holding a string that a normalizer could
    change is rewritten and encoded here, by the same functions as the pure path
    (``fallback_*``), so both paths give the same keys (tests/test_near_native.py). As for
    exact matching (``build_ids``), grading gets the step ids (calls hashed by a fast
    128-bit hash of the parts of their keys) and the first results; the BLAKE2b keys
    (``near_keys``) are made when something reads them (`_NearKeys`).
    """
    near = config.near
    assert near is not None
    if near.replace or near.similarity is not None or config.match == "name":
        return None
    mode, mask, *callbacks = _native_args(config)
    watches = watcher(config) if config.patterns else None
    got = native.near_ids(events, mode, config.max_cycle_period, watches, mask, msgspec.Raw,
                          *callbacks)
    if got is None:
        return None
    shape, single, ids, found, n_calls, _ = got
    steps: Sequence[list[int]] = SingleCallSteps(shape) if single else shape
    results: Any = found if found is not None else LazyResults(events)
    keys_args = (events, shape, single, mode, config.max_cycle_period, mask, msgspec.Raw,
                 *callbacks)
    return StepTable(steps, results, _NearKeys(native, keys_args, events, config, len(ids)),
                     ids, n_calls)


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
    return (mode, native_mask(near.normalizers), tool_info, partial(_arguments_body, transform),
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
            got = self._native.near_keys(*self._args)
            if got is None:  # a value the reference rejects: near_ids handed it back too
                from .fingerprints import build_step_table_pure

                got = (list(build_step_table_pure(self._events, self._config).keys), None)
            self._keys = list(got[0])
        return self._keys


def _with_observation(events: Sequence[Any], steps: Sequence[Sequence[int]],
                      config: MaxRepeatConfig, transform: Transform) -> list[bytes | None]:
    """``name-args`` with ``with_observation``: a call's key is its name-args digest and
    its first result's (`observed_key`), so a repeat needs the same action and the same
    answer (a call with none compares by its action and the no-observation mark). One pass in event order over the watched calls and every first result, as
    the monitor meets them (one `Transform`: the similarity clusters see that order), and
    an unusable value raises where the monitor fails: at its watched call, or at the
    result of an already watched call."""
    watched = {i for step in steps for i in step}
    text = transform.text if transform.near.rewrites_strings else None
    answers: dict[str, Any] = {}
    called: set[str] = set()
    args: dict[int, bytes] = {}
    names: dict[str, bytes] = {}
    for i, event in enumerate(events):
        data = event.data
        if event.type == TOOL_RESULT:
            if data is None:
                continue
            cid = data.tool_call_id
            if cid is None or cid in answers:
                continue
            try:
                value = decode_value(data.result)
                value = text(value) if text is not None and type(value) is str \
                    else transform.value(value)
                answers[cid] = None if is_empty(value) else digest(canonical_bytes(value))
            except (RecursionError, ValueError, TypeError) as exc:
                if cid in called:
                    raise
                answers[cid] = _Unusable(exc)
        elif i in watched:
            name = data.tool_name
            nb = names.get(name)
            if nb is None:
                nb = names[name] = name_bytes(name)
            args[i] = _arguments_digest(transform, name, nb, data.arguments)
            cid = data.tool_call_id
            if cid is not None:
                called.add(cid)
                key = answers.get(cid)
                if isinstance(key, _Unusable):
                    raise key.error
    # No step is empty: a call without an answer (or with an empty one) still has its
    # action, and is keyed by it and the no-observation mark (a think tool's empty
    # answer between failing calls repeats as the rest of the cycle does).
    keys: list[bytes | None] = []
    for step in (([i] for i in steps.calls) if isinstance(steps, SingleCallSteps) else steps):
        digests = []
        for i in step:
            cid = events[i].data.tool_call_id
            digests.append(observed_key(args[i], answers.get(cid) if cid is not None else None))
        keys.append(_ONE_DIGEST + digests[0] if len(digests) == 1 else step_key(digests))
    return keys


def collapses(trajectory: Any, config: MaxRepeatConfig) -> tuple[int, int] | None:
    """Whether ``config``'s near-duplicate settings make every step of a trajectory equal
    while exact matching tells them apart: (steps, distinct exact fingerprints), or None.

    Only trajectories of at least three non-empty steps count (fewer prove nothing).

    >>> from maxrepeat import tool_call
    >>> from maxrepeat.core.events import Trajectory
    >>> t = Trajectory([tool_call("Bash", str(i), {"command": c}) for i, c in enumerate("abc")])
    >>> cfg = MaxRepeatConfig(2, match="name-args", ignore_arguments={"^Bash$": ["command"]})
    >>> collapses(t, cfg)
    (3, 3)
    """
    from .fingerprints import build_step_table  # the exact path, for the comparison

    if config.near is None or config.match == "name":
        return None
    near = [k for k in build_step_table(trajectory.events, config).keys if k is not None]
    plain = MaxRepeatConfig(config.max, config.max_cycle_period, config.match, config.tools)
    exact = {k for k in build_step_table(trajectory.events, plain).keys if k is not None}
    if len(near) >= 3 and len(set(near)) == 1 and len(exact) > 1:
        return len(near), len(exact)
    return None
