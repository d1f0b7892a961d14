"""The resident hook server (cli/hookclient.py, cli/hookserver.py, cli/hookchild.py).

A hook call answered by the resident server must be the full path's answer, byte for
byte (standard output, standard error, exit status) with the same state saved, and any
failure of the server must end in the full path's answer. Each test runs the ``maxrepeat``
script as an agent does, with the servers' sockets in its own directory (``TMPDIR``); the
servers a test starts are stopped when it ends (the fixture `sockets`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from maxrepeat.guards.logcheck import RACY
from tests.project.test_startup_imports import _hook_session

SCRIPT = Path(sys.executable).parent / "maxrepeat"
EXE = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "maxrepeat"]
AGENTS = ["claude-code", "codex", "gemini-cli", "copilot-cli"]
FLAGS = ["--preset", "live", "--max", "2"]
Answer = tuple[int, bytes, bytes]

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")


@pytest.fixture
def sockets() -> Iterator[Path]:
    """The directory the tests' servers put their sockets in (short: a socket's path
    holds 107 bytes); they are stopped after."""
    path = Path(tempfile.mkdtemp(prefix="mxr"))
    yield path
    stop_servers(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package (on PYTHONPATH in the calls): a server exits when a file it
    imported changes, and the working tree may change while the tests run."""
    import maxrepeat

    src = tmp_path_factory.mktemp("src")
    shutil.copytree(Path(maxrepeat.__file__).parent, src / "maxrepeat",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    return src


def stop_servers(path: Path) -> None:
    for lock in path.glob("*/*.sock.lock"):
        words = lock.read_text().split()
        if words:
            try:
                os.kill(int(words[0]), signal.SIGKILL)
            except OSError:
                pass


def _env(tmp: Path, sockets: Path, package: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_RUNTIME_DIR", "MAXREPEAT_HOOK_RESIDENT")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env | {"TMPDIR": str(sockets), "COPILOT_HOME": str(tmp / "copilot"),
                  "PYTHONPATH": str(package),
                  "MAXREPEAT_HOOK_RESIDENT_IDLE": "60",
                  "MAXREPEAT_HOOK_RESIDENT_TIMEOUT": "10"} | extra


def call(agent: str, payload: object, env: dict[str, str], *flags: str,
         cwd: Path | None = None, resident: bool = True) -> Answer:
    env = {"MAXREPEAT_HOOK_RESIDENT": "1" if resident else "0"} | env  # env's own first
    done = subprocess.run([*EXE, "hook", agent, *flags], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, cwd=cwd, timeout=120)
    return done.returncode, done.stdout, done.stderr


def server(sockets: Path, not_pid: int = 0, timeout: float = 60.0) -> tuple[int, int]:
    """(pid, calls taken) of the one listening server under ``sockets`` (waits for it;
    for one other than ``not_pid``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for lock in sockets.glob("*/*.sock.lock"):
            words = lock.read_text().split()
            if len(words) == 2 and Path(str(lock)[:-5]).exists() and int(words[0]) != not_pid:
                return int(words[0]), int(words[1])
        time.sleep(0.05)
    raise AssertionError(f"no server under {sockets}")


def start(agent: str, tmp: Path, env: dict[str, str]) -> int:
    """Start the server (a first call starts it in the background); its pid."""
    _, payload = _hook_session(agent, tmp / "warm", 1)
    call(agent, payload, env, *FLAGS, "--cache-dir", str(tmp / "warm-cache"))
    return server(Path(env["TMPDIR"]))[0]


def tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (the status log's clock field left out)."""
    out = {}
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        data = file.read_bytes()
        if file.suffix == ".jsonl" or file.name.startswith("verdicts"):
            data = b"\n".join(_untimed(line) for line in data.split(b"\n"))
        out[str(file.relative_to(path))] = data
    return out


def _untimed(line: bytes) -> bytes:
    try:
        value = json.loads(line)
    except ValueError:
        return line
    if isinstance(value, dict):
        value.pop("time", None)
    return json.dumps(value).encode()


def _session_calls(agent: str, tmp: Path, n: int) -> list[dict[str, object]]:
    """The hook inputs of a session's call ``n``: before it runs and after."""
    _, post = _hook_session(agent, tmp, n)
    if agent == "copilot-cli":  # (the guard reads arguments given as an object)
        post["toolArgs"] = json.loads(str(post["toolArgs"]))
    result = {"claude-code": "error", "copilot-cli": "toolResult"}.get(agent, "tool_response")
    event = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini-cli": "BeforeTool"}
    pre = {k: v for k, v in post.items() if k != result}
    if agent in event:
        pre["hook_event_name"] = event[agent]
    return [pre, post]


def _refused(answer: Answer) -> bool:
    """Whether a pre-call hook's answer keeps the call from running: the agent then runs
    no post-call hook for it, and writes the refusal into its log as the call's result
    (tests/guards/agents/test_e2e_after_block_latency.py; the scripted log gives it the
    tool's output instead), which the guard counts on. A post-call hook run after it
    anyway would be counted too, and every later hook would wait its 2-s limit for a
    result the log never shows."""
    return b'"deny"' in answer[1] or b'"continue": false' in answer[1]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_whole_session_is_answered_as_the_full_path_answers_it(
        tmp_path: Path, sockets: Path, package: Path, agent: str) -> None:
    """Call after call of a session that loops (warn, block, stop), each call run by the
    resident server and by the full path (each with its own state): the same bytes, the
    same exit status at every call, and the same saved state at the end; and the server
    did take every resident call."""
    env = _env(tmp_path, sockets, package)
    pid = start(agent, tmp_path, env)
    taken = server(sockets)[1]
    answers: dict[bool, list[Answer]] = {True: [], False: []}
    for n in range(1, 8):
        payloads = _session_calls(agent, tmp_path, n)
        # the log written more than logcheck.RACY before its hooks: else the resident
        # path (the quicker) could save it as "racy" and the full path not, with no
        # later hook of that log to even them out when the last call is refused
        time.sleep(2 * RACY / 1e9)
        for payload in payloads:
            for resident in (True, False):
                cache = tmp_path / ("resident" if resident else "full")
                answers[resident].append(call(agent, payload, env, *FLAGS, "--cache-dir",
                                              str(cache), resident=resident))
            if _refused(answers[True][-1]):
                break  # no post-call hook for a refused call
    assert answers[True] == answers[False]
    assert any(b"maxrepeat loop guard" in out + err for _, out, err in answers[True])
    assert tree(tmp_path / "resident") == tree(tmp_path / "full")
    assert server(sockets) == (pid, taken + len(answers[True]))


def test_the_callers_environment_and_directory_reach_the_verdict(
        tmp_path: Path, sockets: Path, package: Path) -> None:
    """XDG_CACHE_HOME (where the state goes), COPILOT_HOME (where Copilot's log is), the
    working directory (a relative --cache-dir) and MAXREPEAT_HOOK_CHECK are the calling
    process's, not the server's."""
    env = _env(tmp_path, sockets, package)
    start("copilot-cli", tmp_path, env)
    payload = _session_calls("copilot-cli", tmp_path, 3)[1]
    found = call("copilot-cli", payload, env, *FLAGS, "--cache-dir", str(tmp_path / "a"))
    missing = call("copilot-cli", payload, env | {"COPILOT_HOME": str(tmp_path / "none")},
                   *FLAGS, "--cache-dir", str(tmp_path / "b"))
    assert found != missing
    for resident, home in ((True, "x1"), (False, "x2")):
        changed = env | {"XDG_CACHE_HOME": str(tmp_path / home), "MAXREPEAT_HOOK_CHECK": "full"}
        call("copilot-cli", payload, changed, *FLAGS, resident=resident)
        (tmp_path / f"cwd-{home}").mkdir()
        call("copilot-cli", payload, env, *FLAGS, "--cache-dir", "rel",
             cwd=tmp_path / f"cwd-{home}", resident=resident)
    assert tree(tmp_path / "x1") == tree(tmp_path / "x2") != {}
    assert tree(tmp_path / "cwd-x1") == tree(tmp_path / "cwd-x2") != {}
    for variant in ({}, {"COPILOT_HOME": str(tmp_path / "none")}):
        answers = [call("copilot-cli", payload, env | variant, *FLAGS, "--cache-dir",
                        str(tmp_path / f"c-{resident}-{len(variant)}"), resident=resident)
                   for resident in (True, False)]
        assert answers[0] == answers[1]


def socket_for(env: dict[str, str]) -> Path:
    """The socket the ``maxrepeat`` script run with ``env`` asks."""
    code = ("import sys; sys.path[0] = sys.argv[1]; from maxrepeat.cli import hookclient as h;"
            " print(h.socket_path(h.key()))")
    done = subprocess.run([sys.executable, "-c", code, str(SCRIPT.parent)], env=env,
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def both(agent: str, tmp: Path, env: dict[str, str], name: str) -> tuple[Answer, Answer]:
    """A later call of a looping session answered with the resident path on, and by the
    full path (each with a new state): (resident, full)."""
    _, payload = _hook_session(agent, tmp / name, 4)
    on, off = (call(agent, payload, env, *FLAGS, "--cache-dir", str(tmp / name / mode),
                    resident=mode == "on") for mode in ("on", "off"))
    return on, off


#: a server that breaks the protocol: ``hang`` takes the request and never answers,
#: ``garbage`` answers with a broken record, ``die`` says it took the call and dies
FAKE = r"""
import os, socket, sys, time
from maxrepeat.cli.hookclient import MAGIC, record, split
path, mode, seen, user = sys.argv[1:5]
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
log = open(seen, "w", buffering=1)
if user:  # the socket's peer is who listens on it
    os.setgid(int(user))
    os.setuid(int(user))
listener.listen(8)
log.write("listening\n")
while True:
    conn, _ = listener.accept()
    data = b""
    while not (split(data) or [(b"", b"")])[-1][0] == b"i":
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    log.write(f"{len(data)}\n")
    if mode == "hang":
        time.sleep(3600)
    if mode == "garbage":
        conn.sendall(MAGIC + record(b"p", b"1") + b"o\xff\xff\xff\xff\xff\xff\xff\xff")
    if mode == "die":
        conn.sendall(MAGIC + record(b"p", str(os.getpid()).encode()))
        os._exit(9)
    conn.close()
"""


def fake(path: Path, mode: str, env: dict[str, str], seen: Path,
         user: int | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", FAKE, str(path), mode, str(seen),
                             "" if user is None else str(user)], env=env)
    deadline = time.monotonic() + 60
    while not seen.exists() or not seen.read_text():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize("mode", ["hang", "garbage", "die"])
def test_a_broken_server_gets_the_full_paths_answer(
        tmp_path: Path, sockets: Path, package: Path, mode: str) -> None:
    """A server that never answers (killed after the timeout), a garbled answer, a child
    that dies after taking the call: the full path answers, once."""
    env = _env(tmp_path, sockets, package, MAXREPEAT_HOOK_RESIDENT_TIMEOUT="1")
    path = socket_for(env)
    path.parent.mkdir(mode=0o700)
    proc = fake(path, mode, env, tmp_path / "seen")
    try:
        began = time.monotonic()
        resident, full = both("codex", tmp_path, env, mode)
        assert resident == full and b"maxrepeat loop guard" in full[1]
        assert time.monotonic() - began < 60
        assert tree(tmp_path / mode / "on") == tree(tmp_path / mode / "off") != {}
        assert int((tmp_path / "seen").read_text().split()[1]) > 1000  # it had the call
        if mode == "hang":
            assert proc.wait(30) == -signal.SIGKILL  # a server that hangs is stopped
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root, to run a server as another user")
def test_a_server_of_another_user_is_never_sent_a_call(
        tmp_path: Path, sockets: Path, package: Path) -> None:
    env = _env(tmp_path, sockets, package)
    path = socket_for(env)
    path.parent.mkdir(mode=0o700)
    proc = fake(path, "hang", env, tmp_path / "seen", user=65534)
    try:
        resident, full = both("codex", tmp_path, env, "uid")
        assert resident == full
        # it connected, saw another user and sent nothing
        assert (tmp_path / "seen").read_text().split() == ["listening", "0"]
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_server_is_replaced(tmp_path: Path, sockets: Path, package: Path) -> None:
    env = _env(tmp_path, sockets, package)
    pid = start("claude-code", tmp_path, env)
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    resident, full = both("claude-code", tmp_path, env, "killed")
    assert resident == full and b"maxrepeat loop guard" in full[1]
    assert server(sockets, not_pid=pid)[0] != pid


def test_a_stale_server_answers_nothing_and_exits(
        tmp_path: Path, sockets: Path, package: Path) -> None:
    """A file the server imported changed (a package upgraded or edited): the call gets
    the full path's answer (of the new code) and a new server starts."""
    env = _env(tmp_path, sockets, package)
    pid = start("gemini-cli", tmp_path, env)
    module = package / "maxrepeat" / "guards" / "agents" / "gemini_cli.py"
    st = module.stat()
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    resident, full = both("gemini-cli", tmp_path, env, "stale")
    assert resident == full and b"maxrepeat loop guard" in full[1]
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # (not a zombie: the server is not this test's child)
    assert not Path(f"/proc/{pid}").exists() or sys.platform != "linux"
    new, _ = server(sockets, not_pid=pid)
    assert new != pid
    assert both("gemini-cli", tmp_path, env, "fresh")[0] == full


def test_a_server_for_another_key_refuses_the_call(
        tmp_path: Path, sockets: Path, package: Path) -> None:
    """A server of another configuration found at this socket (MAXREPEAT_PURE set: the
    pure-Python path) takes no call of this one."""
    env = _env(tmp_path, sockets, package)
    pure = env | {"MAXREPEAT_PURE": "1"}
    pid = start("codex", tmp_path, pure)
    path, other = socket_for(env), socket_for(pure)
    assert path != other
    lock = Path(f"{other}.lock")
    before = lock.read_text().split()
    os.rename(other, path)
    resident, full = both("codex", tmp_path, env, "key")
    assert resident == full and b"maxrepeat loop guard" in full[1]
    # it took the call, and refused it
    assert lock.read_text().split() == [str(pid), str(int(before[1]) + 1)]


def test_no_resident_path_when_switched_off_or_the_socket_path_is_too_long(
        tmp_path: Path, sockets: Path, package: Path) -> None:
    env = _env(tmp_path, sockets, package)
    start("codex", tmp_path, env)
    before = server(sockets)
    resident, full = both("codex", tmp_path, env | {"MAXREPEAT_HOOK_RESIDENT": "0"}, "off")
    assert resident == full and server(sockets) == before
    deep = sockets / ("d" * 90)
    deep.mkdir()
    resident, full = both("codex", tmp_path, env | {"TMPDIR": str(deep)}, "long")
    assert resident == full and not list(deep.iterdir())


def test_the_client_imports_almost_nothing(tmp_path: Path, sockets: Path,
                                           package: Path) -> None:
    """A served call's process imports the package's top, the command's module and the
    client, and ``_socket``: not typing, json, msgspec, pathlib or the guards."""
    env = _env(tmp_path, sockets, package)
    start("codex", tmp_path, env)
    _, payload = _hook_session("codex", tmp_path / "imports", 2)
    floor = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=env,
                           capture_output=True, text=True).stderr
    done = subprocess.run([sys.executable, "-X", "importtime", str(SCRIPT), "hook", "codex",
                           *FLAGS, "--cache-dir", str(tmp_path / "c")], env=env,
                          input=json.dumps(payload), capture_output=True, text=True)

    def names(text: str) -> set[str]:
        return {line.rsplit("|", 1)[1].strip() for line in text.splitlines()
                if line.startswith("import time:") and "imported package" not in line}

    extra = names(done.stderr) - names(floor)
    assert extra <= {"__future__", "maxrepeat", "maxrepeat.cli", "maxrepeat.cli._gc", "gc",
                     "maxrepeat.cli.hookclient", "_socket"}, extra
    assert "maxrepeat.cli.hookclient" in extra


