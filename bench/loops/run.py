"""The loop benchmark: ``python bench/loops/run.py`` (``--turns N`` for the cost figure).

For each grader setting below (the seed's exact modes and the near-duplicate options) it
grades every labelled run and prints:

- per run: the labelled loops found (recall), the detected runs that are labelled loops
  (precision), and the same by steps (per step span);
- totals over the volatile-loop set, the other loops, and the false-positive rate on the
  legitimate set (a legitimate span counts as a false positive when a detected run above
  ``max`` overlaps it);
- cost: grading bench/run.py's large benchmark trajectory (``--turns`` turns of it) with
  each setting, divided by exact grading in the same match mode, measured in this run
  (``--rounds`` interleaved rounds: each round times every setting once; medians).
  ``--cost-only`` skips the labelled runs.

Labelled runs: ``labels.json`` (real runs of ../shared/corpus, referenced by path; when
the corpus is absent this says so in one line and goes on; agent logs recorded by
``record.py`` with the real agent CLIs, in ``recorded/``; format samples of tests/fixtures)
and ``cases.py`` (constructed runs). Spans labelled "stuck" (failing attempts that each
differ) count in neither figure. Detection: ``max: 2, max_cycle_period: 2`` for every
setting. False positives are given per legitimate span, over the real ones (corpus and
recorded) and over all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT / "src"), str(HERE)]

import cases  # noqa: E402

import maxrepeat  # noqa: E402
from maxrepeat import MaxRepeatConfig, grade  # noqa: E402

CORPUS = Path(os.environ.get("MAXREPEAT_SHARED", ROOT.parent / "shared")) / "corpus"
BASE: dict[str, Any] = {"max": 2, "max_cycle_period": 2}
NAME_ARGS_VOLATILE: dict[str, Any] = {"match": "name-args", "normalize": ["volatile"],
                                      "ignore_arguments": ["description", "summary"]}
#: the recommended settings (README, docs/near-duplicates.md): the same action AND the
#: same answer, volatile text normalized in both
RECOMMENDED_ARGS: dict[str, Any] = {**NAME_ARGS_VOLATILE, "with_observation": True}
SETTINGS: dict[str, dict[str, Any]] = {
    "exact observation": {},
    "exact name-args": {"match": "name-args"},
    "exact name": {"match": "name"},
    "observation + normalize volatile": {"normalize": ["volatile"]},
    "observation + volatile + similarity 0.9": {"normalize": ["volatile"], "similarity": 0.9},
    "observation + volatile + numbers": {"normalize": ["volatile", "numbers"]},
    "name-args + ignore description/summary": {"match": "name-args",
                                               "ignore_arguments": ["description", "summary"]},
    "name-args + volatile + ignore description/summary": NAME_ARGS_VOLATILE,
    "name-args + volatile + ignore + similarity 0.9": {**NAME_ARGS_VOLATILE, "similarity": 0.9},
    "name-args + volatile + ignore description/summary/thought": {
        **NAME_ARGS_VOLATILE, "ignore_arguments": ["description", "summary", "thought"]},
    "name-args + ignore + with_observation (no normalize)": {
        "match": "name-args", "ignore_arguments": ["description", "summary"],
        "with_observation": True},
    "name-args + volatile + ignore + with_observation": RECOMMENDED_ARGS,
    "name-args + volatile + ignore + with_observation + similarity 0.9": {
        **RECOMMENDED_ARGS, "similarity": 0.9},
    "name-args + volatile + ignore .../thought + with_observation": {
        **RECOMMENDED_ARGS, "ignore_arguments": ["description", "summary", "thought"]},
}

Loop = tuple[int, int, int, str, bool]  # start, end, period, reason, volatile
Legit = tuple[int, int, str]
Stuck = tuple[int, int]
Labelled = tuple[str, Any, list[Loop], list[Legit], list[Stuck]]


def _entry(name: str, traj: Any, entry: dict[str, Any]) -> Labelled:
    loops = [(x["start"], x["end"], x["period"], x["reason"], x["volatile"])
             for x in entry["loops"]]
    legit = [(x["start"], x["end"], x["reason"]) for x in entry["legit"]]
    stuck = [(x["start"], x["end"]) for x in entry.get("stuck", [])]
    return (name, traj, loops, legit, stuck)


def _one(path: Path, run: str | None) -> Any:
    trajs = list(maxrepeat.read_trajectories(path))
    if run is not None:
        trajs = [t for t in trajs if t.id == run]
    assert len(trajs) == 1, path
    return trajs[0]


def labelled() -> list[Labelled]:
    """(name, trajectory, loops, legit) for every labelled run available; names start
    with corpus:, recorded:, fixture: or constructed:."""
    out: list[Labelled] = []
    spec = json.loads((HERE / "labels.json").read_text(encoding="utf-8"))
    if not CORPUS.is_dir():
        print(f"corpus absent ({CORPUS}): the {len(spec['runs'])} labelled corpus runs are skipped")
    else:
        for entry in spec["runs"]:
            out.append(_entry(f"corpus:{entry['path']}", _one(CORPUS / entry["path"], entry["run"]),
                              entry))
    for entry in spec.get("fixtures", []):
        kind = "recorded" if entry["path"].startswith("bench/loops/recorded/") else "fixture"
        out.append(_entry(f"{kind}:{entry['path']}", _one(ROOT / entry["path"], entry["run"]),
                          entry))
    for name, events, loops_c, legit_c in cases.volatile_loops():
        out.append((f"constructed:{name}", {"events": events},
                    [(a, b, p, r, True) for a, b, p, r in loops_c], list(legit_c), []))
    for name, events, _, legit_c in cases.legitimate():
        out.append((f"constructed:{name}", {"events": events}, [], list(legit_c), []))
    return out


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


REAL = ("corpus:", "recorded:")


def evaluate(setting: dict[str, Any], runs: list[Labelled], verbose: bool,
             base: dict[str, Any] = BASE) -> dict[str, Any]:
    """Totals of one setting over the labelled runs (see the module docstring); ``base``
    the detection the setting's own keys replace."""
    cfg = MaxRepeatConfig.from_mapping({**base, **setting})
    tot: dict[str, Any] = dict.fromkeys(
        ("det", "det_ok", "loops", "found", "vol", "vol_found", "rec_vol", "rec_vol_found",
         "legit", "legit_fp", "real_legit", "real_fp", "st_det", "st_lab", "st_hit"), 0)
    tot["flagged"] = []
    for name, traj, loops, legit, stuck in runs:
        res = grade(traj, cfg)
        assert res.status == "ok", (name, res.evidence)
        det = [(r.start_step, r.end_step) for r in res.metadata.runs]
        # a detection inside a "stuck" span (and no loop) counts neither way
        det = [d for d in det if any(_overlap(d, (a, b)) for a, b, *_ in loops)
               or not any(_overlap(d, x) for x in stuck)]
        found = [any(_overlap((a, b), d) for d in det) for a, b, *_ in loops]
        det_ok = sum(any(_overlap(d, (a, b)) for a, b, *_ in loops) for d in det)
        fps = [any(_overlap((a, b), d) for d in det) for a, b, _ in legit]
        det_steps = {s for a, b in det for s in range(a, b + 1)}
        lab_steps = {s for a, b, *_ in loops for s in range(a, b + 1)}
        real = name.startswith(REAL)
        tot["det"] += len(det)
        tot["det_ok"] += det_ok
        tot["loops"] += len(loops)
        tot["found"] += sum(found)
        tot["vol"] += sum(1 for x in loops if x[4])
        tot["vol_found"] += sum(f for f, x in zip(found, loops, strict=True) if x[4])
        if name.startswith("recorded:"):
            tot["rec_vol"] += sum(1 for x in loops if x[4])
            tot["rec_vol_found"] += sum(f for f, x in zip(found, loops, strict=True) if x[4])
        tot["legit"] += len(legit)
        tot["legit_fp"] += sum(fps)
        if real:
            tot["real_legit"] += len(legit)
            tot["real_fp"] += sum(fps)
        tot["flagged"] += [f"{name} {a}-{b}: {why}"
                           for (a, b, why), f in zip(legit, fps, strict=True) if f]
        tot["st_det"] += len(det_steps)
        tot["st_lab"] += len(lab_steps)
        tot["st_hit"] += len(det_steps & lab_steps)
        if verbose:
            p = f"{det_ok}/{len(det)}" if det else "-"
            r = f"{sum(found)}/{len(loops)}" if loops else "-"
            sp = f"{len(det_steps & lab_steps)}/{len(det_steps)}" if det_steps else "-"
            sr = f"{len(det_steps & lab_steps)}/{len(lab_steps)}" if lab_steps else "-"
            fp = f"{sum(fps)}/{len(legit)}" if legit else "-"
            print(f"  {name[:68]:68} P {p:5} R {r:5} steps P {sp:7} R {sr:7} legit FP {fp}")
    if verbose:
        for line in tot["flagged"]:
            print(f"    flags legitimate {line}")
    return tot


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}% ({a}/{b})" if b else "n/a"


