"""The client side of a resident hook call (the server: cli/hookserver.py).

An agent runs ``maxrepeat hook AGENT …`` as a new process at every tool call. Most of
what that process cost was importing the guard (msgspec, json, pathlib, the guard's own
modules: 6-7 times ``python -c pass``), so a call is answered by a warm server instead:
this module, imported by ``maxrepeat.cli.main`` for ``hook AGENT`` command lines, imports
nothing but ``_socket`` (no ``typing``, no ``json``), reads the hook input, sends the
command line, the working directory, the whole environment, the umask and the input to
the server of this interpreter, package and user over a Unix socket, and writes the
answer it gets (standard output, standard error, exit status). The server forks one
child per call, which runs exactly the full path (``maxrepeat.cli.main``) with the
client's environment, so the answer is the full path's.

Anything short of a complete answer (no server, a refused or stale server, a server of
another user, a timeout, a child that died, a garbled reply) returns to ``main``, which
runs the full path in this process with the same input bytes; nothing has been written
by then. A missing or stale server is started in the background after the answer is
written (`start_server`, at exit). ``MAXREPEAT_HOOK_RESIDENT=0`` switches all of this off.

>>> len(name_hash(b"abc"))
16
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # only for type checkers: `typing` costs a hook call its start-up
    import _socket

__all__ = ["builtin_agent", "MAGIC", "SERVED", "key", "name_hash", "record", "resident_call",
           "socket_dir", "socket_path", "split"]


def builtin_agent(name: str) -> bool:
    """Whether ``name`` is one of the agents in maxrepeat's own ``guards/agents/`` folder
    (the rule of `maxrepeat.guards.agents.names`, without importing it; an agent of
    another package is answered by the full path)."""
    if not name or name[0] in "_." or "/" in name or "\\" in name or "_" in name:
        return False
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    module = name.replace("-", "_") + ".py"
    return os.path.isfile(os.path.join(here, "guards", "agents", module))
#: the protocol's version: the first bytes of every request and reply
MAGIC = b"MXR1"
#: True in the server and its children: a call it serves never asks a server itself
SERVED = False
#: a child that neither answers nor dies in this many seconds is killed (the full path
#: then answers)
_REPLY_WAIT = 600.0
_TIMEOUT = "MAXREPEAT_HOOK_RESIDENT_TIMEOUT"


def record(kind: bytes, data: bytes) -> bytes:
    """One record of the protocol: a one-byte kind, 8 bytes of length, the data."""
    return kind + len(data).to_bytes(8, "little") + data


def split(buf: bytes | bytearray) -> list[tuple[bytes, bytes]] | None:
    """The records after MAGIC, or None when ``buf`` is not whole records."""
    if buf[:4] != MAGIC:
        return None
    out, i, end = [], 4, len(buf)
    while i < end:
        if i + 9 > end:
            return None
        size = int.from_bytes(buf[i + 1:i + 9], "little")
        if i + 9 + size > end:
            return None
        out.append((bytes(buf[i:i + 1]), bytes(buf[i + 9:i + 9 + size])))
        i += 9 + size
    return out


def key() -> bytes:
    """What a server must share with this process to answer for it: the protocol, the
    interpreter and its flags, the package (where, which version), the import path, the
    native/pure choice (``MAXREPEAT_PURE``) and the user."""
    import maxrepeat

    pure = os.environ.get("MAXREPEAT_PURE", "") not in ("", "0")
    parts = [MAGIC.decode(), sys.executable, sys.version, maxrepeat.__file__ or "",
             maxrepeat.__version__, f"O{sys.flags.optimize} U{sys.flags.utf8_mode}",
             f"pure={pure}", f"uid={os.geteuid()}", *sys.path]
    return "\n".join(parts).encode("utf-8", "surrogateescape")


def name_hash(data: bytes) -> str:
    """A 64-bit FNV-1a hash of ``data`` in hex (the socket's name; `key` itself is
    compared by the server)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def socket_dir() -> str:
    """The per-user directory of the servers' sockets: ``$XDG_RUNTIME_DIR/maxrepeat``,
    else ``$TMPDIR/maxrepeat-UID`` (``/tmp`` without ``TMPDIR``)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return os.path.join(runtime, "maxrepeat")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"maxrepeat-{os.geteuid()}")


def socket_path(key_: bytes) -> str | None:
    """The socket of the server for ``key_``, or None when its path is longer than a Unix
    socket's address can hold (107 bytes)."""
    path = os.path.join(socket_dir(), f"{name_hash(key_)}.sock")
    return path if len(os.fsencode(path)) <= 107 else None


