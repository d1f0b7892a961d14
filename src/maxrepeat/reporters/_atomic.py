"""A report file written whole or not at all (``maxrepeat grade --output-file FILE``).

The report goes to a temporary ``.FILE.*.part`` file in the target's directory (same file
system, so the final ``rename`` is atomic), is flushed and ``fsync``-ed, and only then
renamed over the target; the directory is synced so the rename survives a crash. A run that
fails or is interrupted removes its temporary file and leaves an existing target untouched.
A run killed with SIGKILL cannot clean up, so the writer holds an exclusive ``flock`` on its
``.part`` file: the next run writing the same target removes every ``.part`` of that target
whose lock is free (its writer is dead), and never one that a live run is writing.
(``O_TMPFILE`` would avoid the name altogether, but linking it into place through
``/proc/self/fd`` is refused by some kernels and sandboxes.)

Only a regular file (or a path where nothing is yet) is replaced: a symlink, a directory,
a device such as ``/dev/null`` or a FIFO is refused by `refusal`, and so is one of the
inputs being graded. See ``docs/design/hostile-inputs.md``.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
import tempfile
from collections.abc import Iterable
from types import TracebackType

__all__ = ["AtomicTextFile", "refusal"]

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def refusal(path: str, inputs: Iterable[str] = ()) -> str | None:
    """Why ``path`` must not be replaced by a report, or None when it may be.

    Refused: anything that exists and is not a regular file (a symlink, a directory,
    ``/dev/null`` and other devices, a FIFO), and a file that is one of ``inputs`` (a
    file given, a file inside a directory given, or the file standard input reads when
    ``-`` is given).

    >>> refusal("/dev/null") in ("it is a character device", "it is a symbolic link")
    True
    >>> import tempfile; refusal(os.path.join(tempfile.mkdtemp(), "new.json")) is None
    True
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(st.st_mode):
        return f"it is {_kind(st.st_mode)}"
    for given in inputs:
        try:
            # standard input counts when it is a file (``< run.json``): replacing that
            # file would destroy the input as surely as naming it
            other = os.fstat(0) if given == "-" else os.stat(given)
        except OSError:
            continue  # a glob pattern or a missing path: the batch reports it
        if stat.S_ISDIR(other.st_mode) and given != "-":
            inside = os.path.realpath(path).startswith(
                os.path.join(os.path.realpath(given), ""))
            if inside:
                return f"it is inside the input directory {given} and would be read as input"
        elif (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return "it is the input on standard input" if given == "-" else \
                f"it is the input {given}"
    return None


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
        self._prefix = f".{name}."
        _remove_stale(directory, self._prefix)
        fd, self.temp_path = tempfile.mkstemp(prefix=self._prefix, suffix=".part",
                                              dir=directory)
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)  # a later run sees the lock and leaves the file be
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
        """Make the report visible at ``path``: fsync, rename, fsync the directory.

        Raises ``OSError`` (the target is left as it was) when the path became something
        other than a regular file meanwhile, or the disk is full.
        """
        if self.done:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        # mkstemp makes the file 0600; give it the mode a plain open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(self._file.fileno(), 0o666 & ~umask)
        reason = refusal(self.path)
        if reason is not None:
            raise OSError(errno.EEXIST, f"{self.path}: {reason}")
        self._file.close()
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


def _remove_stale(directory: str, prefix: str) -> None:
    """Remove ``.part`` files of earlier runs that died (their writer's lock is free)."""
    import fcntl

    for stale in glob.glob(os.path.join(glob.escape(directory), glob.escape(prefix) + "*.part")):
        try:
            fd = os.open(stale, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live run is writing it
        else:
            try:
                os.unlink(stale)
            except OSError:
                pass
        finally:
            os.close(fd)