def cost(turns: int, rounds: int = 7, stamped: bool = False) -> dict[str, tuple[float, float]]:
    """CPU seconds per setting on the large benchmark trajectory (``turns`` turns):
    ``grade()`` of the trajectory already read, and reading plus grading from the file's
    bytes in memory (as bench/run.py times the large trajectory); the median of
    ``rounds`` interleaved rounds (each times every setting once, so a change of the
    machine's load falls on all settings alike). ``stamped``: every result starts with a
    clock time (volatile text in every output, rewritten by the normalizers: the worst
    case of the check that lets clean text through)."""
    import importlib.util
    import statistics

    from maxrepeat.readers import Source, read_source

    # bench/run.py makes the large benchmark trajectory; its generator, at ``turns`` turns.
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    bench_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_run)
    text = bench_run._trajectory_text("large", turns, 1).encode()
    if stamped:
        text = text.replace(b'"result":"collected', b'"result":"at 2026-12-01T05:01:00Z collected')

    def read() -> Any:
        [traj] = list(read_source(Source.from_bytes(text, "large.json"), "vally"))
        return traj

    traj = read()
    cfgs = {label: MaxRepeatConfig.from_mapping({**BASE, "max_cycle_period": 10, **setting})
            for label, setting in SETTINGS.items()}
    times: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in cfgs}
    for _ in range(rounds):
        for label, cfg in cfgs.items():
            # CPU time, not wall: other processes share the machine's cores
            t0 = time.process_time()
            grade(traj, cfg)
            times[label][0].append(time.process_time() - t0)
            t0 = time.process_time()
            grade(read(), cfg)
            times[label][1].append(time.process_time() - t0)
    return {label: (statistics.median(a), statistics.median(b))
            for label, (a, b) in times.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000,
                        help="turns of the large benchmark trajectory for the cost figure "
                             "(0: skip)")
    parser.add_argument("-v", "--verbose", action="store_true", help="per-run figures")
    parser.add_argument("--stamped", action="store_true",
                        help="cost on the trajectory whose every result holds a timestamp")
    parser.add_argument("--rounds", type=int, default=7,
                        help="interleaved rounds of the cost figure (medians)")
    parser.add_argument("--cost-only", action="store_true", help="skip the labelled runs")
    args = parser.parse_args(argv)
    if args.cost_only:
        _print_cost(args)
        return
    runs = labelled()
    print(f"{len(runs)} labelled runs; detection with max 2, max_cycle_period 2")
    rows = []
    for label, setting in SETTINGS.items():
        if args.verbose:
            print(label)
        t = evaluate(setting, runs, args.verbose)
        rows.append((label, t))
    print(f"\n{'setting':66} {'run P':>6} {'run R':>6} {'step P':>6} {'step R':>6} "
          f"{'vol R':>6} {'rec vol R':>9} {'legit FP real':>14} {'legit FP all':>13}")
    for label, t in rows:
        print(f"{label:66} {_ratio(t['det_ok'], t['det']):>6} {_ratio(t['found'], t['loops']):>6} "
              f"{_ratio(t['st_hit'], t['st_det']):>6} {_ratio(t['st_hit'], t['st_lab']):>6} "
              f"{_ratio(t['vol_found'], t['vol']):>6} "
              f"{_ratio(t['rec_vol_found'], t['rec_vol']):>9} "
              f"{_pct(t['real_fp'], t['real_legit']):>14} {_pct(t['legit_fp'], t['legit']):>13}")
    first = rows[0][1]
    print(f"({first['loops']} labelled loops, {first['vol']} with volatile parts of which "
          f"{first['rec_vol']} recorded with real agents; {first['real_legit']} real legitimate "
          f"spans, {first['legit']} in all)")
    _print_defaults(runs)
    if args.turns:
        _print_cost(args)


