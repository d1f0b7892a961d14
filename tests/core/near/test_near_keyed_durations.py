"""Durations in Codex CLI <= 0.4x outputs (issue 14, a held-out gap): each tool output is
a JSON string, ``{"output": ..., "metadata": {"exit_code": ..., "duration_seconds":
...}}``, so a loop of the same failing command differs only in that number and in the
times inside the output, which follow escapes written out (``\\t0.205s``). The
recommended near-duplicate setting finds it through ``durations``; without ``durations``
it is missed; the `Monitor` agrees with `grade()` at every prefix, on the pure and the
native path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, Monitor, Trajectory, grade
from maxrepeat.core import accel
from maxrepeat.core.near.normalizers import VOLATILE
from maxrepeat.readers import Source, detect, read_trajectories

#: docs/near-duplicates.md's recommended setting (bench/loops/run.py, RECOMMENDED_ARGS)
RECOMMENDED: dict[str, Any] = {"max": 3, "match": "name-args", "normalize": ["volatile"],
                               "ignore_arguments": ["description", "summary"],
                               "with_observation": True}


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2025-09-20T10:00:00.000Z", "type": kind,
                       "payload": payload}, separators=(",", ":"))


def _rollout(durations: list[float], exit_code: int = 1) -> bytes:
    """A Codex 0.39-shaped rollout (session_meta, then each ``shell`` call written with
    its output): the same ``go test`` failing the same way, its durations varying."""
    lines = [_line("session_meta", {"id": "0199-test", "cwd": "/w", "originator": "codex_cli_rs",
                                    "cli_version": "0.39.0"}),
             _line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "fix it"}]})]
    for n, seconds in enumerate(durations):
        # go test's package time varies too; in the JSON string it follows an escaped tab
        out = {"output": "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 4, want 3\n"
                         f"FAIL\nFAIL\texample.com/p\t{seconds / 100:.3f}s\nFAIL\n",
               "metadata": {"exit_code": exit_code, "duration_seconds": seconds}}
        arguments = json.dumps({"command": ["go", "test", "./..."], "timeout_ms": 120000})
        lines += [_line("response_item", {"type": "function_call", "name": "shell",
                                          "arguments": arguments,
                                          "call_id": f"call_{n}"}),
                  _line("response_item", {"type": "function_call_output", "call_id": f"call_{n}",
                                          "output": json.dumps(out, separators=(",", ":"))})]
    return ("\n".join(lines) + "\n").encode()


def _read(data: bytes, tmp_path: Path) -> Any:
    """The file read as Codex reads it (auto-detected, as `maxrepeat grade` does)."""
    path = tmp_path / "rollout-2025-09-20T10-00-00-0199.jsonl"
    path.write_bytes(data)
    with Source.from_path(str(path)) as source:
        assert detect(source).name == "codex"
    [traj] = read_trajectories(path)
    return traj


def _trajectory(durations: list[float], tmp_path: Path) -> Any:
    return _read(_rollout(durations), tmp_path)


LOOP = [0.5, 0.6, 0.4, 1.3, 0.5]


@pytest.mark.parametrize("native", [False, True])
def test_codex_04x_loop_found_with_the_recommended_setting(native: bool, tmp_path: Path) -> None:
    """Five identical failing runs whose duration_seconds differ: a loop with the
    recommended setting, on both paths."""
    if native and not accel.available():
        pytest.skip("the native extension is not built (no C compiler)")
    traj = _trajectory(LOOP, tmp_path)
    was = accel.use_native(native)
    try:
        got = grade(traj, MaxRepeatConfig.from_mapping(RECOMMENDED))
        assert not got.passed and got.metadata.occurrences == 5
        # the preview shows the call and its answer as read (truncated), not rewritten
        assert got.metadata.pattern[0].startswith(
            'shell {"command": ["go", "test", "./..."], "timeout_ms": 120000} -> "{\\"output')
        # the same in observation mode with volatile alone
        obs = grade(traj, MaxRepeatConfig.from_mapping({"max": 3, "normalize": ["volatile"]}))
        assert not obs.passed and obs.metadata.occurrences == 5
    finally:
        accel.use_native(was)


def test_codex_04x_loop_missed_without_durations(tmp_path: Path) -> None:
    """Every other built-in normalizer on: the durations keep the answers apart; the
    exact modes miss it too (name-args alone sees the same call, by definition)."""
    traj = _trajectory(LOOP, tmp_path)
    others = [n for n in VOLATILE if n != "durations"]
    assert grade(traj, MaxRepeatConfig.from_mapping({**RECOMMENDED, "normalize": others})).passed
    assert grade(traj, MaxRepeatConfig.from_mapping({"max": 3})).passed
    assert grade(traj, MaxRepeatConfig.from_mapping({"max": 3, "normalize": others})).passed


def test_codex_04x_progress_is_not_a_loop(tmp_path: Path) -> None:
    """The same command whose exit code changes (a fix made between runs) is not a
    repeat with with_observation: only the duration is made equal."""
    lines = _rollout(LOOP[:3], exit_code=1) + _rollout(LOOP[3:], exit_code=0)
    # two sessions' lines in one file: keep the first session_meta only
    text = b"\n".join(line for n, line in enumerate(lines.splitlines())
                      if n == 0 or b'"session_meta"' not in line) + b"\n"
    traj = _read(text, tmp_path)
    assert grade(traj, MaxRepeatConfig.from_mapping(RECOMMENDED)).passed


@pytest.mark.parametrize("max_", [2, 3, 4])
def test_monitor_equals_grade_at_every_prefix_of_the_codex_loop(max_: int, tmp_path: Path) -> None:
    """Fed the read events one by one, the monitor's result is grade() of the prefix."""
    traj = _trajectory(LOOP + [0.7, 0.5], tmp_path)
    config = MaxRepeatConfig.from_mapping({**RECOMMENDED, "max": max_})
    monitor = Monitor(config)
    events = list(traj.events)
    for k, event in enumerate(events, 1):
        prefix = Trajectory(events=events[:k])
        assert monitor.feed(event).to_dict() == grade(prefix, config).to_dict(), k
    assert not monitor.result().passed
