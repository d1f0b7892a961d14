"""What a later agent hook call costs as a whole process (issue 12 item 4; start-up):
``python bench/hook_startup.py [--rounds 15] [--before OTHER_SRC]``.

For each of the four agents a small session (200 answered calls and one made) is written
as the agent writes it, its first hook call saves the state, one more call is appended,
and that later call's hook input is then run again and again as the agent runs it (the
``maxrepeat`` script beside the interpreter, what ``maxrepeat hook install`` writes; each
tree's ``src`` on ``PYTHONPATH``, its bytecode written), in interleaved rounds with the
floor (``python -c pass``) and the libraries a hook needs imported and nothing else
(msgspec, dataclasses, json, pathlib). ``--before`` adds the same calls run by another
tree (for example a checkout of main before a change), with its own saved state.
Reported: children's user + system CPU per process, median and p99 over the rounds, and
the median's ratio to the floor's; the machine load before and after. Both trees must
answer every call with the same output.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
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
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{cmd[:3]} failed ({done.returncode}): {done.stderr!r}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--before", help="another tree's src, timed the same way")
    ap.add_argument("--flags", default=FLAGS,
                    help=f"the hook's grader flags (default: {FLAGS!r}, as installed)")
    args = ap.parse_args()
    flags = args.flags.split()
    base = {**os.environ}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    trees = {"after": str(SRC)}
    if args.before:
        trees = {"before": args.before, **trees}
    exe = cch._exe()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base["COPILOT_HOME"] = str(tmp / "copilot")
        cases: dict[str, tuple[list[str], bytes, dict[str, str]]] = {
            "floor": ([sys.executable, "-c", "pass"], b"", base),
            "libraries only": ([sys.executable, "-c", LIBS], b"", base)}
        for tree, src in trees.items():
            subprocess.run([sys.executable, "-m", "compileall", "-q", src], env=base,
                           stdout=subprocess.DEVNULL, check=True)
        for agent in AGENTS:
            log, first, later = _session(agent, tmp, args.calls)
            for tree, src in trees.items():
                env = {**base, "PYTHONPATH": src}
                cmd = [*exe, "hook", agent, *flags, "--cache-dir", str(tmp / f"{agent}-{tree}")]
                _cpu(cmd, json.dumps(first).encode(), env)  # the first call: state saved
                cases[f"{agent} {tree}"] = (cmd, json.dumps(later).encode(), env)
            _append(agent, log, args.calls)
        for cmd, stdin, env in cases.values():  # each tree's state saved with the later call
            _cpu(cmd, stdin, env)
        load = os.getloadavg()[0]
        cpu: dict[str, list[float]] = {k: [] for k in cases}
        outputs: dict[str, set[bytes]] = {}
        for _ in range(args.rounds):
            for name, (cmd, stdin, env) in cases.items():
                seconds, out = _cpu(cmd, stdin, env)
                cpu[name].append(seconds * 1e3)
                outputs.setdefault(name.split()[0], set()).add(out)
        shutil.rmtree(tmp / "copilot", ignore_errors=True)
    floor = statistics.median(cpu["floor"])
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f}; {args.rounds} rounds; exe {exe}; "
          f"flags {args.flags}")
    for name, xs in cpu.items():
        xs.sort()
        p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
        med = statistics.median(xs)
        print(json.dumps({"case": name, "median_ms": round(med, 1), "p99_ms": round(p99, 1),
                          "ratio": round(med / floor, 2)}))
    differ = [a for a, outs in outputs.items() if a in AGENTS and len(outs) != 1]
    print("same output in every tree and round:", not differ, differ)


if __name__ == "__main__":
    main()
