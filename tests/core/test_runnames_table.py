"""The table of names given (`maxrepeat.core.runnames`): exactly a set of digests, in a
few bytes per run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat.core.runnames import _DigestSet

digests = st.one_of(st.integers(1, 2**64 - 1),
                    # the same low bits: long probe chains and wrap-around
                    st.integers(1, 2**20 - 1).map(lambda k: (k << 44) | 5))


@settings(max_examples=300, deadline=None)
@given(st.lists(digests, max_size=300), st.lists(digests, max_size=50))
def test_the_table_is_a_set(added: list[int], probed: list[int]) -> None:
    table, reference = _DigestSet(), set()
    for d in added:
        assert (d in table) == (d in reference)
        table.add(d)
        reference.add(d)
        assert len(table) == len(reference)
    for d in probed + added:
        assert (d in table) == (d in reference)


def test_a_million_names_take_a_few_bytes_each() -> None:
    table = _DigestSet()
    for d in range(1, 1_000_001):
        table.add(d * 0x9E3779B97F4A7C15 % 2**64 or 1)
    assert len(table) == 1_000_000
    assert table._slots.nbytes <= 21 * 1_000_000
