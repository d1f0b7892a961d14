"""Readers: one module per input format behind a tiny registry with content sniffing.

A reader turns the bytes of one file into `Trajectory` values in the spec's event model.
It yields a `TrajectoryFormatError` in place of a record it cannot read (a bad JSONL line,
a broken sample) so that the rest of the file is still graded; a file that cannot be read
at all yields one error and stops.

Adding a format: write ``readers/<name>.py`` with a module-level ``READER`` (a `Reader`)
and list it in ``_MODULES`` and ``_SNIFF_HINTS``. Detection asks every reader to score
the first bytes of the file (and its name); the highest score wins, and when no score is
sure the next, longer prefix is scored (see `detect`).
"""

from __future__ import annotations

import importlib
import io
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Final, Literal, cast, overload


import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory

__all__ = [
    "INTERNAL_ERROR",
    "Reader",
    "Source",
    "Item",
    "HEAD_BYTES",
    "DECIDED",
    "SNIFF_LIMIT",
    "reader_names",
    "get_reader",
    "all_readers",
    "detect",
    "read_source",
    "read_trajectories",
    "expand_paths",
    "TRAJECTORY_EXTENSIONS",
]

#: How many leading bytes detection looks at.
HEAD_BYTES: Final = 64 * 1024

#: format name -> module (imported on first use, so start-up stays cheap)
_MODULES: Final[dict[str, str]] = {
    "vally": "maxrepeat.readers.vally",
    "atif": "maxrepeat.readers.atif",
    "claude-code": "maxrepeat.readers.claude_code",
    "codex": "maxrepeat.readers.codex",
    "codex-exec": "maxrepeat.readers.codex_exec",
    "gemini-cli": "maxrepeat.readers.gemini_cli",
    "copilot-cli": "maxrepeat.readers.copilot_cli",
    "otel": "maxrepeat.readers.otel",
    "swe-agent": "maxrepeat.readers.swe_agent",
    "mini-swe-agent": "maxrepeat.readers.mini_swe_agent",
    "openhands": "maxrepeat.readers.openhands",
    "inspect": "maxrepeat.readers.inspect_log",
    "openai-messages": "maxrepeat.readers.openai_messages",
    "anthropic-messages": "maxrepeat.readers.anthropic_messages",
}

#: format name -> (the highest score its sniffer gives, byte strings one of which is in
#: every head it scores above 0). Detection consults these before importing a reader: a
#: reader that cannot score (none of its markers) or cannot win (its highest score does
#: not beat the best so far; ties go to the earlier reader) is never imported, so grading
#: one native file imports one reader, not fourteen (start-up is measured:
#: bench/RESULTS.md). Derived from each ``_sniff``; tests/test_sniff_markers.py checks
#: them against the sniffers' return values and real files of every format.
_SNIFF_HINTS: Final[dict[str, tuple[int, tuple[bytes, ...]]]] = {
    "vally": (90, (b'"events"',)),
    "atif": (95, (b'"schema_version"', b'"step_id"')),
    "claude-code": (92, (b'"sessionId"', b'"session_id"', b'"parentUuid"')),
    "codex": (90, (b'"payload"',)),
    "codex-exec": (92, (b'"thread.started"', b'"turn.started"', b'"item.started"',
                        b'"item.completed"')),
    "gemini-cli": (85, (b'"projectHash"',)),
    "copilot-cli": (90, (b'"session.', b'"user.message"', b'"assistant.', b'"tool.execution_')),
    "otel": (90, (b'"resourceSpans"',)),
    "swe-agent": (90, (b'"trajectory"', b'"history"')),
    "mini-swe-agent": (92, (b"```mswea_bash_command", b"<returncode>", b'"mini-swe-agent-1',
                            b'"mini_version"', b'"info"')),
    "openhands": (90, (b'"instance_id"', b'"source"', b'"kind"')),
    "inspect": (95, (b"PK\x03\x04", b'"eval"')),
    "openai-messages": (88, (b'"tool_use"', b'"tool_result"', b'"traj"', b'"task_id"',
                             b'"role"')),
    "anthropic-messages": (85, (b'"role"',)),
}

Item = Trajectory | TrajectoryFormatError


