"""Open a file for reading only when it is a regular file, without ever blocking.

``open()`` of a FIFO blocks until a writer comes (forever, for a hook's state file or a
``transcript_path`` that someone made a FIFO), and reading a character device may never
end. So the files a hook and ``hook install`` read (state, side files, logs, settings)
are opened with ``O_NONBLOCK`` (which returns at once for a FIFO), checked with
``fstat`` on the descriptor itself (no race between a check and the open), and refused
unless they are regular files; the flag is then cleared for ordinary reads.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp(); fifo = os.path.join(folder, "f"); os.mkfifo(fifo)
>>> try:
...     open_regular(fifo)
... except NotRegularFile as err:
...     print(err.strerror)
not a regular file (a FIFO)
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, Final

from ..core.errors import NotRegularFile

__all__ = ["NotRegularFile", "open_regular", "regular_fd", "read_regular"]

_KINDS: Final = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISSOCK, "a socket"))


_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a file"


def regular_fd(path: str | os.PathLike[str]) -> int:
    """A descriptor open for reading on ``path``, a regular file (a symlink to one
    counts); `NotRegularFile` for anything else, `OSError` when it cannot be opened."""
    flags = os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            err = NotRegularFile(errno.EINVAL, f"not a regular file ({_kind(mode)})",
                                 os.fspath(path))
            err.kind = _kind(mode)
            raise err
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`regular_fd` as a buffered binary file object."""
    return os.fdopen(regular_fd(path), "rb")


def read_regular(path: str | os.PathLike[str], size: int = -1) -> bytes:
    """The bytes of the regular file ``path`` (its first ``size`` when given)."""
    with open_regular(path) as fh:
        return fh.read(size)
