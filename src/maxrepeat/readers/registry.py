"""The registry of input formats: `Reader`, the formats found by listing this package
(each reader module declares its own `Reader`; nothing else names it), and content sniffing
(`detect`). Reading an input with the right reader (`read_source`, `read_trajectories`)
is `_reading`.

A module of this package that defines ``READER = Reader(...)`` is a format. Its
``name``, ``order``, ``top`` and ``markers`` are read from that one statement's source
text, so listing the formats and skipping the readers that cannot win a detection
import nothing (start-up is measured: bench/RESULTS.md); the module is imported when its
reader is used. Formats of other packages register under the ``maxrepeat.readers``
entry-point group (name: the format, value: ``module:READER``); package metadata is
read only for a name no module here declares, or when no built-in reader is sure of an
input (see `detect`).

>>> reader_names()[:3]
['vally', 'atif', 'claude-code']
>>> detect(Source.from_bytes(b'{"id": "r", "events": []}')).name
'vally'
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Iterator
from typing import Final

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from ._declared import reader_fields
from .source import HEAD_BYTES, Source

__all__ = ["Reader", "Item", "DECIDED", "SNIFF_LIMIT", "ENTRY_POINTS", "reader_names",
           "reader_modules", "is_format", "get_reader", "all_readers", "detect"]

#: the entry-point group of formats from other packages
ENTRY_POINTS: Final = "maxrepeat.readers"

Item = Trajectory | TrajectoryFormatError


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class Reader(msgspec.Struct, frozen=True):
    """One input format, declared by its module as ``READER``.

    ``sniff(head, source)`` scores how sure the reader is that the input is its format
    (0: not mine; 100: certain); ``read(source)`` yields trajectories and per-record
    errors. ``extensions`` are the file endings a directory walk picks up.

    Detection consults ``markers`` and ``top`` before importing a reader: ``markers`` are
    byte strings one of which is in every head ``sniff`` scores above 0 (empty: no such
    promise), ``top`` the highest score it gives. A reader none of whose markers is in
    the head, or whose ``top`` cannot beat the best score so far, is skipped unimported;
    tests/readers/test_sniff_markers.py checks both against every sniffer. ``order`` places the
    format in listings, and an equal score goes to the lower ``order``.
    """

    name: str
    description: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes, Source], int]
    read: Callable[[Source], Iterator[Item]]
    markers: tuple[bytes, ...] = ()
    top: int = 100
    order: int = 1000


class _Entry(msgspec.Struct, frozen=True):
    """What the registry knows of a format before importing its module."""

    name: str
    module: str
    order: int
    top: int
    markers: tuple[bytes, ...]


_HERE: Final = os.path.dirname(__file__)
#: the modules of this package that are not formats (and do not start with ``_``)
_MACHINERY: Final = frozenset({"registry", "source", "walk"})
#: the fields read from a ``READER = Reader(...)`` statement without importing it
_STATIC: Final = ("name", "order", "top", "markers")
_LOADED: dict[str, Reader] = {}


def _declared(stem: str) -> _Entry | None:
    """The entry of module ``stem`` of this package, read from its source (imported only
    when the source cannot be read so); None when it declares no reader."""
    module = f"{__package__}.{stem}"
    try:
        with open(os.path.join(_HERE, f"{stem}.py"), "rb") as fh:
            fields = reader_fields(fh.read())
    except (OSError, SyntaxError, ValueError):
        reader = getattr(importlib.import_module(module), "READER", None)
        if not isinstance(reader, Reader):
            return None
        fields = {f: getattr(reader, f) for f in _STATIC}
    if fields is None:
        return None
    defaults = {"order": 1000, "top": 100, "markers": ()}
    return _Entry(module=module, **{**defaults, **fields})


@functools.cache
def _table() -> tuple[_Entry, ...]:
    """The built-in formats in ``order`` (listed and read once per process)."""
    stems = (f[:-3] for f in os.listdir(_HERE) if f.endswith(".py")
             and not f.startswith("_") and f[:-3] not in _MACHINERY)
    entries = [e for e in map(_declared, stems) if e is not None]
    return tuple(sorted(entries, key=lambda e: (e.order, e.name)))


@functools.cache
def _plugins() -> dict[str, str]:
    """Formats of other packages: name -> ``module:attribute``, sorted by name (package
    metadata read once per process)."""
    from importlib.metadata import entry_points

    builtin = {e.name for e in _table()}
    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINTS)}
    return dict(sorted((n, v) for n, v in found.items() if n not in builtin))


def reader_names() -> list[str]:
    """The names of every known format: the built-in ones in ``order``, then those of
    other packages' entry points."""
    return [e.name for e in _table()] + list(_plugins())


