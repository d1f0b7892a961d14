"""How `_windows` decodes what its scanner cut: a window of whole ``events`` items as the
document's own struct (``{"events":[...]}`` as `vally._Traj`, so every event is the
struct the in-memory path makes), a light form of it (call ids and results only, for
the first-results pass), and every other top-level member alone. Whatever msgspec
refuses, or decodes to another shape, raises `_NotWindowed`."""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ..core.steps import events_readable
from .vally import _Traj

__all__ = ["_NotWindowed", "decode_window", "decode_light", "decode_member"]


class _NotWindowed(Exception):
    """This document must be read another way (see `_windows`' docstring)."""


_DECODE_TRAJ: Final = msgspec.json.Decoder(_Traj).decode


def decode_window(items: bytes) -> list[Any]:
    try:
        wire = _DECODE_TRAJ(b'{"events":[' + items + b']}')
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _NotWindowed("window") from None
    events = wire.events
    if events is None or not events_readable(events):
        raise _NotWindowed("events")
    return events


class _LightData(msgspec.Struct, rename="camel", gc=False):
    tool_call_id: str | None = None
    result: msgspec.Raw = None  # type: ignore[assignment]


class _LightEvent(msgspec.Struct, gc=False):
    type: str
    data: _LightData | None = None


class _LightTraj(msgspec.Struct, gc=False):
    events: list[_LightEvent] | None = None


_DECODE_LIGHT: Final = msgspec.json.Decoder(_LightTraj).decode


def decode_light(items: bytes) -> list[Any]:
    try:
        wire = _DECODE_LIGHT(b'{"events":[' + items + b']}')
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _NotWindowed("window") from None
    if wire.events is None:
        raise _NotWindowed("events")
    return wire.events


def decode_member(key: bytes, value: bytes) -> _Traj:
    try:
        return _DECODE_TRAJ(b"{" + key + b":" + value + b"}")
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _NotWindowed("member") from None
