"""What an agent hook call costs as a whole process (issue 12 item 4, issue 25 item 7):
``python bench/hook_startup.py [--rounds 15] [--calls 200] [--before OTHER_SRC]``.

For each of the four agents a small session (200 answered calls and one made) is written
as the agent writes it, its first hook call saves the state, one more call is appended,
and that later call's hook input is then run again and again as the agent runs it (the
``maxrepeat`` script beside the interpreter, what ``maxrepeat hook install`` writes; each
tree's ``src`` on ``PYTHONPATH``, its bytecode written), in interleaved rounds with the
floor (``python -c pass``) and the libraries a hook needs imported and nothing else
(msgspec, dataclasses, json, pathlib). ``--before`` adds the same calls run by another
tree (for example a checkout of main before a change), with its own saved state.
Each hook call is timed twice: ``full`` (``MAXREPEAT_HOOK_RESIDENT=0``: the whole guard
imported and run in the process) and ``resident`` (the process is the client of the
resident server, cli/hookclient.py, started and warm before the rounds). Claude Code's
call is timed as PreToolUse and PostToolUse; every agent's first call (a new session,
no saved state) and later call. Reported: the hook process's user + system CPU, median
and p99 over the rounds, and the median's ratio to the floor's; for the resident calls
also the server's CPU per call (the forked child and the server's accept, read from
/proc, a mean: its clock ticks are 10 ms) and the total's ratio; ``cold``: a first call
with no server running (the full path, then the server started in the background). The
machine load before and after. Every mode and tree must answer each call with the same
output.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SRC = BENCH.parent / "src"
sys.path.insert(0, str(BENCH))

import agent_log_hooks as alh  # noqa: E402
import claude_code_hook as cch  # noqa: E402

AGENTS = ("claude-code", "codex", "gemini-cli", "copilot-cli")
#: what ``maxrepeat hook install AGENT`` writes without flags
FLAGS = "--preset live"
LIBS = "import msgspec, dataclasses, json, pathlib, enum, fcntl"


def _session(agent: str, tmp: Path, n: int) -> tuple[Path, dict[str, object], dict[str, object]]:
    """The log of ``n`` answered calls and one made; the first and the later hook input
    (after one more call)."""
    if agent == "claude-code":
        log = tmp / "cc.jsonl"
        with log.open("w") as fh:
            for i in range(n):
                fh.write("".join(cch._records(i)))
            fh.write(cch._records(n)[0])
        return log, cch._payload(log, n), cch._payload(log, n + 1)
    log = tmp / "copilot" / "session-state" / "s" / "events.jsonl" \
        if agent == "copilot-cli" else tmp / f"{agent}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as fh:
        fh.write(alh._lines(alh._start(agent)))
        for i in range(n):
            fh.write(alh._lines(alh._before(agent, i) + alh._after(agent, i)))
        fh.write(alh._lines(alh._before(agent, n)))
    return log, alh._payload(agent, log, n), alh._payload(agent, log, n + 1)


def _append(agent: str, log: Path, n: int) -> None:
    with log.open("a") as fh:
        if agent == "claude-code":
            fh.write(cch._records(n)[1] + cch._records(n + 1)[0])
        else:
            fh.write(alh._lines(alh._after(agent, n) + alh._before(agent, n + 1)))


def _cpu(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2) or done.stderr:
        raise SystemExit(f"{cmd[:3]} failed ({done.returncode}): {done.stderr!r}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def _server_cpu(pid: int) -> float:
    """The server's CPU seconds and its reaped children's (/proc/PID/stat), once the
    child that answered the last call has exited and been reaped."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + 5
    while children.exists() and children.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.001)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _server(sockets: Path, timeout: float = 30.0) -> int:
    """The pid of the one resident server under ``sockets`` (waits for it to listen)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for lock in sockets.glob("*/*.sock.lock"):
            pid = lock.read_text().split()
            if pid and Path(str(lock)[:-5]).exists():
                return int(pid[0])
        time.sleep(0.05)
    raise SystemExit(f"no resident server under {sockets}")


def _stop_servers(sockets: Path) -> None:
    for lock in sockets.glob("*/*.sock.lock"):
        pid = lock.read_text().split()
        if pid:
            try:
                os.kill(int(pid[0]), signal.SIGTERM)
            except OSError:
                pass


def _payloads(agent: str, tmp: Path, n: int) -> tuple[Path, dict[str, tuple[bytes, bytes]]]:
    """The session's log and, by event, (first call's input, later call's input); the
    later call is in the log after `_append` (the first call's state saved before)."""
    log, first, later = _session(agent, tmp, n)
    out = {"post": (json.dumps(first).encode(), json.dumps(later).encode())}
    if agent == "claude-code":  # PreToolUse of the call the agent makes next
        pre = [{k: v for k, v in p.items() if k != "tool_response"} | {
            "hook_event_name": "PreToolUse"} for p in (first, later)]
        out["pre"] = (json.dumps(pre[0]).encode(), json.dumps(pre[1]).encode())
    return log, out


def _cases(args: argparse.Namespace, tmp: Path, base: dict[str, str],
           trees: dict[str, str]) -> dict[str, tuple[list[str], bytes, dict[str, str]]]:
    """name -> (command, input, environment) of every timed process."""
    exe, flags = cch._exe(), args.flags.split()
    cases = {"floor": ([sys.executable, "-c", "pass"], b"", base),
             "libraries only": ([sys.executable, "-c", LIBS], b"", base)}
    firsts: dict[str, tuple[list[str], bytes, dict[str, str]]] = {}
    for agent in AGENTS:
        log, log_inputs = _payloads(agent, tmp, args.calls)
        for tree, src in trees.items():
            for mode in ("full", "resident") if tree == "after" else ("full",):
                env = {**base, "PYTHONPATH": src, "MAXREPEAT_HOOK_RESIDENT":
                       "0" if mode == "full" else "1"}
                for event, (first, later) in log_inputs.items():
                    name = f"{agent} {event} {tree} {mode}".replace(" after", "")
                    cache = tmp / "cache" / name.replace(" ", "-")
                    cmd = [*exe, "hook", agent, *flags, "--cache-dir", str(cache)]
                    _cpu(cmd, first, env)  # the first call: state saved
                    cases[f"{name} later"] = (cmd, later, env)
                    firsts[f"{name} first"] = (cmd[:-1], first, env)
        _append(agent, log, args.calls)
    return cases | firsts


def _rounds(args: argparse.Namespace, tmp: Path,
            cases: dict[str, tuple[list[str], bytes, dict[str, str]]],
            server: int) -> tuple[dict[str, list[float]], dict[str, float], set[str]]:
    """CPU ms per case and round, the server's mean CPU ms per resident call, and the
    calls whose output differed between modes, trees or rounds."""
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    served: dict[str, float] = {}
    outputs: dict[str, set[bytes]] = {}
    for r in range(args.rounds):
        for name, (cmd, stdin, env) in cases.items():
            if name.endswith(" first"):  # a new session each round: no saved state
                cmd = [*cmd, str(tmp / "first" / f"{name.replace(' ', '-')}-{r}")]
            before = _server_cpu(server) if " resident " in name else 0.0
            seconds, out = _cpu(cmd, stdin, env)
            if " resident " in name:
                served[name] = served.get(name, 0.0) + _server_cpu(server) - before
            cpu[name].append(seconds * 1e3)
            call = " ".join(w for w in name.split() if w not in ("full", "resident", "before"))
            outputs.setdefault(call, set()).add(out)
    means = {k: v * 1e3 / args.rounds for k, v in served.items()}
    return cpu, means, {k for k, outs in outputs.items() if len(outs) != 1}


def _cold(args: argparse.Namespace, tmp: Path,
          base: dict[str, str]) -> tuple[list[float], list[float]]:
    """CPU ms of a first Claude Code call with no server running (each round a new socket
    directory; the server it starts is stopped once it listens), and of the same call
    by the full path, in turns."""
    (tmp / "cold").mkdir()
    payload = _payloads("claude-code", tmp / "cold", args.calls)[1]["post"][0]
    cold: list[float] = []
    full: list[float] = []
    for r in range(min(args.rounds, 7)):
        sockets = tmp / "cold" / f"sockets-{r}"
        sockets.mkdir(parents=True)
        env = {**base, "PYTHONPATH": args.src, "TMPDIR": str(sockets),
               "MAXREPEAT_HOOK_RESIDENT_IDLE": "5"}
        for mode, times in (("1", cold), ("0", full)):
            cmd = [*cch._exe(), "hook", "claude-code", *args.flags.split(), "--cache-dir",
                   str(tmp / "cold" / f"cache-{r}-{mode}")]
            times.append(_cpu(cmd, payload, env | {"MAXREPEAT_HOOK_RESIDENT": mode})[0] * 1e3)
            if mode == "1":
                _server(sockets)
                _stop_servers(sockets)
    return cold, full


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--before", help="another tree's src, timed the same way (full path)")
    ap.add_argument("--src", default=str(SRC), help="the tree timed (default: this one's)")
    ap.add_argument("--flags", default=FLAGS,
                    help=f"the hook's grader flags (default: {FLAGS!r}, as installed)")
    args = ap.parse_args()
    base = {**os.environ}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    trees = {"after": args.src}
    if args.before:
        trees = {"before": args.before, **trees}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base |= {"COPILOT_HOME": str(tmp / "copilot"), "TMPDIR": str(tmp / "sockets")}
        base.pop("XDG_RUNTIME_DIR", None)
        (tmp / "sockets").mkdir()
        for src in trees.values():
            subprocess.run([sys.executable, "-m", "compileall", "-q", src], env=base,
                           stdout=subprocess.DEVNULL, check=True)
        try:
            cases = _cases(args, tmp, base, trees)
            server = _server(tmp / "sockets")
            for name, (cmd, stdin, env) in cases.items():  # each call's state saved
                if not name.endswith(" first"):
                    _cpu(cmd, stdin, env)
            load = os.getloadavg()[0]
            cpu, served, differ = _rounds(args, tmp, cases, server)
            cold = _cold(args, tmp, base)
        finally:
            _stop_servers(tmp / "sockets")
            _stop_servers(tmp / "cold")
    _report(args, load, cpu, served, cold, differ)


def _report(args: argparse.Namespace, load: float, cpu: dict[str, list[float]],
            served: dict[str, float], cold: tuple[list[float], list[float]],
            differ: set[str]) -> None:
    floor = statistics.median(cpu["floor"])
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f}; {args.rounds} rounds; "
          f"{args.calls} calls; flags {args.flags}; floor {floor:.1f} ms")
    for name, xs in [*cpu.items(), ("claude-code post cold first (no server)", cold[0]),
                     ("claude-code post full first (beside cold)", cold[1])]:
        xs.sort()
        p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
        med = statistics.median(xs)
        row: dict[str, object] = {"case": name, "median_ms": round(med, 1),
                                  "p99_ms": round(p99, 1), "ratio": round(med / floor, 2)}
        if name in served:
            row |= {"server_mean_ms": round(served[name], 1),
                    "total_ratio": round((med + served[name]) / floor, 2)}
        print(json.dumps(row))
    print("same output in every mode, tree and round:", not differ, sorted(differ))


if __name__ == "__main__":
    main()
