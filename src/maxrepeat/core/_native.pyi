# Type stub of the optional C extension maxrepeat.core._native (src/maxrepeat/core/_native.c).
from collections.abc import Callable, Iterator, Sequence
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
def hash128(data: Any, /) -> bytes: ...
def has_mark(data: Any, mark: Any, /) -> bool: ...
def events_readable(events: Sequence[Any], /) -> bool: ...
def build_ids(
    events: Sequence[Any],
    mode: int,
    period: int,
    watches: Callable[[str], bool] | None,
    raw_type: type,
    canonical: Callable[[Any], bytes],
    observation: Callable[[Any], bytes | None],
    name_bytes: Callable[[str], bytes],
    /,
) -> tuple[bytes | list[list[int]], bool, FirstResults | None, bytes, int, int] | None: ...
def fast_hash(data: bytes, /) -> bytes: ...

#: bits of the key hash: 64, fewer in a build made to force collisions (tests)
KEY_HASH_BITS: int
def fast_canonical(raw: bytes, /) -> bytes | bool: ...

class FirstResults:
    def __len__(self) -> int: ...
    def __getitem__(self, key: str, /) -> Any: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def get(self, key: str, default: Any = None, /) -> Any: ...
    def keys(self) -> list[str]: ...
def scan_json(buf: bytes, pos: int, depth: int, in_str: int, esc: int, first: int, /
              ) -> tuple[int, int, int, int, int]: ...
def near_keys(
    events: Sequence[Any],
    shape: list[int] | list[list[int]],
    single: bool,
    mode: int,
    period: int,
    mask: int,
    raw_type: type,
    tool_info: Callable[[str], tuple[bytes, tuple[bytes, ...]]],
    fallback_args: Callable[[str, Any], bytes],
    fallback_obs: Callable[[Any], bytes | None],
    /,
) -> tuple[list[bytes | None], dict[Any, Any] | None] | None: ...
def near_ids(
    events: Sequence[Any],
    mode: int,
    period: int,
    watches: Callable[[str], bool] | None,
    mask: int,
    raw_type: type,
    tool_info: Callable[[str], tuple[bytes, tuple[bytes, ...]]],
    fallback_args: Callable[[str, Any], bytes],
    fallback_obs: Callable[[Any], bytes | None],
    /,
) -> tuple[bytes | list[list[int]], bool, bytes, FirstResults | None, int,
           int] | None: ...
def near_dirty(text: str, mask: int, /) -> bool: ...
def bloom(bits: bytearray, keys: Sequence[str | None], add: int, /) -> list[int]: ...
def bloom_events(bits: bytearray, events: Sequence[Any], add: int, /) -> list[int]: ...
