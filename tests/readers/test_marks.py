"""`readers._marks.Marks`: membership is the same whichever way it is answered (the
native extension's aligned scan, the pure path's aligned ``find``, the set built after
many lookups), including marks that occur only across word boundaries."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat.core import accel
from maxrepeat.readers._marks import _SCANS, SIZE, Marks


def _naive(data: bytes, item: bytes) -> bool:
    return any(data[i:i + SIZE] == item for i in range(0, len(data), SIZE))


# few distinct byte values, so that marks recur, aligned and not
_words = st.lists(st.binary(min_size=SIZE, max_size=SIZE).map(
    lambda b: bytes(x % 3 for x in b)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(words=_words, probes=st.lists(st.binary(min_size=SIZE, max_size=SIZE).map(
    lambda b: bytes(x % 3 for x in b)), max_size=10), shift=st.integers(1, SIZE - 1))
def test_membership_is_the_same_on_every_path(words: list[bytes], probes: list[bytes],
                                              shift: int) -> None:
    data = b"".join(words)
    # a probe made of two neighbouring words' halves occurs unaligned only (or also aligned)
    if len(data) >= 2 * SIZE:
        probes = [*probes, data[shift:shift + SIZE]]
    probes += words[:3]
    was = accel.use_native(True)
    try:
        for native in ((False, True) if accel.available() else (False,)):
            accel.use_native(native)
            marks = Marks(data)
            for item in probes:
                assert (item in marks) == _naive(data, item), (native, item)
            many = Marks(data)
            for _ in range(_SCANS + 1):  # past the scans: the set answers
                assert (b"\xff" * SIZE in many) is False
            for item in probes:
                assert (item in many) == _naive(data, item)
    finally:
        accel.use_native(was)


def test_the_native_scan_wants_a_whole_mark() -> None:
    if not accel.available():
        pytest.skip("the native extension is not built")
    from maxrepeat.core import _native

    with pytest.raises(ValueError):
        _native.has_mark(b"x" * 32, b"x" * 8)
    word = b"abcdefgh12345678"
    assert _native.has_mark(word * 3 + b"tail", word)
    assert not _native.has_mark(word * 3 + b"tail", word[8:] + word[:8])  # unaligned only
    assert not _native.has_mark(b"", word)
    assert not _native.has_mark(word[:8] + b"x" * 8, word)  # half a mark is not the mark