@dataclass(frozen=True)
class Source:
    """One input: a file path, or a stream (standard input ``-``, a pipe such as
    ``/dev/stdin`` or ``<(…)``, any path that is not a regular file) spooled so it can be
    re-read: a stream is read exactly once, so no reader can lose its first records.

    ``name`` is what results and errors call it. ``head`` is the first `HEAD_BYTES`;
    `prefix` gives more when detection needs it (kept, so the file is not read twice).
    """

    name: str
    path: str | None
    _spool: IO[bytes] | None = field(default=None, repr=False, compare=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> Source:
        """A source for a file path; ``-`` means standard input. A path that is not a
        regular file (a pipe, a character device) is read once, now, and spooled."""
        text = os.fspath(path)
        if text == "-":
            return cls.stdin()
        try:
            regular = stat.S_ISREG(os.stat(text).st_mode)
        except (OSError, ValueError):
            regular = True  # let opening it report the problem where it is read
        if regular or os.path.isdir(text):
            return cls(text, text)
        try:
            with open(text, "rb") as stream:
                return cls.stdin(stream, name=text)
        except OSError:
            return cls(text, text)

    @classmethod
    def stdin(cls, stream: IO[bytes] | None = None, *, name: str = "<stdin>") -> Source:
        """Standard input (or ``stream``), copied to a temporary file once (readers may
        seek and re-read)."""
        import tempfile  # only streams need it; start-up is measured

        spool = tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024)
        data = stream if stream is not None else sys.stdin.buffer
        while chunk := data.read(1 << 20):
            spool.write(chunk)
        spool.seek(0)
        return cls(name, None, spool)

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> Source:
        """An in-memory source (tests, engines that hand over bytes)."""
        return cls(name, None, io.BytesIO(data))

    def close(self) -> None:
        """Release the spooled copy of a stream (a file path holds nothing open)."""
        if self._spool is not None:
            self._spool.close()
        self._cache.clear()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> IO[bytes]:
        """A fresh binary stream over the whole input, positioned at its start."""
        if self._spool is not None:
            self._spool.seek(0)
            return cast(IO[bytes], _Unclosable(self._spool))
        assert self.path is not None
        return open(self.path, "rb")

    def read_bytes(self) -> bytes:
        """The whole input."""
        with self.open() as fh:
            return fh.read()

    def prefix(self, size: int) -> bytes:
        """The first ``size`` bytes of the input (fewer when it is shorter).

        The longest prefix read so far is kept: growing reads during detection and the
        readers' later looks at the head cost one read.
        """
        kept: bytes | None = self._cache.get("prefix")
        if kept is not None and (len(kept) >= size or self._cache.get("whole")):
            return kept[:size]
        with self.open() as fh:
            data = fh.read(size)
        self._cache["prefix"] = data
        self._cache["whole"] = len(data) < size
        return data

    @property
    def head(self) -> bytes:
        """The first `HEAD_BYTES` of the input."""
        return self.prefix(HEAD_BYTES)

    def is_jsonl(self) -> bool:
        """Whether the input is JSON Lines: a first line that is a whole JSON object with
        more after it, or a first line that is not JSON followed by one that is an object
        (a malformed first record: it is reported and the rest is read).

        Lines are read whole, however long: the length of one record never decides.

        >>> Source.from_bytes(b'{"a": 1}\\n{"a": 2}\\n').is_jsonl()
        True
        >>> Source.from_bytes(b'{"a": 1,\\n "b": 2}\\n').is_jsonl()
        False
        """
        found: bool | None = self._cache.get("jsonl")
        if found is None:
            found = self._cache["jsonl"] = self._scan_jsonl()
        return found

    def _scan_jsonl(self) -> bool:
        import msgspec

        from ._json import JSON_DECODER, strip_bom

        def record(line: bytes) -> bool | None:
            try:
                return isinstance(JSON_DECODER.decode(line), dict)
            except (msgspec.DecodeError, RecursionError):
                return None

        with self.open() as fh:
            lines = _bounded_lines(fh, strip_bom)
            first = next(lines, None)
            if first is None or not first[0].lstrip().startswith(b"{"):
                return False
            if not first[1]:
                # A line longer than the bound (a one-line document of gigabytes, or one
                # huge record) is not decoded here: JSONL when another object line follows.
                second = next(lines, None)
                return second is not None and second[0].lstrip().startswith(b"{")
            ok = record(first[0])
            if ok is not None:
                return ok and next(lines, None) is not None
            # the first line is not JSON: a JSONL file whose first record is broken, or
            # a document spread over lines ({ then "key": ...), whose next line is no
            # whole object either
            second = next(lines, None)
            if second is None:
                return False
            if not second[1]:  # a record too long to decode here: its opening decides
                return second[0].lstrip().startswith(b"{")
            return record(second[0]) is True

    @property
    def suffix(self) -> str:
        """The lower-cased file name ending (``.jsonl``), empty for standard input."""
        name = self.path if self.path is not None else self.name
        return os.path.splitext(name)[1].lower() if not name.startswith("<") else ""


#: the longest line `Source.is_jsonl` decodes; longer lines are only scanned past
_LINE_BOUND: Final = 1024 * 1024


