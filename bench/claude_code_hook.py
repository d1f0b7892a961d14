"""The Claude Code hook's cost (issue 12 item 4): ``python bench/claude_code_hook.py``.

1. First call on a long transcript: a synthetic Claude Code session of 20,000 Bash calls
   (about 28 MB: each result carries ~1.3 KB of output), graded by a `maxrepeat hook
   claude-code` process without saved state, against `maxrepeat grade` of the same file
   (both whole processes, same flags, best of 3).
2. Added latency per call: a 10,000-call session grows one call (assistant record) at a
   time; after each the hook runs as Claude Code runs it (a new process, the payload on
   standard input, the current result in the payload). Whole-process latency is measured
   on a sample of calls spread over the session (``--sample``, default 200), the floor
   being ``python -c pass`` of the same interpreter, run right after each sampled call;
   in-process latency (`guard()` only) on every call. ``--pre SECONDS``: before each
   PostToolUse call a PreToolUse call runs too, SECONDS after the call was written (the
   time the agent takes to start the hook process), as an agent with both hooks
   installed runs them; both are timed in-process. The log does not change between the
   two, so the second finds it untouched.

Every process runs this tree's ``src`` (``PYTHONPATH``), with its bytecode written (as an
installed package has it), as the agent runs it: the ``maxrepeat`` script beside the
interpreter (what ``maxrepeat hook install`` writes), ``python -m maxrepeat`` when there
is none.

Machine load (1-minute load average) is printed with the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from maxrepeat import MaxRepeatConfig
from maxrepeat.guards.claude_code import guard

FLAGS = ["--max", "3", "--max-cycle-period", "2"]
OUTPUT = "line of build output that the tool printed, " * 10  # ~450 bytes


def _records(i: int) -> tuple[str, str]:
    cmd = f"make target-{i % 97}"
    use = {"type": "tool_use", "id": f"toolu_{i:06d}", "name": "Bash",
           "input": {"command": cmd, "description": "build"}}
    out = f"{i % 89} {OUTPUT}"
    a = {"parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": f"a{i}",
         "sessionId": "bench", "message": {"id": f"msg_{i}", "type": "message",
                                            "role": "assistant", "content": [use]}}
    u = {"parentUuid": f"a{i}", "isSidechain": False, "type": "user", "uuid": f"u{i}",
         "sessionId": "bench",
         "message": {"role": "user", "content": [{"tool_use_id": use["id"],
                                                  "type": "tool_result", "content": out,
                                                  "is_error": False}]},
         "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False}}
    return json.dumps(a) + "\n", json.dumps(u) + "\n"


def _payload(path: Path, i: int) -> dict[str, Any]:
    out = f"{i % 89} {OUTPUT}"
    return {"session_id": "bench", "transcript_path": str(path), "cwd": "/tmp",
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": f"make target-{i % 97}"}, "tool_use_id": f"toolu_{i:06d}",
            "tool_response": {"stdout": out, "stderr": "", "interrupted": False}}


SRC = Path(__file__).resolve().parent.parent / "src"
#: the children run this tree, with their bytecode cached as an installed package has it
ENV = {**os.environ, "PYTHONPATH": str(SRC)}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)


def _exe() -> list[str]:
    script = Path(sys.executable).parent / "maxrepeat"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "maxrepeat"]


CPU: list[float] = []  # CPU seconds (user + system) of each timed child process


def _time(cmd: list[str], stdin: bytes = b"") -> float:
    """Wall seconds of one whole process; its CPU seconds are appended to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, check=False, env=ENV)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def first_call(tmp: Path, calls: int) -> dict[str, Any]:
    path = tmp / "long.jsonl"
    with path.open("w") as fh:
        for i in range(calls):
            a, u = _records(i)
            fh.write(a + u)
    a, _ = _records(calls)
    with path.open("a") as fh:
        fh.write(a)  # the current call, its result not yet written
    payload = json.dumps(_payload(path, calls)).encode()
    grade, grade_cpu, hook, hook_cpu = [], [], [], []
    for k in range(3):
        grade.append(_time([*_exe(), "grade", str(path), "--format", "claude-code", *FLAGS,
                            "--output", "json", "--quiet"]))
        grade_cpu.append(CPU[-1])
        hook.append(_time([*_exe(), "hook", "claude-code", *FLAGS, "--cache-dir",
                           str(tmp / f"first-{k}")], payload))
        hook_cpu.append(CPU[-1])
    return {"calls": calls, "mb": path.stat().st_size / 1e6, "grade_s": min(grade),
            "hook_s": min(hook), "ratio_wall": min(hook) / min(grade),
            "grade_cpu_s": min(grade_cpu), "hook_cpu_s": min(hook_cpu),
            "ratio_cpu": min(hook_cpu) / min(grade_cpu)}


def _cache_bytes(cache: Path) -> dict[str, int]:
    """The sizes of the session's saved state: the state file, and its side files."""
    files = list(cache.iterdir())
    return {"state": sum(p.stat().st_size for p in files if p.suffix == ".state"),
            "side": sum(p.stat().st_size for p in files if p.suffix == ".marks")}


