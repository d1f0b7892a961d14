"""The extension's module shape (issue 28, item 1): multi-phase initialization, its one
type a heap type made per module, and its scratch space per call
(docs/design/native.md, "Module state and threads")."""

from __future__ import annotations

import pytest

from maxrepeat.core import accel

pytestmark = pytest.mark.skipif(not accel.available(), reason="the native extension is not built")

HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE
IMMUTABLETYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE


def test_first_results_is_an_immutable_heap_type_made_by_the_module() -> None:
    from maxrepeat.core import _native

    kind = _native.FirstResults
    assert kind.__flags__ & HEAPTYPE and kind.__flags__ & IMMUTABLETYPE
    assert kind.__module__ == "maxrepeat.core._native"
    with pytest.raises(TypeError):
        kind()  # made by build_ids / near_ids only
    with pytest.raises(TypeError):
        kind.extra = 1  # type: ignore[attr-defined]


def test_the_module_is_initialized_in_phases() -> None:
    """PEP 489: a module object made from the spec is new and empty until its exec runs
    (a single-phase module would come back initialized, as a copy of the first), and each
    module object makes its own type."""
    import importlib.util

    from maxrepeat.core import _native

    spec = importlib.util.find_spec("maxrepeat.core._native")
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    assert fresh is not _native and not hasattr(fresh, "FirstResults")
    spec.loader.exec_module(fresh)
    assert fresh.FirstResults is not _native.FirstResults
    assert fresh.KEY_HASH_BITS == _native.KEY_HASH_BITS
