"""The maxrepeat benchmark: ``python bench/run.py`` (``--quick`` for a small run).

Generates synthetic trajectories under ``bench/data/`` (git-ignored; reused when present at
the same scale) and prints each figure next to its reference, both measured in this run:

- the large trajectory (500,000 turns, one call each, ~300 MB) graded with
  ``max_cycle_period: 10`` in each match mode, on each grading path (the native fast path
  when it is built, and pure Python), divided by the floor: msgspec decoding the same bytes
  into structs holding only ``type`` and ``data.toolName``, ``toolCallId``, ``arguments``,
  ``result`` (the last two as ``msgspec.Raw``), with ``gc=False`` structs (the stricter
  floor, as the reader's structs are) and GC-tracked ones. Targets against the gc=False
  floor: <= 1.5 (name, name-args), <= 2.0 (observation);
- the same divided by ``json.load`` of the file: target <= 0.35;
- each of those both in-process (CPU s of the benchmark process: grading the bytes in
  memory, or the file) and as whole processes (CPU s from ``wait4``: ``maxrepeat grade``
  against a Python process that reads and decodes the file), with the machine's load
  average beside each figure;
- ``maxrepeat grade`` of 10,000 small files with ``-j 2`` against ``-j 1``: target >= 1.7
  (speed-up on two cores);
- peak memory (RSS) of ``maxrepeat grade`` over a 1 GB JSONL: target < 200 MB;
- start-up: ``maxrepeat grade tiny.json --max 3`` against ``python -c pass``, wall and
  CPU time (medians of 21 interleaved runs): target <= 6.

It is a measurement, never a pass/fail test. ``--scale 0.1`` shrinks every data set.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
TOOLS = ["bash", "read_file", "edit_file", "grep", "list_dir"]


# --- data ---------------------------------------------------------------------------------

def _turn(i: int, k: int) -> str:
    """One turn: turn_start, one tool_call, its tool_result, turn_end (~620 bytes)."""
    # Mostly varied work, with a short loop (a cycle of period 3, six copies) now and then,
    # so the search has real runs to report.
    j = i % 1000
    if j < 18:
        k = j % 3
    tool = TOOLS[k % len(TOOLS)]
    cmd = f"pytest -q tests/test_mod_{k % 9973}.py -k case_{k % 101}"
    out = (f"collected {k % 50} items; FAILED tests/test_mod_{k % 9973}.py::case_{k % 101} "
           "- AssertionError: expected 'ok' but got 'retry' " + "." * (90 + k % 97))
    return (
        f'{{"type":"turn_start","data":{{"turnId":"t{i}"}}}},'
        f'{{"type":"tool_call","data":{{"toolName":"{tool}","toolCallId":"c{i}",'
        f'"arguments":{{"command":"{cmd}","cwd":"/work/repo","timeout":30.0,"env":{{"CI":"1"}}}}}}}},'
        f'{{"type":"tool_result","data":{{"toolCallId":"c{i}","result":"{out}","success":true}}}},'
        f'{{"type":"turn_end","data":{{"turnId":"t{i}"}}}}'
    )


def _trajectory_text(tid: str, turns: int, seed: int) -> str:
    body = ",".join(_turn(i, (i * 7919 + seed) % 100003) for i in range(turns))
    return f'{{"id":"{tid}","stimulus":{{"name":"bench"}},"events":[{body}]}}'


def generate(data: Path, scale: float) -> dict[str, Path]:
    """Write the data sets (skipped when a stamp says they exist at this scale)."""
    data.mkdir(parents=True, exist_ok=True)
    stamp = data / "SCALE"
    paths = {"large": data / "large.json", "small": data / "small", "jsonl": data / "big.jsonl",
             "tiny": data / "tiny.json"}
    if stamp.exists() and stamp.read_text() == str(scale):
        return paths
    t0 = time.perf_counter()
    turns = max(100, int(500_000 * scale))
    with open(paths["large"], "w") as fh:
        fh.write('{"id":"large","stimulus":{"name":"bench"},"events":[')
        step = 10_000
        for a in range(0, turns, step):
            part = ",".join(_turn(i, (i * 7919) % 100003) for i in range(a, min(turns, a + step)))
            fh.write(("," if a else "") + part)
        fh.write("]}")
    if paths["small"].exists():
        shutil.rmtree(paths["small"])
    paths["small"].mkdir()
    files = max(20, int(10_000 * scale))
    for n in range(files):
        sub = paths["small"] / f"{n // 1000:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"run-{n:05d}.json").write_text(_trajectory_text(f"small-{n}", 12 + n % 20, n))
    target = int(1_000_000_000 * scale)
    written = 0
    n = 0
    with open(paths["jsonl"], "w") as fh:
        while written < target:
            line = _trajectory_text(f"rollout-{n}", 40 + n % 120, n) + "\n"
            fh.write(line)
            written += len(line)
            n += 1
    paths["tiny"].write_text(_trajectory_text("tiny", 3, 1))
    stamp.write_text(str(scale))
    print(f"generated data in {time.perf_counter() - t0:.1f} s: large {_mb(paths['large'])}, "
          f"{files} small files, JSONL {_mb(paths['jsonl'])} ({n} trajectories)")
    return paths


def _mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.0f} MB"


# --- the floor ----------------------------------------------------------------------------

class _FloorData(msgspec.Struct, rename="camel"):
    tool_name: str | None = None
    tool_call_id: str | None = None
    arguments: msgspec.Raw = None  # type: ignore[assignment]
    result: msgspec.Raw = None  # type: ignore[assignment]


class _FloorEvent(msgspec.Struct):
    type: str
    data: _FloorData | None = None


class _FloorTrajectory(msgspec.Struct):
    events: list[_FloorEvent]


# The stricter floor: the same structs untracked by the cyclic GC (as the reader's are).
class _FloorDataNoGC(msgspec.Struct, rename="camel", gc=False):
    tool_name: str | None = None
    tool_call_id: str | None = None
    arguments: msgspec.Raw = None  # type: ignore[assignment]
    result: msgspec.Raw = None  # type: ignore[assignment]


class _FloorEventNoGC(msgspec.Struct, gc=False):
    type: str
    data: _FloorDataNoGC | None = None


class _FloorTrajectoryNoGC(msgspec.Struct, gc=False):
    events: list[_FloorEventNoGC]


#: the floors as whole processes: start Python, read the file, decode it
_FLOOR_SCRIPT = """
import sys
sys.path.insert(0, {here!r})
from run import _FloorTrajectory, _FloorTrajectoryNoGC
import msgspec
kind = sys.argv[1]
with open(sys.argv[2], "rb") as fh:
    data = fh.read()
