"""Readers: one module per input format behind a tiny registry with content sniffing.

A reader turns the bytes of one file into `Trajectory` values in the spec's event model.
It yields a `TrajectoryFormatError` in place of a record it cannot read (a bad JSONL line,
a broken sample) so that the rest of the file is still graded; a file that cannot be read
at all yields one error and stops.

The package's own modules, by job: `source` (`Source`: one input, a stream spooled once),
`walk` (paths and directories to trajectory files), `registry` (`Reader`, the format
table, `detect`) and `_reading` (the reading entry points). This namespace gathers their
public names.

Adding a format is one module: ``readers/<name>.py`` declaring ``READER = Reader(...)``
with its name, its sniffer and the sniffer's ``markers`` and ``top`` score (see
`Reader`), plus its tests and its docs page. The registry finds it by listing this
package; nothing else names it. Another package adds a format under the
``maxrepeat.readers`` entry-point group. Detection asks every reader to score the first
bytes of the file (and its name); the highest score wins, and when no score is sure the
next, longer prefix is scored (see `detect`).

>>> from maxrepeat.readers import Source, read_source
>>> [t.label for t in read_source(Source.from_bytes(b'{"id": "run-1", "events": []}'))]
['run-1']
"""

from __future__ import annotations

from ._reading import INTERNAL_ERROR, read_source, read_trajectories
from .registry import (
    DECIDED,
    ENTRY_POINTS,
    SNIFF_LIMIT,
    Item,
    Reader,
    all_readers,
    detect,
    get_reader,
    is_format,
    reader_names,
)
from .source import HEAD_BYTES, Source
from .walk import TRAJECTORY_EXTENSIONS, expand_paths

__all__ = [
    "INTERNAL_ERROR",
    "Reader",
    "Source",
    "Item",
    "HEAD_BYTES",
    "DECIDED",
    "SNIFF_LIMIT",
    "ENTRY_POINTS",
    "reader_names",
    "is_format",
    "get_reader",
    "all_readers",
    "detect",
    "read_source",
    "read_trajectories",
    "expand_paths",
    "TRAJECTORY_EXTENSIONS",
]
