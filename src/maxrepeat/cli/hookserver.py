"""The resident hook server: a warm process that forks one child per hook call.

One server per user, interpreter and package (the socket's name is a hash of
`hookclient.key`; not one per session): it imports everything a hook call of any agent
imports (`WARM`), then waits on its socket. For each call it checks that the caller is
this user and that none of the files it imported has changed since (else it says
"stale" and exits: the client answers with the full path and starts a fresh server),
then forks. The child takes the client's command line, working directory, environment
(``os.environ`` replaced in place, the time zone re-read), umask and standard input,
runs ``maxrepeat.cli.main`` exactly as the ``maxrepeat`` script does, with its standard
output and error in memory files, and sends back the two outputs and the exit status.
The server itself never runs a call, so nothing of one call (caches, state, environment)
reaches another: a child starts from what the imports made, nothing more, and none of
the modules a hook call imports reads the environment, the working directory or the
clock when imported (`tests/cli/test_hook_resident.py` pins that list).

A server exits after ``MAXREPEAT_HOOK_RESIDENT_IDLE`` seconds without a call (600 by
default), when its socket is removed or replaced, or when it finds itself stale. A lock
file beside the socket keeps a second server for the same socket from starting.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
from typing import Any, NoReturn

from . import hookclient

__all__ = ["WARM", "serve", "warm"]

#: what a hook call of any agent, first or later, with any grader flags, imports
#: (and each agent's module with the modules its descriptor names: `warm`)
WARM = ("maxrepeat.cli.hookrun", "maxrepeat.cli.options", "maxrepeat.guards.agents",
        "maxrepeat.guards.verdicts", "maxrepeat.core.monitor.frombatch",
        "maxrepeat.core.near.matching", "maxrepeat.core.near.normalizers",
        "maxrepeat.core.toolmatch",
        "maxrepeat.core.presets", "maxrepeat.specs.configfile",
        "maxrepeat.core.canonical", "maxrepeat.core.preview", "json", "pathlib", "traceback",
        "atexit")
_IDLE = "MAXREPEAT_HOOK_RESIDENT_IDLE"
#: a child waits this long for the rest of a request before it gives up
_REQUEST_WAIT = 30.0


def warm() -> None:
    """Import what any hook call imports: `WARM`, and every built-in agent's module with
    the modules its descriptor names."""
    for name in WARM:
        importlib.import_module(name)
    from ..guards import agents

    for name in agents.names():
        if hookclient.builtin_agent(name):
            for module in agents.get(name).warm:
                importlib.import_module(module)


def serve(path: str) -> None:
    """Serve hook calls on the Unix socket ``path`` until idle (the server's main)."""
    os.chdir("/")
    lock = _lock(path + ".lock")
    if lock is None:
        return  # another server has this socket
    key = hookclient.key()
    if hookclient.socket_path(key) != path or not _private_dir(os.path.dirname(path)):
        return  # not the interpreter, package or user the socket is for
    warm()
    _warm_types()
    try:
        idle = float(os.environ.get(_IDLE, "") or 600)
    except ValueError:
        idle = 600.0
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.lexists(path):
        os.unlink(path)  # a dead server's (the lock says none is alive)
    listener.bind(path)
    listener.listen(64)
    inode = os.stat(path).st_ino
    files = _fingerprint()
    hookclient.SERVED = True
    signal.signal(signal.SIGCHLD, _reap)
    gc.freeze()  # the children share the imports' pages instead of copying them
    try:
        _loop(listener, lock, key, files, idle, path, inode)
    finally:
        if _same_inode(path, inode):
            os.unlink(path)


def _loop(listener: Any, lock: int, key: bytes, files: dict[str, tuple[int, int, int]],
          idle: float, path: str, inode: int) -> None:
    import select
    import time

    poller = select.poll()
    poller.register(listener.fileno(), select.POLLIN)
    last, served = time.monotonic(), 0
    _tell(lock, served)
    while time.monotonic() - last < idle:
        if not poller.poll(int(min(idle, 30.0) * 1000)):
            if not _same_inode(path, inode):
                return  # removed or replaced: nobody will find this server
            continue
        last = time.monotonic()
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        try:
            if not _same_user(conn):
                continue
            stale = _changed(files)  # the child says so, after reading the request
            if os.fork() == 0:
                _child(conn, listener, lock, key, stale)
            if stale:
                return
            served += 1
            _tell(lock, served)
        except OSError:
            continue
        finally:
            conn.close()


def _child(conn: Any, listener: Any, lock: int, key: bytes, stale: bool) -> NoReturn:
    """Run one call (in the forked child) and send its answer; never returns."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        listener.close()
        os.close(lock)
        conn.settimeout(_REQUEST_WAIT)
        conn.sendall(hookclient.MAGIC + hookclient.record(b"p", str(os.getpid()).encode()))
        request = _read_request(conn)
        if stale:
            conn.sendall(hookclient.record(b"s", b""))
        elif request is None or request.get(b"k") != key:
            conn.sendall(hookclient.record(b"r", b"not this server's call"))
        else:
            from .hookchild import run_served

            code, out, err = run_served(request)
            conn.settimeout(None)
            conn.sendall(hookclient.record(b"o", out) + hookclient.record(b"e", err)
                         + hookclient.record(b"x", str(code).encode()))
    finally:
        os._exit(0)


def _warm_types() -> None:
    """Have msgspec build what it builds for a type at its first use (the type's fields
    and annotations: a third of a later call's CPU in a child), for every Struct of the
    package, so that each child inherits it instead of building it again."""
    import msgspec

    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if not name.startswith("maxrepeat."):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and issubclass(value, msgspec.Struct) \
                    and value.__module__ == name:
                for decoder in (msgspec.msgpack.Decoder, msgspec.json.Decoder):
                    try:
                        decoder(value)
                    except (TypeError, ValueError, NameError):
                        pass  # (a type msgspec cannot decode is never decoded)


def _tell(lock: int, served: int) -> None:
    """Write "PID CALLS" in the lock file (what `hook status`, the bench and the tests
    read: which process serves, and how many calls it took)."""
    os.pwrite(lock, f"{os.getpid()} {served}\n".encode(), 0)


def _read_request(conn: Any) -> dict[bytes, bytes] | None:
    """The request's records by kind (it ends with the input, kind ``i``), or None."""
    buf = bytearray()
    while True:
        recs = hookclient.split(buf)
        if recs and recs[-1][0] == b"i":
            return dict(recs)
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        buf += chunk


def _lock(path: str) -> int | None:
    """The lock file's descriptor, locked for this server's life; None if another
    server holds it (tried for about a second: a stale server may be exiting)."""
    import fcntl
    import time

    if not _private_dir(os.path.dirname(path), create=True):
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    for _ in range(10):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            time.sleep(0.1)
    os.close(fd)
    return None


def _private_dir(path: str, create: bool = False) -> bool:
    if create and not os.path.lexists(path):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    return hookclient.dir_is_private(path)


def _same_user(conn: Any) -> bool:
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return True  # the socket's directory admits no one else
    cred = conn.getsockopt(_socket.SOL_SOCKET, option, 12)
    return int.from_bytes(cred[4:8], sys.byteorder) == os.geteuid()


def _same_inode(path: str, inode: int) -> bool:
    try:
        return os.lstat(path).st_ino == inode
    except OSError:
        return False


def _fingerprint() -> dict[str, tuple[int, int, int]]:
    """Each imported module's file: (modification time, size, inode)."""
    files = {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if isinstance(name, str) and name not in files:
            try:
                st = os.stat(name)
            except OSError:
                continue
            files[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return files


def _changed(files: dict[str, tuple[int, int, int]]) -> bool:
    for name, seen in files.items():
        try:
            st = os.stat(name)
        except OSError:
            return True
        if (st.st_mtime_ns, st.st_size, st.st_ino) != seen:
            return True
    return False


def _reap(signum: int, frame: object) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