if kind == "json.load":
    import json
    json.loads(data)
else:
    decoder = msgspec.json.Decoder(_FloorTrajectoryNoGC if kind == "gc=False" else _FloorTrajectory)
    decoder.decode(data)
"""


# --- measuring ------------------------------------------------------------------------------

def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` runs, in CPU seconds of this process (the in-process
    measures are single-threaded: CPU time is what they cost, and it does not count
    time lost to other processes on a busy machine), garbage collected between runs."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def _interleaved(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best time of each function, runs interleaved so drift hits all of them alike."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            best[k] = min(best[k], best_of(fn, 1))
    return best


def _process_cpu(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) of one whole process, from start-up to exit (its own
    rusage from wait4: what it costs, whatever else the machine runs)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


class _Rows(list[tuple[str, str, str, str, str]]):
    """The table's rows, each also printed as soon as it is measured (a long run that
    fails later still shows what it measured)."""

    def append(self, row: tuple[str, str, str, str, str]) -> None:
        super().append(row)
        print("  " + " | ".join(row), flush=True)


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _maxrepeat_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("maxrepeat")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "maxrepeat"]


def _run(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=env)
    return time.perf_counter() - t0


def _run_wall_cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``cmd``: CPU is the child's user + system time."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = 0  # reaped by wait4 above
    return wall, usage.ru_utime + usage.ru_stime


_MAXRSS_HELPER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(usage.ru_maxrss)
"""


def _peak_rss(cmd: list[str]) -> tuple[float, float]:
    """(peak RSS of the command's main process, peak summed RSS of it and its workers), MB.

    The command runs under a small helper process: Linux carries a process's peak RSS
    over fork and exec, so started from this (large) process it would report ours."""
    try:
        import psutil
    except ImportError:
        psutil = None
    helper = subprocess.Popen([sys.executable, "-c", _MAXRSS_HELPER, *cmd],
                              stdout=subprocess.PIPE, text=True)
    peak_tree = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        if psutil is None:
            return
        try:
            root = psutil.Process(helper.pid)
        except psutil.Error:
            return
        while not done.is_set():
            total = 0
            try:
                for child in root.children(recursive=True):
                    try:
                        total += child.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                break
            peak_tree = max(peak_tree, total / 1e6)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = helper.communicate()
    done.set()
    sampler.join()
    return int(out.strip() or 0) / 1024, peak_tree


