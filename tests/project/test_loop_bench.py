"""The loop benchmark (bench/loops/run.py) runs on its labelled set, with or without the
corpus beside the repository; its recorded agent logs (bench/loops/recorded/, made by
bench/loops/record.py with the real agent CLIs) are scored in both cases; and the
recording script regenerates such a log with a real agent. Figures are printed, in CI
too; what is asserted is what the labels say, not timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import maxrepeat
from maxrepeat import MaxRepeatConfig, grade
from tests.agent_harness import binary

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "loops" / "run.py"
RECOMMENDED = "name-args + volatile + ignore + with_observation"
NAME_ARGS_VOLATILE = "name-args + volatile + ignore description/summary"


def _run(env_shared: str | None) -> dict[str, list[str]]:
    env = dict(os.environ)
    if env_shared is not None:
        env["MAXREPEAT_SHARED"] = env_shared
    out = subprocess.run([sys.executable, str(SCRIPT), "--turns", "200"], env=env,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    print(out)  # the figures, in the test log
    assert "cost on the large benchmark trajectory" in out
    rows = {line[:66].strip(): line[66:].split() for line in out.splitlines()
            if line.startswith(("exact", "observation", "name-args"))}
    rows["_text"] = [out]
    return rows


def test_benchmark_runs_without_the_corpus(tmp_path: Path) -> None:
    """Without ../shared/corpus: one line says so; the recorded and constructed runs are
    scored. Columns: run P, run R, step P, step R, vol R, rec vol R, FP real, FP all."""
    rows = _run(str(tmp_path / "nowhere"))
    assert sum("corpus absent" in line for line in rows["_text"][0].splitlines()) == 1
    # exact observation matching misses the loops with volatile parts (recorded ones too)
    assert float(rows["exact observation"][4]) < 0.5
    assert float(rows["exact observation"][5]) < 0.5
    # normalize: [volatile] finds every one of them, in both modes and with_observation
    for label in ("observation + normalize volatile", NAME_ARGS_VOLATILE, RECOMMENDED):
        assert rows[label][4] == "1.00", label
        assert rows[label][5] == "1.00", label
    # observation mode flags none of these legitimate runs; name-args flags the polls of
    # one command (as exact name-args does): the option adds nothing to either;
    # with_observation flags none (a poll's answer advances)
    assert rows["observation + normalize volatile"][8] == "0.0%"
    assert rows[NAME_ARGS_VOLATILE][6:] == rows["exact name-args"][6:]
    assert rows[RECOMMENDED][6] == rows[RECOMMENDED][8] == "0.0%"


def _defaults(out: str) -> dict[tuple[str, str], tuple[str, str]]:
    """The "defaults as written" section: (setting, group) -> (loops found, real FP)."""
    section = out.split("defaults as written", 1)[1].split("\ncost on", 1)[0]
    figures: dict[tuple[str, str], tuple[str, str]] = {}
    setting = ""
    for line in section.splitlines()[1:]:
        if line.startswith("  ") and not line.startswith("    "):
            setting = line.strip().split(":", 1)[0]
        elif line.startswith("    "):
            group, rest = line[4:32].strip(), line[32:]
            loops = rest.split("|")[0].split()[1]
            figures[(setting, group)] = (loops, rest.split("|")[1].split()[-1])
    return figures


def test_the_live_preset_catches_every_recorded_loop_of_every_agent(tmp_path: Path) -> None:
    """What ``hook install`` writes without flags finds every loop recorded with each
    real agent, where the seed's defaults (the guards' default before it) found almost
    none; it flags one recorded legitimate span per agent (the poll of one command until
    a job succeeds: the same action, warned at its fourth copy)."""
    out = _run(str(tmp_path / "nowhere"))["_text"][0]
    figures = _defaults(out)
    live = "live preset (hook install, no flags)"
    seed = "seed defaults, --max 3 (observation, no cycles)"
    for agent in ("claude-code", "codex", "gemini-cli", "copilot-cli"):
        found, total = figures[(live, f"{agent} recorded")][0].split("/")
        assert found == total and int(total) >= 4, (agent, figures)
        assert figures[(live, f"{agent} recorded")][1] == "(1/4)", (agent, figures)
        seed_found = int(figures[(seed, f"{agent} recorded")][0].split("/")[0])
        assert seed_found < int(total), (agent, figures)


@pytest.mark.corpus
def test_benchmark_on_the_corpus_labels() -> None:
    """With the corpus: the real legitimate spans are all there, and the recommended
    options flag no legitimate span that exact matching in the same mode does not."""
    rows = _run(None)
    assert "corpus absent" not in rows["_text"][0]
    real = int(rows["exact observation"][7].strip("()").split("/")[1])
    assert real >= 75
    assert rows[NAME_ARGS_VOLATILE][6:] == rows["exact name-args"][6:]
    assert rows["observation + normalize volatile"][6:] == rows["exact observation"][6:]
    assert rows[NAME_ARGS_VOLATILE][5] == rows[RECOMMENDED][5] == "1.00"
    # the same action and the same answer: no real legitimate span is flagged, and the
    # loops with volatile parts are still found (issue 14's targets: <= 2%, >= 0.9)
    assert rows[RECOMMENDED][6] == "0.0%"
    assert float(rows[RECOMMENDED][4]) >= 0.9


def test_record_script_regenerates_a_volatile_loop_with_a_real_agent(tmp_path: Path) -> None:
    """bench/loops/record.py drives the real Codex CLI against the scripted model: the
    log it writes holds `date +%s%N; false` five times, which exact observation matching
    cannot tell are the same and `normalize: [volatile]` can."""
    if not binary("codex").exists():
        if os.environ.get("CI"):
            pytest.fail(f"{binary('codex')} is missing: scripts/test.sh installs it")
        pytest.skip("Codex CLI not installed (run scripts/test.sh)")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "loops" / "record.py"),
                           "--agent", "codex", "--scenario", "date-false",
                           "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"recorded": 1}
    [traj] = maxrepeat.read_trajectories(tmp_path / "codex--date-false.jsonl")
    assert len(maxrepeat.steps(traj, MaxRepeatConfig(2))) == 5
    exact = grade(traj, MaxRepeatConfig(2))
    near = grade(traj, MaxRepeatConfig(2, normalize=["volatile"]))
    assert exact.passed and not near.passed


def test_monitor_equals_grade_on_the_recorded_logs() -> None:
    """On every recorded agent log, with both recommended settings, the live Monitor gives
    grade() of the prefix after every event (live == post-hoc on real logs)."""
    from maxrepeat import Monitor
    from maxrepeat.core.events import Trajectory

    configs = [MaxRepeatConfig.from_mapping(
        {"max": 2, "max_cycle_period": 2, "match": "name-args", "normalize": ["volatile"],
         "ignore_arguments": ["description", "summary"]}),
        MaxRepeatConfig.from_mapping({"max": 2, "max_cycle_period": 2,
                                      "normalize": ["volatile"]})]
    logs = sorted((ROOT / "bench" / "loops" / "recorded").iterdir())
    assert len(logs) == 33
    for log in logs:
        [traj] = maxrepeat.read_trajectories(log)
        events = list(traj.events)
        for config in configs:
            monitor = Monitor(config)
            for k, event in enumerate(events, 1):
                live = monitor.feed(event).to_dict()
                post = grade(Trajectory(events[:k]), config).to_dict()
                live.pop("trajectory")
                post.pop("trajectory")
                assert live == post, (log.name, k)