def _bounded_lines(fh: IO[bytes], strip_bom: Callable[[bytes], bytes]
                   ) -> Iterator[tuple[bytes, bool]]:
    """(start of the line, whole) for each non-blank line, in constant memory: a line
    longer than `_LINE_BOUND` gives its first bytes and ``whole`` False."""
    first = True
    while True:
        line = fh.readline(_LINE_BOUND)
        if not line:
            return
        if first:
            line, first = strip_bom(line), False
        whole = line.endswith(b"\n") or len(line) < _LINE_BOUND
        if not whole:
            _skip_line(fh)
        if line.strip():
            yield line, whole


#: How much of a file `_skip_line` maps at once (a multiple of every mmap granularity).
_MAP_WINDOW: Final = 16 << 20


def _skip_line(fh: IO[bytes]) -> None:
    """Move past the rest of an over-long line. A file is searched in place (mmap: one
    memchr over the page cache, where a one-line document of 300 MB took ~300 readline
    calls copying all of it), a window of `_MAP_WINDOW` bytes at a time: the pages of a
    mapping count in the process's resident memory while it is mapped, and one mapping
    of a whole 290 MB array would have put all of it there; anything else is read
    through in bounded pieces."""
    try:
        fd = fh.fileno()
        pos = fh.tell()
        import mmap

        size = os.fstat(fd).st_size
        at = pos - pos % mmap.ALLOCATIONGRANULARITY
        end = -1
        while at < size and end < 0:
            length = min(_MAP_WINDOW, size - at)
            with mmap.mmap(fd, length, access=mmap.ACCESS_READ, offset=at) as view:
                found = view.find(b"\n", max(pos - at, 0))
            end = at + found if found >= 0 else -1
            at += length
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
    else:
        fh.seek(size if end < 0 else end + 1)
        return
    while (rest := fh.readline(_LINE_BOUND)) and not rest.endswith(b"\n"):
        pass