def test_the_server_has_imported_what_a_hook_call_imports(tmp_path: Path) -> None:
    """What the server imports (`hookserver.warm`: its list and each agent's) covers every
    module of the package a hook call of each agent imports, first and later call (else
    each child would import it again)."""
    from maxrepeat.cli import hookclient, hookrun
    from maxrepeat.guards.agents import names
    from tests.project.test_startup_imports import _hook_imports

    assert [a for a in names() if hookclient.builtin_agent(a)] == names()
    assert not hookclient.builtin_agent("install") and not hookclient.builtin_agent("_x")
    assert all(hookrun.is_agent(a) for a in names())
    code = ("import sys; from maxrepeat.cli.hookserver import warm\n"
            "warm()\n"
            "print('\\n'.join(sys.modules))")
    warm = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout.split())
    for agent in AGENTS:
        for n in (2, 3):
            _, payload = _hook_session(agent, tmp_path, n)
            mods, _ = _hook_imports(tmp_path, agent, payload, *FLAGS, "--cache-dir",
                                    str(tmp_path / "c"))
            assert {m for m in mods if m.startswith("maxrepeat")} <= warm, agent


#: what a module must not read when it is imported, since the server imports it before
#: any call's environment exists (attribute or call names, as written)
_PER_CALL = ("environ", "environb", "getenv", "getcwd", "getcwdb", "cwd", "home",
             "expanduser", "argv", "stdin", "stdout", "stderr", "time", "time_ns", "monotonic",
             "now", "today", "localtime", "getpid", "umask", "get_terminal_size", "isatty")