def dir_is_private(path: str) -> bool:
    """Whether ``path`` is a directory (not a link) of this user that no one else may
    enter."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def resident_call() -> None:
    """Answer this ``maxrepeat hook AGENT …`` process through the resident server and
    exit; or return, having changed nothing but ``sys.stdin`` (the input bytes already
    read), for ``main`` to run the full path."""
    if not _for_the_server(sys.argv):
        return  # only the script's hook calls (a ``python -m`` import path has the cwd)
    stdin = sys.stdin
    data = _piped_input()
    if data is None:
        return
    path, restart, answer = None, False, None
    try:
        key_ = key()
        path = socket_path(key_)
        if path is not None and dir_is_private(os.path.dirname(path)):
            answer, restart = _ask(path, _request(key_, data))
        else:
            restart = path is not None and not os.path.lexists(os.path.dirname(path))
    except Exception:  # whatever went wrong, the full path answers
        answer = None
    if answer is not None:
        _write_and_exit(*answer)
    import io

    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding=stdin.encoding,
                                 errors=stdin.errors, newline="\n")
    if restart and path is not None:
        import atexit

        from ._hookstart import start_server  # only when there is no server to ask

        atexit.register(start_server, path)  # after the full path's answer


def _for_the_server(argv: list[str]) -> bool:
    """Whether ``argv`` is the ``maxrepeat`` script's hook call of a built-in agent that
    the resident server may answer (not served already, not turned off, POSIX)."""
    return not (SERVED or len(argv) < 3 or argv[1] != "hook" or not builtin_agent(argv[2])
                or "--help" in argv or os.environ.get("MAXREPEAT_HOOK_RESIDENT", "1") == "0"
                or os.path.basename(argv[0]) != "maxrepeat" or os.name != "posix")


def _piped_input() -> bytes | None:
    """Standard input's bytes, or None when a stream is missing or a terminal (a person
    at a terminal: the full path, as it always was) or it cannot be read."""
    streams = (sys.stdin, sys.stdout, sys.stderr)
    try:
        if None in streams or os.isatty(0) or os.isatty(1) or os.isatty(2):
            return None
        return sys.stdin.buffer.read()
    except (OSError, ValueError, AttributeError):
        return None


def _request(key_: bytes, data: bytes) -> bytes:
    mask = os.umask(0o077)
    os.umask(mask)
    env = b"\0".join(k + b"=" + v for k, v in os.environb.items())
    streams = "\0".join(f"{s.encoding}\0{s.errors}" for s in (sys.stdin, sys.stdout, sys.stderr))
    return b"".join((MAGIC, record(b"k", key_),
                     record(b"a", b"\0".join(os.fsencode(a) for a in sys.argv)),
                     record(b"c", os.getcwdb()), record(b"v", env),
                     record(b"m", str(mask).encode()), record(b"s", streams.encode()),
                     record(b"i", data)))


def _ask(path: str, request: bytes) -> tuple[tuple[int, bytes, bytes] | None, bool]:
    """(exit status, standard output, standard error) from the server at ``path``, or
    None; and whether a new server should be started."""
    import _socket

    try:
        timeout = float(os.environ.get(_TIMEOUT, "") or 5)
    except ValueError:
        timeout = 5.0
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None, True  # no server (or a dead one's socket): start one
        server = _peer(sock)
        if server is None:
            return None, False  # another user's socket: never talk to it
        reply = bytearray()
        try:
            sock.sendall(request)
            first = _read(sock, reply, lambda recs: bool(recs), timeout)
        except TimeoutError:
            _kill(server)  # a server that does not take a call in time is broken
            return None, True
        if not first or first[0][0] != b"p" or not first[0][1].isdigit():
            return None, False
        try:
            recs = _read(sock, reply, None, _REPLY_WAIT)
        except TimeoutError:
            _kill(int(first[0][1]))  # the child that took the call
            return None, False
        # stale: the server has exited; start another
        return _answer(recs), recs is not None and [k for k, _ in recs] == [b"p", b"s"]
    finally:
        sock.close()


def _read(sock: _socket.socket, buf: bytearray, enough: object,
          timeout: float) -> list[tuple[bytes, bytes]] | None:
    """Receive into ``buf`` until ``enough(records)`` (None: until the end); the records."""
    sock.settimeout(timeout)
    while True:
        recs = split(buf)
        if recs is not None and callable(enough) and enough(recs):
            return recs
        chunk = sock.recv(1 << 16)
        if not chunk:
            return split(buf)
        buf += chunk


def _answer(recs: list[tuple[bytes, bytes]] | None) -> tuple[int, bytes, bytes] | None:
    if recs is None or [k for k, _ in recs] != [b"p", b"o", b"e", b"x"]:
        return None
    code = recs[3][1]
    if not code.lstrip(b"-").isdigit():
        return None
    return int(code), recs[1][1], recs[2][1]


def _peer(sock: _socket.socket) -> int | None:
    """The server's process id (0 where the system does not say), or None when it does
    not run as this user."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:  # the directory's owner and mode were checked
        return 0
    cred = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
    pid, uid = int.from_bytes(cred[0:4], sys.byteorder), int.from_bytes(cred[4:8], sys.byteorder)
    return pid if uid == os.geteuid() else None


def _kill(pid: int) -> None:
    if pid > 0:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def _write_and_exit(code: int, out: bytes, err: bytes) -> None:
    """Write the served answer and end the process with its status."""
    for fd, data in ((1, out), (2, err)):
        try:
            while data:
                data = data[os.write(fd, data):]
        except BrokenPipeError:
            if fd == 1:  # as main() says it for the full path
                _write_and_exit(1, b"", b"maxrepeat: standard output was closed before the "
                                b"report was complete (the run was cut short: no verdict)\n")
        except OSError:
            pass
    os._exit(code & 0xFF)
