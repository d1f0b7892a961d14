"""Which path grades: the native fast path or the pure-Python reference.

``core._native`` is an optional C extension (built by ``pip install .`` where a C compiler
exists) that accelerates the hot loop: grouping steps and fingerprinting them
(`core.fingerprints.build_step_table`) and the stretches of the run search
(`core.search`). The pure-Python functions stay the reference and the fallback: the
extension hands every value it cannot canonicalize with certainty back to them, and both
paths give identical results (tests/core/test_native.py). ``MAXREPEAT_PURE=1`` in the
environment selects the pure path (read by the package's ``__init__``, outside the pure
core). See docs/design/native.md.

>>> description() in ("native fast path", "pure Python")
True
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["native", "available", "use_native", "description"]

try:
    from . import _native as _module
except ImportError:  # not built (no C compiler at install time): the pure path runs
    _module = None  # type: ignore[assignment]

_built: ModuleType | None = _module
#: the native module when the fast path is active, else None (read at each use)
native: ModuleType | None = _built


def available() -> bool:
    """Whether the native extension was built and can be imported.

    >>> isinstance(available(), bool)
    True
    """
    return _built is not None


def use_native(enabled: bool) -> bool:
    """Turn the native fast path on (when built) or off; returns whether it was on.

    >>> was = use_native(False); description()
    'pure Python'
    >>> _ = use_native(was)
    """
    global native
    was = native is not None
    native = _built if enabled else None
    return was


def description() -> str:
    """The active path, as ``maxrepeat --version`` names it.

    >>> description() in ("native fast path", "pure Python")
    True
    """
    return "native fast path" if native is not None else "pure Python"
