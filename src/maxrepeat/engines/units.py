"""Units of work: the command line's paths as files, cut into units a worker grades.

`expand_inputs` turns the paths (files, directories, ``-``, globs that the shell left
quoted such as ``'runs/**/*.jsonl'``) into files; `plan_units` cuts them into units of
work: a run of small files, one file, or a byte range of a large JSONL file cut at line
boundaries (with the number of its first line, so records keep their ``file:line`` names).
The local worker pool (`engines.batch`) and Ray (`engines.ray`) grade the same units.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

import msgspec

from ..core.errors import TrajectoryFormatError

__all__ = [
    "Unit",
    "expand_inputs",
    "plan_units",
    "is_splittable",
    "is_large_array",
    "file_format",
    "file_size",
    "unit_bytes",
    "CHUNK_BYTES",
    "SMALL_FILE_BYTES",
]

#: A JSONL file larger than this is split into byte ranges of about this size.
CHUNK_BYTES: Final = 16 * 1024 * 1024
#: Files up to this size are grouped so one unit carries several (less overhead per file).
SMALL_FILE_BYTES: Final = 256 * 1024
#: Largest number of small files in one unit, and their largest total size.
GROUP_FILES: Final = 64
GROUP_BYTES: Final = 4 * 1024 * 1024

_GLOB_CHARS: Final = frozenset("*?[")


def expand_inputs(paths: Iterable[str], on_skip: Callable[[str], None] | None = None
                  ) -> list[str]:
    """Files to grade, in input order: directories walked (sorted), globs expanded (sorted,
    ``**`` recursive) when no file has that literal name; a glob matching nothing stays as
    it is, so it is reported as unreadable. ``on_skip`` hears what a walk passed over
    (`maxrepeat.readers.expand_paths`).

    >>> expand_inputs(["-"])
    ['-']
    """
    from ..readers import expand_paths

    out: list[str] = []
    for path in paths:
        if path != "-" and _GLOB_CHARS & set(path) and not os.path.exists(path):
            import glob  # only for a pattern (start-up is measured)

            matches = sorted(glob.glob(path, recursive=True))
            if matches:
                out.extend(expand_paths(matches, on_skip))
                continue
        out.extend(expand_paths([path], on_skip))
    return out


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class Unit(msgspec.Struct, frozen=True):
    """One unit of work: whole files, or bytes ``[start, end)`` of one JSONL file whose
    first line is ``first_line``.

    >>> Unit(("a.json",)).paths
    ('a.json',)
    """

    paths: tuple[str, ...]
    start: int = 0
    end: int = -1
    first_line: int = 1
    #: a range of a JSON array's items (``first_line`` is then the first item's index)
    array: bool = False
    #: the format planning sniffed for the unit's one file ("": not sniffed), so that
    #: reading it does not sniff again
    format: str = ""

    @property
    def is_range(self) -> bool:
        """Whether this unit is part of one JSONL file."""
        return self.end >= 0


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return -1


def unit_bytes(unit: Unit) -> int:
    """The bytes of input a unit covers (0 for standard input: not known ahead)."""
    if unit.is_range:
        return unit.end - unit.start
    return sum(max(file_size(p), 0) for p in unit.paths if p != "-")


def file_format(path: str, fmt: str, known: dict[str, str] | None = None,
                source: Any = None) -> str:
    """``fmt``; for ``auto``, the format sniffing finds in ``path`` (``auto`` again when
    it cannot tell or read the file: reading it then reports why). Each path is sniffed
    once per ``known``, which remembers what was found; ``source``: the path's `Source`
    when the caller has one (its head is read once).

    >>> file_format("runs.jsonl", "vally")
    'vally'
    """
    if fmt != "auto":
        return fmt
    if known is not None and path in known:
        return known[path]
    from ..readers import Source, detect

    try:
        found = detect(source if source is not None else Source.from_path(path)).name
    except (OSError, TrajectoryFormatError):
        found = "auto"
    if known is not None:
        known[path] = found
    return found


def is_splittable(path: str, fmt: str, known: dict[str, str] | None = None) -> bool:
    """Whether ``path`` is JSONL of the native format, which is cut into byte ranges
    (``known``: as for `file_format`)."""
    if fmt not in ("auto", "vally"):
        return False
    from ..readers import Source

    source = Source.from_path(path)
    try:
        if file_format(path, fmt, known, source) != "vally":
            return False
        return source.is_jsonl()  # lines read whole: a long first record still splits
    except (OSError, TrajectoryFormatError):
        return False


def is_large_array(path: str, fmt: str, known: dict[str, str] | None = None) -> bool:
    """Whether ``path`` is a native JSON array large enough to be cut into ranges of
    items (`readers._array`; ``known``: as for `file_format`)."""
    from ..readers._array import SPLIT_BYTES

    if path == "-" or fmt not in ("auto", "vally") or file_size(path) <= SPLIT_BYTES:
        return False
    from ..readers import Source
    from ..readers._json import first_json_char

    source = Source.from_path(path)
    try:
        if first_json_char(source.head) != b"[":
            return False
        return file_format(path, fmt, known, source) == "vally"
    except (OSError, TrajectoryFormatError):
        return False


def _array_ranges(path: str, fmt: str, known: dict[str, str]) -> list[Any] | None:
    """The item ranges of a large native JSON array, or None (any other file, or one
    that must be read whole)."""
    if not is_large_array(path, fmt, known):
        return None
    from ..readers.vally import array_ranges_of

    return array_ranges_of(path)


def _jsonl_ranges(path: str, size: int, chunk: int) -> Iterator[Unit]:
    """Byte ranges of about ``chunk`` bytes ending at line ends, with their first line."""
    start = 0
    line = 1
    with open(path, "rb") as fh:
        while start < size:
            target = min(start + chunk, size)
            fh.seek(target)
            if target < size:
                fh.readline()  # move to the next line start
            end = min(fh.tell(), size)
            yield Unit((path,), start, end, line)
            # Count lines in blocks: a multi-megabyte read per range stays cheap.
            fh.seek(start)
            remaining = end - start
            while remaining > 0:
                block = fh.read(min(remaining, 1 << 22))
                if not block:
                    break
                line += block.count(b"\n")
                remaining -= len(block)
            start = end


def plan_units(
    files: Sequence[str], fmt: str = "auto", chunk: int = CHUNK_BYTES, split: bool = True,
    known: dict[str, str] | None = None,
) -> Iterator[Unit]:
    """The units of work for ``files`` in input order (lazily: large files are cut as
    they are reached). Small files are grouped; large JSONL files are split when
    ``split`` is true; everything else is one unit per file, which carries the format
    planning sniffed, if it did (``known``: as for `file_format`)."""
    known = {} if known is None else known
    group: list[str] = []
    group_bytes = 0
    for path in files:
        size = file_size(path) if path != "-" else -1
        if 0 <= size <= min(SMALL_FILE_BYTES, chunk) and path != "-":
            group.append(path)
            group_bytes += size
            if len(group) >= GROUP_FILES or group_bytes >= GROUP_BYTES:
                yield Unit(tuple(group))
                group, group_bytes = [], 0
            continue
        if group:
            yield Unit(tuple(group))
            group, group_bytes = [], 0
        if split and size > chunk and is_splittable(path, fmt, known):
            yield from _jsonl_ranges(path, size, chunk)
        elif split and (ranges := _array_ranges(path, fmt, known)) is not None:
            # one unit per range of items: a worker returns that many results at once
            for rng in ranges:
                yield Unit((path,), rng.start, rng.end, rng.first, array=True)
        else:
            found = known.get(path, "auto")
            yield Unit((path,), format="" if found == "auto" else found)
    if group:
        yield Unit(tuple(group))
