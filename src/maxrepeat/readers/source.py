"""`Source`: one input (a file path, or a stream spooled once so it can be re-read), and
the bounded line scanning detection uses on it.

>>> with Source.from_bytes(b'{"a": 1}\\n{"a": 2}\\n') as s:
...     s.head[:8], s.is_jsonl()
(b'{"a": 1}', True)
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Final, cast

from ._regular import open_regular

__all__ = ["Source", "HEAD_BYTES"]

#: How many leading bytes detection looks at.
HEAD_BYTES: Final = 64 * 1024


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
        return open_regular(self.path)  # a FIFO is refused, never waited on

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