class _Unclosable(io.BufferedIOBase):
    """A view of the spool whose ``close`` leaves the spool open for the next reader."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self._raw = raw

    def read(self, size: int | None = -1) -> bytes:
        return self._raw.read(-1 if size is None else size)

    def read1(self, size: int = -1) -> bytes:
        return self._raw.read(size)

    def readline(self, size: int | None = -1) -> bytes:
        return self._raw.readline(-1 if size is None else size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._raw)


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class Reader(msgspec.Struct, frozen=True):
    """One input format.

    ``sniff(head, source)`` scores how sure the reader is that the input is its format
    (0: not mine; 100: certain); ``read(source)`` yields trajectories and per-record
    errors. ``extensions`` are the file endings a directory walk picks up.
    """

    name: str
    description: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes, Source], int]
    read: Callable[[Source], Iterator[Item]]


_LOADED: dict[str, Reader] = {}


def reader_names() -> list[str]:
    """The names of every known format, in registry order."""
    return list(_MODULES)


def get_reader(name: str) -> Reader:
    """The reader of one format; `TrajectoryFormatError` for an unknown name."""
    reader = _LOADED.get(name)
    if reader is None:
        module = _MODULES.get(name)
        if module is None:
            raise TrajectoryFormatError(
                None, f"format must be one of {', '.join(['auto', *_MODULES])} (got {name!r})"
            )
        reader = _LOADED[name] = importlib.import_module(module).READER
    return reader


def all_readers() -> list[Reader]:
    """Every reader, in registry order."""
    return [get_reader(n) for n in _MODULES]


TRAJECTORY_EXTENSIONS: Final = (".json", ".jsonl", ".ndjson", ".traj", ".eval")


#: A sniffing score from which the bytes read so far decide the format; below it detection
#: reads further (an undecided head is never a guess).
DECIDED: Final = 80
#: The most detection reads of one input before it decides on what it has read.
SNIFF_LIMIT: Final = 64 * 1024 * 1024


def _best(head: bytes, source: Source) -> tuple[int, Reader] | None:
    best: tuple[int, Reader] | None = None
    for name in _MODULES:
        top, markers = _SNIFF_HINTS[name]
        if (best is not None and top <= best[0]) or not any(m in head for m in markers):
            continue  # it would score 0, or could not win: not imported (see _SNIFF_HINTS)
        reader = get_reader(name)
        score = reader.sniff(head, source)
        if score > 0 and (best is None or score > best[0]):
            best = (score, reader)
    return best


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
            f"cannot tell the format: {what}; known formats: {', '.join(_MODULES)} "
            "(force one with --format)",
        )
    return best[1]


def read_source(source: Source, format: str = "auto") -> Iterator[Item]:
    """Every trajectory in ``source`` (and an error in place of each unreadable record)."""
    if source.path is not None and os.path.isdir(source.path):
        yield _no_trajectory(source.path)  # what a walk that found nothing leaves
        return
    try:
        reader = detect(source) if format == "auto" else get_reader(format)
    except TrajectoryFormatError as err:
        yield err if err.source else err.with_source(source.name)
        return
    except OSError as exc:
        yield TrajectoryFormatError(source.name, f"cannot read: {exc.strerror or exc}")
        return
    except Exception as exc:  # a sniffing bug must not end a batch: report it in place
        yield _internal_error(source, "detecting the format", exc)
        return
    try:
        yield from reader.read(source)
    except OSError as exc:
        yield TrajectoryFormatError(source.name, f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a reader bug must not end a batch: report it in place
        yield _internal_error(source, f"reading it as {reader.name}", exc)


#: marks errors that are bugs of maxrepeat, not faults of the input (fuzz tests look for it)
INTERNAL_ERROR: Final = "internal error"


def _internal_error(source: Source, doing: str, exc: Exception) -> TrajectoryFormatError:
    detail = str(exc)[:200]
    return TrajectoryFormatError(
        source.name,
        f"{INTERNAL_ERROR} while {doing}: {type(exc).__name__}"
        + (f": {detail}" if detail else "")
        + " (a maxrepeat bug: please report it with this file)",
    )


def expand_paths(paths: Iterable[str], on_skip: Callable[[str], None] | None = None
                 ) -> Iterator[str]:
    """Paths with each directory replaced by its trajectory files, sorted, recursively.

    A walk reads files ending in `TRAJECTORY_EXTENSIONS` and skips hidden entries (``.``
    names), symlinked directories (not followed: they can loop or leave the tree),
    directories it cannot list, and names that are not regular files (a FIFO would block
    the batch); ``on_skip`` is told each of these. Files of other types are not
    trajectories and pass silently. A directory in which nothing is found is yielded
    itself: reading it gives the error result "no trajectory file found".
    """
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        found: list[str] = []

        def unreadable(exc: OSError) -> None:
            if on_skip is not None:
                where = exc.filename if isinstance(exc.filename, str) else path
                on_skip(f"{where}: skipped: cannot list this directory "
                        f"({exc.strerror or exc})")

        for root, dirs, files in os.walk(path, onerror=unreadable):
            kept = []
            for d in sorted(dirs):
                full = os.path.join(root, d)
                if d.startswith("."):
                    why = "hidden directory"
                elif os.path.islink(full):
                    why = "symlinked directory (not followed)"
                else:
                    kept.append(d)
                    continue
                if on_skip is not None:
                    on_skip(f"{full}: skipped: {why}")
            dirs[:] = kept
            for f in files:
                full = os.path.join(root, f)
                if os.path.splitext(f)[1].lower() not in TRAJECTORY_EXTENSIONS:
                    continue  # configs, notes, logs: not trajectories, not worth a line
                if f.startswith("."):
                    if on_skip is not None:
                        on_skip(f"{full}: skipped: hidden file")
                elif not _regular_or_link(full):
                    if on_skip is not None:
                        on_skip(f"{full}: skipped: not a regular file")
                else:
                    found.append(full)
        if found:
            yield from sorted(found)
        else:
            yield path


def _regular_or_link(path: str) -> bool:
    """Whether ``path`` is a regular file (a symlink to one counts; a broken symlink too,
    so that reading it reports the problem)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def _no_trajectory(path: str) -> TrajectoryFormatError:
    return TrajectoryFormatError(
        path, "no trajectory file found in this directory (a walk reads files ending in "
        f"{', '.join(TRAJECTORY_EXTENSIONS)}, and skips hidden, symlinked and unreadable "
        "entries)")


@overload
def read_trajectories(
    path: str | os.PathLike[str], *, format: str = ..., errors: Literal["raise"] = ...
) -> Iterator[Trajectory]: ...


@overload
def read_trajectories(
    path: str | os.PathLike[str], *, format: str = ..., errors: Literal["yield"]
) -> Iterator[Item]: ...


def read_trajectories(
    path: str | os.PathLike[str],
    *,
    format: str = "auto",
    errors: Literal["raise", "yield"] = "raise",
) -> Iterator[Trajectory] | Iterator[Item]:
    """The trajectories in a file, a directory (recursively) or standard input (``-``).

    Streams: one trajectory is read at a time. With ``errors="raise"`` (the default) an
    unreadable record raises `TrajectoryFormatError`; with ``errors="yield"`` the error is
    yielded in its place and reading goes on.

    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> _ = p.write_text(json.dumps({"id": "run-1", "events": []}))
    >>> [t.label for t in read_trajectories(p)]
    ['run-1']
    """
    def gen() -> Iterator[Item]:
        for p in expand_paths([os.fspath(path)]):
            try:
                source = Source.from_path(p)
            except OSError as exc:
                yield TrajectoryFormatError(p, f"cannot read: {exc.strerror or exc}")
                continue
            with source:
                for item in read_source(source, format):
                    if isinstance(item, TrajectoryFormatError) and errors == "raise":
                        raise item
                    yield item

    return gen()