def _import_time_reads(source: str) -> list[str]:
    """The names of `_PER_CALL` a module's import evaluates: its top-level statements,
    class bodies, decorators and default values (not function bodies)."""
    import ast

    found: list[str] = []

    def scan(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for expr in [*args.defaults, *[d for d in args.kw_defaults if d]]:
                scan(expr)
            for expr in getattr(node, "decorator_list", []):
                scan(expr)
            return
        if isinstance(node, ast.AnnAssign):  # a field: only its value is evaluated
            if node.value is not None:
                scan(node.value)
            return
        if isinstance(node, ast.Attribute) and node.attr in _PER_CALL:
            found.append(f"{ast.unparse(node)} (line {node.lineno})")
        if isinstance(node, ast.Name) and node.id in _PER_CALL \
                and isinstance(node.ctx, ast.Load):
            found.append(f"{node.id} (line {node.lineno})")
        for child in ast.iter_child_nodes(node):
            scan(child)

    for statement in ast.parse(source).body:
        if isinstance(statement, ast.If) and ast.unparse(statement.test) == "TYPE_CHECKING":
            continue
        scan(statement)
    return found


def test_no_module_the_server_imports_reads_a_calls_context_when_imported() -> None:
    """The environment, the working directory, the clock, ``sys.argv`` and the standard
    streams are read during a call, in the child, from the client's; none of the package's
    modules the server imports reads them at import (``maxrepeat``'s own
    ``MAXREPEAT_PURE`` is part of the server's key)."""
    code = ("import importlib, sys\nfrom maxrepeat.cli import hookserver\n"
            "for name in hookserver.WARM: importlib.import_module(name)\n"
            "print('\\n'.join(f'{n} {m.__file__}' for n, m in list(sys.modules.items())"
            " if n.startswith('maxrepeat') and getattr(m, '__file__', '')"
            " and m.__file__.endswith('.py')))")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    modules = dict(line.split(" ", 1) for line in lines if line)
    assert len(modules) > 50
    reads = {name: _import_time_reads(Path(path).read_text(encoding="utf-8"))
             for name, path in modules.items()}
    assert [r.split(" (")[0] for r in reads.pop("maxrepeat")] == ["_os.environ"]
    assert {name: found for name, found in reads.items() if found} == {}
    assert _import_time_reads("import os\nBASE = os.environ.get('X')\n") != []
    assert _import_time_reads("import os\ndef f(): return os.getcwd()\n") == []
