"""Step keys with near-duplicate matching on (`grade()`'s path when a grader sets one of
the near-duplicate keys; the exact path in ``steps.py`` stays as it is).

The values are rewritten by one `Transform` in event order, exactly as the `Monitor`
meets them: observations are the first result of each call id in the order the results
stand (every result, watched or not, as the monitor records each when it arrives), and
arguments are the watched calls' in order. A value that cannot be compared is an error
only if a watched step uses it, as in the monitor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from .._stepkeys import digest, name_bytes, step_key
from ..canonical import canonical_bytes, comparison_value, decode_value, is_empty, normalized_bytes
from ..config import MaxRepeatConfig
from ..events import TOOL_RESULT
from ..rules import step_is_empty
from ..steps import SingleCallSteps
from .matching import Transform

__all__ = ["near_keys", "observed_key", "arguments_body", "NO_OBSERVATION"]

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
            out[cid] = _result_key(event.data.result, transform, text)
        except (RecursionError, ValueError, TypeError) as exc:
            out[cid] = _Unusable(exc)
    return out


def _result_key(result: Any, transform: Transform, text: Any) -> bytes | None:
    """The digest of a result after the transform (None: empty); ``text`` is the
    transform's string rewrite when it has one. Raises what an unusable value raises."""
    value = decode_value(result)
    # a string (the commonest observation) skips the walk over JSON values
    value = text(value) if text is not None and type(value) is str else transform.value(value)
    return None if is_empty(value) else digest(canonical_bytes(value))


def _each_step(steps: Sequence[Sequence[int]]) -> Iterable[Sequence[int]]:
    """The steps' event indices, one list per step."""
    return ([i] for i in steps.calls) if isinstance(steps, SingleCallSteps) else steps


def near_keys(
    events: Sequence[Any], steps: Sequence[Sequence[int]], config: MaxRepeatConfig
) -> list[bytes | None]:
    """One key per step (None when empty), with the config's near-duplicate settings."""
    near = config.near
    assert near is not None
    transform = Transform(near)
    if config.match == "name-args" and near.observation:
        return _with_observation(events, steps, config, transform)
    if config.match == "name-args":
        return _name_args_keys(events, steps, transform)
    answers = observation_keys(events, transform)
    period = config.max_cycle_period
    keys: list[bytes | None] = []
    names: dict[str, bytes] = {}
    for step in _each_step(steps):
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


def _name_args_keys(events: Sequence[Any], steps: Sequence[Sequence[int]],
                    transform: Transform) -> list[bytes | None]:
    """``name-args`` keys: each call's name and arguments after the transform."""
    keys: list[bytes | None] = []
    names: dict[str, bytes] = {}
    raw_type = msgspec.Raw
    for step in _each_step(steps):
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


def arguments_body(transform: Transform, name: str, raw: Any) -> bytes:
    """A call's arguments after the transform, as canonical bytes (`reduce_call`'s)."""
    if type(raw) is msgspec.Raw:
        # read from a file: decoded normalized, encoded without a second walk
        return normalized_bytes(transform.arguments(name, comparison_value(raw)))
    return canonical_bytes(transform.arguments(name, decode_value(raw)))


def _arguments_digest(transform: Transform, name: str, nb: bytes, raw: Any) -> bytes:
    """A call's name-args digest after the transform (as `reduce_call` makes it)."""
    return digest(nb + arguments_body(transform, name, raw))


def _with_observation(events: Sequence[Any], steps: Sequence[Sequence[int]],
                      config: MaxRepeatConfig, transform: Transform) -> list[bytes | None]:
    """``name-args`` with ``with_observation``: a call's key is its name-args digest and
    its first result's (`observed_key`), so a repeat needs the same action and the same
    answer (a call with none compares by its action and the no-observation mark). One pass in event
    order over the watched calls and every first result, as the monitor meets them (one
    `Transform`: the similarity clusters see that order), and
    an unusable value raises where the monitor fails: at its watched call, or at the
    result of an already watched call."""
    answers, args = _observation_pass(events, steps, transform)
    # No step is empty: a call without an answer (or with an empty one) still has its
    # action, and is keyed by it and the no-observation mark (a think tool's empty
    # answer between failing calls repeats as the rest of the cycle does).
    keys: list[bytes | None] = []
    for step in _each_step(steps):
        digests = []
        for i in step:
            cid = events[i].data.tool_call_id
            digests.append(observed_key(args[i], answers.get(cid) if cid is not None else None))
        keys.append(_ONE_DIGEST + digests[0] if len(digests) == 1 else step_key(digests))
    return keys


def _observation_pass(events: Sequence[Any], steps: Sequence[Sequence[int]],
                      transform: Transform) -> tuple[dict[str, Any], dict[int, bytes]]:
    """(the first result's key per call id, the name-args digest per watched call), in
    one pass in event order (see `_with_observation`)."""
    watched = {i for step in steps for i in step}
    text = transform.text if transform.near.rewrites_strings else None
    answers: dict[str, Any] = {}
    called: set[str] = set()
    args: dict[int, bytes] = {}
    names: dict[str, bytes] = {}
    for i, event in enumerate(events):
        data = event.data
        if event.type == TOOL_RESULT:
            cid = data.tool_call_id if data is not None else None
            if cid is None or cid in answers:
                continue
            try:
                answers[cid] = _result_key(data.result, transform, text)
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
    return answers, args


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
    from ..fingerprints import build_step_table  # the exact path, for the comparison

    if config.near is None or config.match == "name":
        return None
    near = [k for k in build_step_table(trajectory.events, config).keys if k is not None]
    plain = MaxRepeatConfig(config.max, config.max_cycle_period, config.match, config.tools)
    exact = {k for k in build_step_table(trajectory.events, plain).keys if k is not None}
    if len(near) >= 3 and len(set(near)) == 1 and len(exact) > 1:
        return len(near), len(exact)
    return None