def _run_cpu(cmd: list[str]) -> tuple[float, list[float]]:
    """(wall seconds, CPU seconds of each process of the run: main, workers, helpers).

    CPU time does not depend on what else the machine runs, so it shows how evenly the
    work was split even when other load makes the wall times say little."""
    try:
        import psutil
    except ImportError:
        return _run(cmd), []
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    seen: dict[int, float] = {}
    while proc.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for q in procs:
            try:
                c = q.cpu_times()
                seen[q.pid] = c.user + c.system
            except psutil.Error:
                pass
        time.sleep(0.05)
    return time.perf_counter() - t0, sorted(seen.values(), reverse=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="size of every data set relative to the full run (default 1)")
    parser.add_argument("--quick", action="store_true", help="the same as --scale 0.02")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (best kept)")
    parser.add_argument("--data", type=Path, default=DATA, help="where the data sets go")
    parser.add_argument("--only", default="large,json,process,batch,memory,startup",
                        help="comma-separated parts to run")
    args = parser.parse_args(argv)
    scale = 0.02 if args.quick else args.scale
    only = set(args.only.split(","))
    paths = generate(args.data, scale)

    import maxrepeat
    from maxrepeat.readers.vally import read_bytes_as_trajectories

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.processor() or '?'}; "
          f"{platform.system()} {platform.release()}; Python {platform.python_version()}; "
          f"msgspec {msgspec.__version__}; scale {scale}")
    rows = _Rows()

    from maxrepeat.core import accel

    paths_graded = ["native", "pure"] if accel.available() else ["pure"]
    print(f"grading paths measured: {', '.join(paths_graded)}")
    if only & {"large", "json"}:
        data = paths["large"].read_bytes()
        floor_dec = msgspec.json.Decoder(_FloorTrajectory)
        floor_nogc = msgspec.json.Decoder(_FloorTrajectoryNoGC)
        modes = ("name", "name-args", "observation")
        cfgs = {m: maxrepeat.MaxRepeatConfig(3, max_cycle_period=10, match=m) for m in modes}

        def on_path(path: str, fn: Callable[[], Any]) -> Callable[[], Any]:
            def run() -> Any:
                was = accel.use_native(path == "native")
                try:
                    return fn()
                finally:
                    accel.use_native(was)
            return run

        def grade_bytes(mode: str) -> Callable[[], Any]:
            def fn() -> Any:
                return [maxrepeat.grade(t, cfgs[mode])
                        for t in read_bytes_as_trajectories(data, "large.json")]
            return fn

        def grade_file(mode: str) -> Callable[[], Any]:
            def fn() -> Any:
                return [maxrepeat.grade(t, cfgs[mode])
                        for t in maxrepeat.read_trajectories(paths["large"], format="vally")]
            return fn

        def json_load() -> Any:
            with open(paths["large"], "rb") as fh:
                return json.load(fh)

        if "large" in only:
            # in-process: CPU s of grading the bytes in memory against decoding them
            fns: dict[str, Callable[[], Any]] = {"floor": lambda: floor_dec.decode(data),
                                                 "floor gc=False": lambda: floor_nogc.decode(data)}
            fns.update({f"{m} {p}": on_path(p, grade_bytes(m)) for m in modes
                        for p in paths_graded})
            t = _interleaved(fns, args.repeat)
            load = _load()
            for p in paths_graded:
                for m in modes:
                    g = t[f"{m} {p}"]
                    target = 2.0 if m == "observation" else 1.5
                    rows.append((f"in-process, {p}, {m} / gc=False floor",
                                 f"{g:.2f} s / {t['floor gc=False']:.2f} s",
                                 f"{g / t['floor gc=False']:.2f}", f"<= {target}", load))
                    rows.append((f"in-process, {p}, {m} / GC'd floor",
                                 f"{g:.2f} s / {t['floor']:.2f} s", f"{g / t['floor']:.2f}",
                                 "", load))
        if "json" in only:
            fns = {"json.load": json_load}
            fns.update({f"{m} {p}": on_path(p, grade_file(m)) for m in modes
                        for p in paths_graded})
            t = _interleaved(fns, max(1, args.repeat - 1))
            load = _load()
            for p in paths_graded:
                for m in modes:
                    g = t[f"{m} {p}"]
                    rows.append((f"in-process, {p}, {m} file / json.load",
                                 f"{g:.2f} s / {t['json.load']:.2f} s",
                                 f"{g / t['json.load']:.2f}", "<= 0.35", load))
        del data
    if "process" in only:
        # whole process, CPU s (start-up, reading the file, decoding, grading, writing the
        # result) against a process that starts, reads the file and decodes it
        floor = [sys.executable, "-c", _FLOOR_SCRIPT.format(here=str(HERE))]
        large = str(paths["large"])
        # as installed for real: with bytecode caches (see start-up below)
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cmds: dict[str, tuple[list[str], dict[str, str] | None]] = {
            k: ([*floor, k, large], cached) for k in ("gc=False", "GC'd", "json.load")}
        for p in paths_graded:
            env = {**cached, "MAXREPEAT_PURE": "1" if p == "pure" else ""}
            for m in ("name", "name-args", "observation"):
                cmds[f"{m} {p}"] = ([*_maxrepeat_cmd(), "grade", large, "--max", "3",
                                     "--max-cycle-period", "10", "--match", m, "-j", "1",
                                     "-o", "jsonl", "-q"], env)
        best = {k: float("inf") for k in cmds}
        _process_cpu([*_maxrepeat_cmd(), "--version"], cached)  # writes the caches
        for _ in range(args.repeat):
            for k, (cmd, env) in cmds.items():
                best[k] = min(best[k], _process_cpu(cmd, env))
        load = _load()
        for p in paths_graded:
            for m in ("name", "name-args", "observation"):
                g = best[f"{m} {p}"]
                target = 2.0 if m == "observation" else 1.5
                rows.append((f"whole process, {p}, {m} / gc=False floor",
                             f"{g:.2f} s / {best['gc=False']:.2f} s",
                             f"{g / best['gc=False']:.2f}", f"<= {target}", load))
                gcd = best["GC'd"]
                rows.append((f"whole process, {p}, {m} / GC'd floor",
                             f"{g:.2f} s / {gcd:.2f} s", f"{g / gcd:.2f}", "", load))
                rows.append((f"whole process, {p}, {m} / json.load",
                             f"{g:.2f} s / {best['json.load']:.2f} s",
                             f"{g / best['json.load']:.2f}", "<= 0.35", load))

    mr = _maxrepeat_cmd()
    base = ["--max", "3", "--max-cycle-period", "10", "-o", "jsonl", "-q"]
    if "batch" in only:
        small = str(paths["small"])
        t1 = t2 = float("inf")
        cpu1: list[float] = []
        cpu2: list[float] = []
        for _ in range(max(1, args.repeat - 1)):
            w1, c1 = _run_cpu([*mr, "grade", small, *base, "-j", "1"])
            w2, c2 = _run_cpu([*mr, "grade", small, *base, "-j", "2"])
            if w1 < t1:
                t1, cpu1 = w1, c1
            if w2 < t2:
                t2, cpu2 = w2, c2
        rows.append(("batch of small files, -j 1 / -j 2 (speed-up)",
                     f"{t1:.2f} s / {t2:.2f} s", f"{t1 / t2:.2f}", ">= 1.7", _load()))
        if cpu1 and cpu2:
            # What two idle cores would give: the -j 1 work over the busiest -j 2 process.
            rows.append(("  same, CPU s: -j 1 / busiest -j 2 process",
                         f"{sum(cpu1):.2f} / {cpu2[0]:.2f} (all: "
                         + " ".join(f"{c:.2f}" for c in cpu2 if c >= 0.01) + ")",
                         f"{sum(cpu1) / cpu2[0]:.2f}", "(load-independent)", _load()))
    if "memory" in only:
        for jobs in ("1", "2"):
            own, tree = _peak_rss([*mr, "grade", str(paths["jsonl"]), *base, "-j", jobs])
            shown = f"{own:.0f} MB main" + (f", {tree:.0f} MB with workers" if tree else "")
            rows.append((f"peak memory, 1 GB-scale JSONL, -j {jobs}", shown,
                         f"{max(own, tree):.0f} MB", "< 200 MB", _load()))
    if "startup" in only:
        # The command of issue 17 (item 5), as a user types it; its output (the console
        # report, the default off a terminal too since issue 29) goes nowhere. CPU time
        # (user + system of the child) is shown beside wall time:
        # other sessions' load stretches wall time more than CPU time.
        tiny = [*mr, "grade", str(paths["tiny"]), "--max", "3"]
        bare = [sys.executable, "-c", "pass"]
        # As installed for real: with bytecode caches. Sandboxes that set
        # PYTHONDONTWRITEBYTECODE make every start recompile the package from source.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(tiny, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        a, b = [], []
        for _ in range(21):
            a.append(_run_wall_cpu(tiny, env))
            b.append(_run_wall_cpu(bare, env))
        for i, what in ((0, "wall"), (1, "CPU")):
            ta, tb = statistics.median(x[i] for x in a), statistics.median(x[i] for x in b)
            rows.append((f"start-up ({what}), grade tiny.json --max 3 / python -c pass",
                         f"{ta * 1000:.1f} ms / {tb * 1000:.1f} ms", f"{ta / tb:.2f}", "<= 6",
                         _load()))

    load = os.getloadavg()
    print(f"\nload average during the run (1, 5, 15 min): {load[0]:.2f}, {load[1]:.2f}, "
          f"{load[2]:.2f} on {os.cpu_count()} cores")
    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"\n{'measure':<{width}}  {'times':<26} {'ratio':>8}  {'target':<10} load (1 min)")
    for name, times, ratio, target, load_now in rows:
        print(f"{name:<{width}}  {times:<26} {ratio:>8}  {target:<10} {load_now}")


if __name__ == "__main__":
    main()
