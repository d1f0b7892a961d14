# Type stub of the optional C extension maxrepeat.core._native (src/maxrepeat/core/_native.c).
from collections.abc import Callable, Sequence
from typing import Any

def build_table(
    events: Sequence[Any],
    mode: int,
    period: int,
    watches: Callable[[str], bool] | None,
    raw_type: type,
    canonical: Callable[[Any], bytes],
    observation: Callable[[Any], bytes | None],
    name_bytes: Callable[[str], bytes],
    /,
) -> tuple[list[int] | list[list[int]], bool, dict[str, Any] | None, list[bytes | None],
           list[int], int] | None: ...
def stretches(ids: Any, period: int, least: int, /) -> list[tuple[int, int]]: ...
def canonical(raw: bytes, observe: bool, /) -> bytes | None | bool: ...
def digest(data: bytes, /) -> bytes: ...
def events_readable(events: Sequence[Any], /) -> bool: ...