def reader_modules() -> dict[str, str]:
    """Built-in format name -> the module declaring its reader."""
    return {e.name: e.module for e in _table()}


def is_format(name: str) -> bool:
    """Whether ``name`` is a known format (package metadata read only for a name no
    module here declares)."""
    return any(e.name == name for e in _table()) or name in _plugins()


def get_reader(name: str) -> Reader:
    """The reader of one format; `TrajectoryFormatError` for an unknown name."""
    reader = _LOADED.get(name)
    if reader is None:
        reader = _LOADED[name] = _load(name)
    return reader


def _load(name: str) -> Reader:
    module = reader_modules().get(name)
    where = module or _plugins().get(name)
    if where is None:
        raise TrajectoryFormatError(
            None, f"format must be one of {', '.join(['auto', *reader_names()])} "
            f"(got {name!r})")
    path, _, attribute = where.partition(":")
    try:
        reader = getattr(importlib.import_module(path), attribute or "READER")
    except (ImportError, AttributeError) as exc:
        if module is not None:
            raise
        raise TrajectoryFormatError(
            None, f"format {name} cannot be loaded from {where} ({exc})") from None
    if not isinstance(reader, Reader) or reader.name != name:
        raise TrajectoryFormatError(None, f"{where} must be a Reader named {name!r}")
    return reader


def all_readers() -> list[Reader]:
    """Every reader, built-in ones first, in ``order``."""
    return [get_reader(n) for n in reader_names()]


#: A sniffing score from which the bytes read so far decide the format; below it detection
#: reads further (an undecided head is never a guess).
DECIDED: Final = 80
#: The most detection reads of one input before it decides on what it has read.
SNIFF_LIMIT: Final = 64 * 1024 * 1024


def _could_win(top: int, markers: tuple[bytes, ...], head: bytes,
               best: tuple[int, Reader] | None) -> bool:
    """Whether a reader can score above ``best`` (see `Reader`: markers and top)."""
    return (best is None or top > best[0]) and (not markers or any(m in head for m in markers))


def _best(head: bytes, source: Source) -> tuple[int, Reader] | None:
    best: tuple[int, Reader] | None = None
    for entry in _table():
        if _could_win(entry.top, entry.markers, head, best):  # else: not imported
            best = _better(best, get_reader(entry.name), head, source)
    if best is None or best[0] < DECIDED:  # no built-in reader is sure: ask the others
        for name in _plugins():
            reader = get_reader(name)
            if _could_win(reader.top, reader.markers, head, best):
                best = _better(best, reader, head, source)
    return best


def _better(best: tuple[int, Reader] | None, reader: Reader, head: bytes,
            source: Source) -> tuple[int, Reader] | None:
    score = reader.sniff(head, source)
    return (score, reader) if score > 0 and (best is None or score > best[0]) else best


def detect(source: Source) -> Reader:
    """The reader whose sniffing is most confident about ``source``.

    Sniffing starts on the first `HEAD_BYTES`. When no reader is sure (a score below
    `DECIDED`: a long first prompt or patch, keys that come late such as tau2's
    ``simulations``), it reads eight times as much and asks again, up to the whole input
    or `SNIFF_LIMIT`, and decides on the most it read.

    Raises `TrajectoryFormatError` listing the known formats when none recognises it.
    """
    size = HEAD_BYTES
    while True:
        head = source.prefix(size)
        best = _best(head, source)
        if (best is not None and best[0] >= DECIDED) or len(head) < size \
                or size >= SNIFF_LIMIT:
            break
        size = min(size * 8, SNIFF_LIMIT)
    if best is None:
        what = "an empty file" if not head.strip() else "a shape no reader knows"
        raise TrajectoryFormatError(
            source.name,
            f"cannot tell the format: {what}; known formats: {', '.join(reader_names())} "
            "(force one with --input-format)",
        )
    return best[1]
