"""A report file written whole or not at all (``maxrepeat grade --output-file FILE``).

The report goes to a temporary file in the target's directory (same file system, so the
final ``rename`` is atomic), is flushed and ``fsync``-ed, and only then renamed over the
target; the directory is synced so the rename survives a crash. A run that fails or is
interrupted removes the temporary file and leaves an existing target untouched: a reader
of FILE sees the previous report or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from types import TracebackType

__all__ = ["AtomicTextFile", "OUTPUT_BY_SUFFIX"]

#: the output format a report file's ending implies when ``--output`` is not given
OUTPUT_BY_SUFFIX = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".xml": "junit",
                    ".html": "html", ".htm": "html", ".md": "markdown", ".txt": "console"}


class AtomicTextFile:
    """A UTF-8 text file that appears at ``path`` only on `commit`.

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "report.jsonl")
    >>> with AtomicTextFile(target) as out:
    ...     _ = out.write("{}\\n")
    ...     os.path.exists(target)
    False
    >>> with open(target) as report:
    ...     report.read()
    '{}\\n'
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        directory, name = os.path.split(self.path)
        fd, self.temp_path = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
        self._file = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self.done = False

    def write(self, text: str) -> int:
        """Write text to the temporary file."""
        return self._file.write(text)

    def flush(self) -> None:
        """Flush to the operating system (the target still does not exist)."""
        self._file.flush()

    def isatty(self) -> bool:
        """A file, never a terminal."""
        return False

    def commit(self) -> None:
        """Make the report visible at ``path``: fsync, rename, fsync the directory."""
        if self.done:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        # mkstemp makes the file 0600; give it the mode a plain open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.temp_path, 0o666 & ~umask)
        os.replace(self.temp_path, self.path)
        self.done = True
        try:
            dir_fd = os.open(os.path.dirname(self.path), os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass  # some file systems cannot sync a directory; the rename is still atomic
        finally:
            os.close(dir_fd)

    def discard(self) -> None:
        """Drop the temporary file; an existing ``path`` stays as it was."""
        if self.done:
            return
        self.done = True
        try:
            self._file.close()
        finally:
            try:
                os.unlink(self.temp_path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> AtomicTextFile:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
