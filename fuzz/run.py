"""A long, coverage-guided fuzzing campaign over every reader, detection and grading.

CI runs the hypothesis fuzz tests (tests/readers/test_fuzz_readers.py, a few seconds); this runs
for as long as you like with atheris (libFuzzer for Python), outside CI:

    pip install 'maxrepeat[fuzz]'                 # atheris
    python fuzz/run.py -max_total_time=3600       # an hour; libFuzzer flags pass through
    python fuzz/run.py -runs=200000 -jobs=2       # a fixed number of inputs, two processes
    python fuzz/run.py crash-<sha1>               # replay one crashing input
    python fuzz/run.py --keep-going -max_total_time=3600   # record every crash, go on

(libFuzzer's ``-fork`` mode does not work under atheris; use ``--keep-going``, which
saves each failing input as ``failure-<sha1>`` with its traceback in ``.txt`` beside it.)

Each input's first byte picks the file ending and the reader (auto-detection or one forced
format, from the registry at start-up); the rest is the file's content. The invariant is
the issue's: only `Trajectory` values or `TrajectoryFormatError` items naming the file,
every trajectory grades to status ok or error, every result writes as UTF-8 JSON. Any
other exception is a crash, saved by libFuzzer as ``crash-<sha1>`` in the current
directory. Working files live in ``./.maxrepeat-fuzz/``: the corpus there is seeded on the
first run from ``examples/`` and, when present, ``../shared/corpus``, and keeps growing
run after run (delete the directory to start over).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

try:
    import atheris  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - a hint, not a feature
    sys.exit("fuzz/run.py needs atheris: pip install 'maxrepeat[fuzz]' (or pip install atheris)")

with atheris.instrument_imports():
    from maxrepeat import MaxRepeatConfig, grade
    from maxrepeat.core.errors import TrajectoryFormatError
    from maxrepeat.core.events import Trajectory
    from maxrepeat.readers import INTERNAL_ERROR, Source, all_readers, read_source, reader_names
    from maxrepeat.reporters import get_reporter

    all_readers()  # readers are imported lazily: load them here so they are instrumented

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".json", ".jsonl", ".traj", ".ndjson", ".eval", "")
FORMATS = ["auto", *reader_names()]
CONFIGS = (MaxRepeatConfig(1), MaxRepeatConfig(2, max_cycle_period=3, match="name-args"),
           MaxRepeatConfig(1, match="name", tools=["^b", "a$"]))
LINE = get_reporter("jsonl").line
WORK = Path.cwd() / ".maxrepeat-fuzz"


def one_input(data: bytes) -> None:
    """Read, detect and grade one input; raise on anything the contract does not allow."""
    if not data:
        return
    selector, body = data[0], data[1:]
    suffix = SUFFIXES[selector % len(SUFFIXES)]
    fmt = FORMATS[(selector // len(SUFFIXES)) % len(FORMATS)]
    path = WORK / f"input{suffix}"
    path.write_bytes(body)
    for item in read_source(Source.from_path(str(path)), fmt):
        if isinstance(item, TrajectoryFormatError):
            if not (item.source or "").startswith(str(path)):
                raise AssertionError(f"{fmt}: error without the file name: {item!r}")
            if INTERNAL_ERROR in item.reason:  # a reader crash, caught by read_source
                raise AssertionError(f"{fmt}: {item}")
            continue
        if not isinstance(item, Trajectory):
            raise AssertionError(f"{fmt} yielded {type(item).__name__}")
        for cfg in CONFIGS:
            result = grade(item, cfg)
            if result.status not in ("ok", "error"):
                raise AssertionError(f"status {result.status!r}")
            LINE(result).encode("utf-8")


def _keep_going(data: bytes) -> None:
    """`one_input`, recording a failure instead of stopping the campaign."""
    try:
        one_input(data)
    except Exception:
        import hashlib
        import traceback

        name = f"failure-{hashlib.sha1(data).hexdigest()}"
        if not os.path.exists(name):
            Path(name).write_bytes(data)
            Path(name + ".txt").write_text(traceback.format_exc(), encoding="utf-8")
            print(f"\nrecorded {name}", file=sys.stderr)


def _seed_corpus() -> Path:
    """A working corpus: every seed file once, behind a selector byte for auto-detection
    with its own file ending."""
    seeds = WORK / "corpus"
    if seeds.is_dir() and any(seeds.iterdir()):
        return seeds  # the corpus of earlier runs
    seeds.mkdir(parents=True, exist_ok=True)
    sources = sorted((ROOT / "examples").glob("*.json"))
    shared = ROOT.parent / "shared" / "corpus"
    if shared.is_dir():
        sources += sorted(p for p in shared.rglob("*") if p.is_file()
                          and p.suffix in SUFFIXES and p.stat().st_size < 512 * 1024)
    for i, path in enumerate(sources):
        selector = SUFFIXES.index(path.suffix)  # format index 0: auto
        (seeds / f"seed-{i:04d}").write_bytes(bytes([selector]) + path.read_bytes())
    return seeds


def main() -> None:
    args = [a for a in sys.argv if a != "--keep-going"]
    target = _keep_going if "--keep-going" in sys.argv else one_input
    replay = [a for a in args[1:] if not a.startswith("-") and os.path.isfile(a)]
    if not replay:
        args.append(str(_seed_corpus()))
    WORK.mkdir(exist_ok=True)
    atheris.Setup(args, target)
    atheris.Fuzz()  # never returns: libFuzzer exits the process


if __name__ == "__main__":
    main()
