"""Soak run: grade many small trajectories through the real CLI and watch its memory.

The grader streams (one JSONL record read, graded and written at a time), so its resident
memory must stay flat however long the batch is. This script writes N small trajectories
to one JSONL file in a temporary directory, runs ``maxrepeat grade FILE --max 2 -o jsonl``
as a subprocess, counts the result lines it writes and samples the child's resident set
size (RSS, summed over the process and its workers) as it goes. It prints the figures and exits 1
when memory grew by more than ``--tolerance-mb``: the peak of any later tenth of the run above
the peak of its second
tenth (the first holds start-up).

    python bench/soak.py                     # 1,000,000 trajectories (about 3 minutes)
    python bench/soak.py --count 20000       # a quick look
    python bench/soak.py -- -j 2             # extra arguments go to `maxrepeat grade`

Half the trajectories loop (3 identical steps, max 2), so both verdicts are exercised.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _write_corpus(path: Path, count: int) -> None:
    """N one-line trajectories: 3 turns of one bash call each; odd ones repeat."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(count):
            events: list[dict[str, object]] = []
            for k in range(3):
                cid = f"c{k}"
                events += [
                    {"type": "turn_start", "data": {}},
                    {"type": "tool_call",
                     "data": {"toolName": "bash", "toolCallId": cid,
                              "arguments": {"command": "ls"}}},
                    {"type": "tool_result",
                     "data": {"toolCallId": cid, "result": "ok" if i % 2 else f"out {k}"}},
                    {"type": "turn_end", "data": {}},
                ]
            fh.write(json.dumps({"id": f"soak-{i}", "events": events}, separators=(",", ":")))
            fh.write("\n")


def _rss_kb(pid: int) -> int | None:
    """The resident set size of a live process, from /proc (Linux)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def _tree_rss_kb(pid: int) -> int | None:
    """RSS of a process and all its descendants (the -j workers and their forkserver)."""
    total = _rss_kb(pid)
    if total is None:
        return None
    stack = _children(pid)
    while stack:
        child = stack.pop()
        total += _rss_kb(child) or 0
        stack += _children(child)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--tolerance-mb", type=float, default=16.0,
                        help="allowed RSS growth after the second tenth of the run")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("grade_args", nargs="*", help="extra arguments for `maxrepeat grade`")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="maxrepeat-soak-") as tmp:
        corpus = Path(tmp) / "soak.jsonl"
        t0 = time.perf_counter()
        _write_corpus(corpus, args.count)
        written = time.perf_counter() - t0
        size_mb = corpus.stat().st_size / 1e6

        cmd = [sys.executable, "-c", "from maxrepeat.cli import main; main()",
               "grade", str(corpus), "--max", "2", "--output", "jsonl", "--quiet",
               *args.grade_args]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONHASHSEED": "0"})
        lines = 0
        samples: list[tuple[int, int]] = []  # (results so far, RSS kB)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                rss = _tree_rss_kb(proc.pid)
                if rss is not None:
                    samples.append((lines, rss))
                done.wait(args.interval)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        assert proc.stdout is not None
        failed = 0
        for line in proc.stdout:
            lines += 1
            if b'"passed":false' in line:
                failed += 1
        code = proc.wait()
        done.set()
        sampler.join()
        elapsed = time.perf_counter() - start
        stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""

    if lines != args.count:
        print(f"expected {args.count} results, got {lines} (exit {code})\n{stderr}",
              file=sys.stderr)
        return 1
    # Peak RSS per tenth of the results written: flat means the later tenths peak no
    # higher than the second one (the first holds start-up and the pool filling up).
    deciles = [max((rss for n, rss in samples if k * args.count // 10 <= n
                    < (k + 1) * args.count // 10), default=0) for k in range(10)]
    # Results arrive in bursts (one unit of work at a time): a tenth may have no sample.
    later = [d for d in deciles[1:] if d]
    if len(later) < 3:
        print("too few memory samples: raise --count or lower --interval", file=sys.stderr)
        return 1
    growth_mb = (max(later[1:]) - later[0]) / 1024
    print(f"trajectories:        {args.count:,} ({size_mb:.0f} MB of JSONL, written in "
          f"{written:.1f} s)")
    print(f"command:             maxrepeat grade FILE --max 2 --output jsonl --quiet "
          f"{' '.join(args.grade_args)}".rstrip())
    print(f"results:             {lines:,} ({failed:,} failed), exit code {code}")
    print(f"wall time:           {elapsed:.1f} s ({lines / elapsed:,.0f} trajectories/s)")
    print("peak RSS per tenth:  " + " ".join(f"{d / 1024:.0f}" if d else "-" for d in deciles)
          + f" MB (process + workers, {len(samples)} samples)")
    print(f"growth after 20%:    {growth_mb:+.1f} MB (tolerance {args.tolerance_mb} MB)")
    return 0 if growth_mb <= args.tolerance_mb else 1


if __name__ == "__main__":
    sys.exit(main())
