"""One served hook call, in a child the resident server forked (cli/hookserver.py).

`run_served` makes the child the client's process as far as the call can tell, then
runs ``maxrepeat.cli.main`` as the ``maxrepeat`` script would: the working directory,
``os.environ`` (replaced in place, so that every holder of it and C's ``getenv`` see
the client's; the time zone re-read from it), the umask and ``sys.argv`` are the
client's; standard input, output and error are memory files on descriptors 0, 1 and 2
(what ``main`` does to them, ``os.dup2`` included, it does to those), wrapped as Python
wraps a process's standard streams, with the client's encodings. The exit status is the
one the interpreter would give (``SystemExit``'s code, a traceback and 1 for an uncaught
exception), after the exit functions ran and the streams were flushed.
"""

from __future__ import annotations

import atexit
import io
import os
import sys
import time

__all__ = ["run_served"]


def run_served(request: dict[bytes, bytes]) -> tuple[int, bytes, bytes]:
    """Run the call ``request`` describes (hookclient's records by kind): (exit status,
    standard output, standard error)."""
    os.chdir(request[b"c"])
    os.environb.clear()
    for item in request[b"v"].split(b"\0") if request[b"v"] else ():
        name, _, value = item.partition(b"=")
        os.environb[name] = value
    time.tzset()
    os.umask(int(request[b"m"]))
    sys.argv = [os.fsdecode(a) for a in request[b"a"].split(b"\0")]
    names = request[b"s"].decode().split("\0")
    saved = _streams(request[b"i"], names)
    from . import main

    try:
        main()
        code = 0
    except SystemExit as stop:
        code = _status(stop.code)
    except BaseException:  # what the interpreter does with an uncaught exception
        import traceback

        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    return code, _contents(saved[1]), _contents(saved[2])


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # as the interpreter prints sys.exit("message")
    return 1


def _streams(data: bytes, names: list[str]) -> list[int]:
    """Memory files on descriptors 0-2 (0 holding ``data``) and sys.stdin/stdout/stderr
    over them; a second descriptor of each, to read them back."""
    saved = []
    for fd in range(3):
        scratch = _scratch()
        if fd == 0:
            os.write(scratch, data)
            os.lseek(scratch, 0, os.SEEK_SET)
        os.dup2(scratch, fd)
        saved.append(scratch)
    pairs = zip(names[0::2], names[1::2], strict=True)  # (encoding, errors) of each stream
    encoding = dict(zip(("stdin", "stdout", "stderr"), pairs, strict=True))
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        stream = _text(fd, "r" if fd == 0 else "w", *encoding[name])
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    return saved


def _scratch() -> int:
    if hasattr(os, "memfd_create"):
        return os.memfd_create("maxrepeat-hook")
    import tempfile

    with tempfile.TemporaryFile() as fh:
        return os.dup(fh.fileno())


def _text(fd: int, mode: str, encoding: str, errors: str) -> io.TextIOWrapper:
    """A standard stream as Python makes it (not a terminal: block-buffered, but
    standard error, which is line-buffered)."""
    raw = io.FileIO(fd, mode, closefd=False)
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    buffered: io.BufferedReader | io.BufferedWriter = io.BufferedReader(raw) \
        if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline="\n",
                            line_buffering=fd == 2)


def _contents(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""