#: the agents whose logs record.py made (bench/loops/recorded/AGENT--SCENARIO.jsonl)
AGENTS = ("claude-code", "codex", "gemini-cli", "copilot-cli")


def _print_defaults(runs: list[Labelled]) -> None:
    """The settings a user gets without choosing, as written (their own max and cycle
    period, not the detection above): the live preset ``hook install`` writes, and the
    seed's defaults with the ``--max 3`` the guards' pages showed before it. Over every
    labelled run, then over each agent's recorded logs."""
    from maxrepeat.core.presets import PRESETS

    defaults = {"live preset (hook install, no flags)": dict(PRESETS["live"]),
                "seed defaults, --max 3 (observation, no cycles)": {"max": 3}}
    groups: list[tuple[str, list[Labelled]]] = [("all labelled runs", runs)]
    groups += [(f"{agent} recorded", [r for r in runs if r[0].startswith(
        f"recorded:bench/loops/recorded/{agent}--")]) for agent in AGENTS]
    print("\ndefaults as written (own max and cycle period): loops found | legitimate "
          "spans flagged, real | all")
    for label, setting in defaults.items():
        print(f"  {label}: {json.dumps(setting)}")
        for group, subset in groups:
            t = evaluate(setting, subset, False, base={})
            print(f"    {group:28} loops {t['found']:>2}/{t['loops']:<2} | legit FP "
                  f"{_pct(t['real_fp'], t['real_legit'])} | {_pct(t['legit_fp'], t['legit'])}")


def _print_cost(args: argparse.Namespace) -> None:
    if args.turns:
        load = os.getloadavg()[0]
        secs = cost(args.turns, rounds=args.rounds, stamped=args.stamped)
        load_after = os.getloadavg()[0]
        from maxrepeat.core import accel

        stamped = ", every result timestamped" if args.stamped else ""
        print(f"\ncost on the large benchmark trajectory ({args.turns} turns{stamped}, period 10, "
              f"load {load:.1f} -> {load_after:.1f}), CPU seconds (median of {args.rounds} "
              f"interleaved rounds) and ratio to exact grading in the "
              f"same match mode: grade() of the read trajectory | read + grade from bytes; "
              f"grading by the {accel.description()} (MAXREPEAT_PURE=1: pure Python; "
              f"near-duplicate settings with replace or similarity always run in Python)")
        for label, (s, w) in secs.items():
            base = "exact name-args" if "name-args" in label else (
                "exact name" if label == "exact name" else "exact observation")
            print(f"  {label:66} {s:7.3f} s  x{s / secs[base][0]:.2f}  | "
                  f"{w:7.3f} s  x{w / secs[base][1]:.2f}")


if __name__ == "__main__":
    main()