def _tenths(xs: list[float]) -> list[float]:
    """The median of each tenth of ``xs``, in ms."""
    return [round(statistics.median(xs[k * len(xs) // 10:(k + 1) * len(xs) // 10]) * 1e3, 2)
            for k in range(10)]


def per_call(tmp: Path, calls: int, sample: int, pre: float | None = None) -> dict[str, Any]:
    path = tmp / "grow.jsonl"
    path.write_text("")
    cache = tmp / "grow-cache"
    configs = [MaxRepeatConfig(max=3, max_cycle_period=2)]
    every = max(1, calls // sample)
    inproc: list[float] = []
    inproc_cpu: list[float] = []  # CPU seconds of this process (load inflates wall time)
    whole: list[float] = []
    floor: list[float] = []
    whole_cpu: list[float] = []
    floor_cpu: list[float] = []
    sizes: dict[int, dict[str, int]] = {}
    pre_cpu: list[float] = []
    with path.open("a") as fh:
        for i in range(calls):
            a, u = _records(i)
            fh.write(a)
            fh.flush()
            if i % every == 0:
                whole.append(_time([*_exe(), "hook", "claude-code", *FLAGS, "--cache-dir",
                                    str(cache)], json.dumps(_payload(path, i)).encode()))
                whole_cpu.append(CPU[-1])
                floor.append(_time([sys.executable, "-c", "pass"]))
                floor_cpu.append(CPU[-1])
            if pre is not None:
                time.sleep(pre)
                before = {k: v for k, v in _payload(path, i).items() if k != "tool_response"}
                c = time.process_time()
                guard({**before, "hook_event_name": "PreToolUse"}, configs, cache_dir=cache)
                pre_cpu.append(time.process_time() - c)
            t, c = time.perf_counter(), time.process_time()
            guard(_payload(path, i), configs, cache_dir=cache)
            inproc.append(time.perf_counter() - t)
            inproc_cpu.append(time.process_time() - c)
            if i in (100, calls - 1):
                sizes[i] = _cache_bytes(cache)
            fh.write(u)
            fh.flush()

    def q(xs: list[float], p: float) -> float:
        return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]

    return {"calls": calls, "mb": path.stat().st_size / 1e6,
            "whole_median_ms": statistics.median(whole) * 1e3,
            "whole_p99_ms": q(whole, 0.99) * 1e3,
            "floor_median_ms": statistics.median(floor) * 1e3,
            "whole_cpu_median_ms": statistics.median(whole_cpu) * 1e3,
            "whole_cpu_p99_ms": q(whole_cpu, 0.99) * 1e3,
            "floor_cpu_median_ms": statistics.median(floor_cpu) * 1e3,
            "inproc_median_ms": statistics.median(inproc) * 1e3,
            "inproc_p99_ms": q(inproc, 0.99) * 1e3,
            "inproc_first_100_median_ms": statistics.median(inproc[:100]) * 1e3,
            "inproc_last_100_median_ms": statistics.median(inproc[-100:]) * 1e3,
            "inproc_cpu_median_ms": statistics.median(inproc_cpu) * 1e3,
            "inproc_cpu_p99_ms": q(inproc_cpu, 0.99) * 1e3,
            "inproc_cpu_first_100_median_ms": statistics.median(inproc_cpu[:100]) * 1e3,
            "inproc_cpu_last_100_median_ms": statistics.median(inproc_cpu[-100:]) * 1e3,
            "samples": len(whole),
            # the curve: the median of each tenth of the session (CPU)
            "inproc_cpu_tenths_ms": _tenths(inproc_cpu),
            **({} if not pre_cpu else {"pre_inproc_cpu_tenths_ms": _tenths(pre_cpu)}),
            **({} if not pre_cpu else {
                "pre_delay_s": pre,
                "pre_inproc_cpu_median_ms": statistics.median(pre_cpu) * 1e3,
                "pre_inproc_cpu_p99_ms": q(pre_cpu, 0.99) * 1e3,
                "pre_inproc_cpu_first_100_median_ms": statistics.median(pre_cpu[:100]) * 1e3,
                "pre_inproc_cpu_last_100_median_ms": statistics.median(pre_cpu[-100:]) * 1e3}),
            # what a call writes: the state file whole; side files only what they grew
            "cache_bytes_call_100": sizes.get(100), "cache_bytes_last_call": sizes.get(calls - 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--session", type=int, default=10000)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--no-first", action="store_true", help="only the per-call session")
    ap.add_argument("--pre", type=float, default=None,
                    help="also a PreToolUse call before each call, this many seconds after it "
                         "was written")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], env=ENV,
                   stdout=subprocess.DEVNULL, check=True)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print("load before:", os.getloadavg()[0], "exe:", _exe())
        if not args.no_first:
            print(json.dumps(first_call(tmp, args.calls), indent=1))
        print("check:", os.environ.get("MAXREPEAT_HOOK_CHECK") or "(default)")
        print(json.dumps(per_call(tmp, args.session, args.sample, args.pre), indent=1))
        print("load after:", os.getloadavg()[0])


if __name__ == "__main__":
    main()
