"""Grading one unit of work in this process: its inputs read (or, for a byte range of a
large array or JSONL file, that range), each trajectory graded by the driver, in order.
A native single-trajectory document above the streaming threshold is never loaded: it is
graded window by window (`engines.windowed`), or, when the windows cannot read it
exactly, its events are streamed into one `Monitor` per grader (`engines.streamed`); both
in bounded memory (`_grade_large`). `engines.batch` runs this in worker processes.

>>> import json, os, tempfile
>>> from maxrepeat.core.config import MaxRepeatConfig
>>> from maxrepeat.engines.driver import Graders
>>> from maxrepeat.engines.units import plan_units
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "r.json"), "w") as f:
...     _ = f.write(json.dumps({"id": "r", "events": []}))
>>> unit = next(iter(plan_units([os.path.join(d, "r.json")])))
>>> [g.results[0].trajectory for g in iter_unit(unit, Graders([MaxRepeatConfig(2)]))]
['r']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from ..core.errors import TrajectoryFormatError
from .driver import Detail, Graded, Graders, grade_item
from .units import Unit, file_size

__all__ = ["UnitOutcome", "grade_unit", "iter_unit"]


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class UnitOutcome(msgspec.Struct, frozen=True):
    """What grading one unit produced: one `Graded` value per trajectory or unreadable
    input, in order."""

    unit: Unit
    graded: tuple[Graded, ...]


def grade_unit(
    unit: Unit, graders: Graders, fmt: str = "auto", detail: Detail | None = None
) -> UnitOutcome:
    """Grade one unit (runs in a worker, or in-process with ``jobs=1``): one `Graded`
    value per trajectory or unreadable input, in order."""
    return UnitOutcome(unit, tuple(iter_unit(unit, graders, fmt, detail)))


def iter_unit(
    unit: Unit, graders: Graders, fmt: str = "auto", detail: Detail | None = None
) -> Iterator[Graded]:
    """`grade_unit`'s values one at a time: graded in this process, a unit's results need
    not all be held (a 290 MB JSON array of 5 million trajectories is one unit)."""
    from ..readers import Source, read_source

    for path in unit.paths:
        source = Source.from_path(path)
        if unit.is_range:
            from ..readers._array import ArrayRange
            from ..readers.vally import read_array_range, read_jsonl_range

            def items(src: Source = source) -> Iterator[Any]:
                try:
                    with src.open() as fh:
                        if unit.array:
                            rng = ArrayRange(unit.start, unit.end, unit.first_line)
                            yield from read_array_range(fh, src.name, rng)
                        else:
                            yield from read_jsonl_range(fh, src.name, unit.start,
                                                        unit.end, unit.first_line)
                except OSError as exc:
                    yield TrajectoryFormatError(src.name, f"cannot read: {exc.strerror or exc}")

            stream: Iterable[Any] = items()
        else:
            # Streaming through monitors gives results only: not when the graders depend
            # on the trajectory (its stimulus) or a report wants its steps.
            known = unit.format or fmt  # sniffed when planning: not again
            if graders.fixed and detail is None and _large_single(source, known):
                graded = _grade_large(source, graders)
                if graded is not None:
                    yield graded
                    continue
            stream = read_source(source, known)
        for item in stream:
            yield grade_item(item, graders, source.name, detail)
        spool = getattr(source, "_spool", None)
        if spool is not None:  # standard input's copy: done with it
            spool.close()


def _large_single(source: Any, fmt: str) -> bool:
    """Whether ``source`` may be a native single-trajectory document above the streaming
    threshold (everything else is read the usual way)."""
    if source.path is None or fmt not in ("auto", "vally"):
        return False
    from ..readers import detect
    from ..readers._json import first_json_char
    from ..readers.vally import stream_threshold

    if file_size(source.path) <= stream_threshold():
        return False
    try:
        if source.is_jsonl() or (fmt == "auto" and detect(source).name != "vally"):
            return False
    except (OSError, TrajectoryFormatError):
        return False
    return first_json_char(source.head) == b"{"


def _grade_large(source: Any, graders: Graders) -> Graded | None:
    """A large single-trajectory document graded without loading it: window by window
    (`engines.windowed`), else through monitors (`engines.streamed`); None when it must
    be read whole (content the streaming readers do not read exactly)."""
    from ..readers._windows import windowed_document
    from .windowed import grade_windowed

    doc = windowed_document(source)
    if doc is not None:
        try:
            graded = grade_windowed(doc, graders)
        except OSError as exc:
            message = f"{source.name}: cannot read: {exc.strerror or exc}"
            return Graded(graders.errors(source.name, message, source=source.name), message)
        if graded is not None:
            return graded
    from ..readers._vally_stream import stream_one_trajectory

    streamed = stream_one_trajectory(source)
    if streamed is None:
        return None
    return _grade_streamed(streamed, graders)


def _grade_streamed(streamed: Any, graders: Graders) -> Graded:
    from .streamed import grade_streamed

    return grade_streamed(streamed, graders)
