"""End to end: the real Claude Code CLI (npm @anthropic-ai/claude-code, installed into
.npm-agents/ by scripts/test.sh) with the guard installed by ``maxrepeat hook install
claude-code --project``, driven by a scripted model on 127.0.0.1.

Every assertion reads Claude Code's own session transcript (under CLAUDE_CONFIG_DIR) or
what the scripted model was sent: the guard's first message reaches the model at the very
call where ``maxrepeat grade`` of that transcript first fails, the next request carries
it, a clean session hears nothing, and the ladder goes on to refuse and stop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import maxrepeat
from maxrepeat import MaxRepeatConfig, grade
from tests.scripted_anthropic import ScriptedModel, Step, claude_folders

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = Path(os.environ.get("MAXREPEAT_CLAUDE_BIN",
                             ROOT / ".npm-agents" / "node_modules" / ".bin" / "claude"))
MAXREPEAT = [sys.executable, "-m", "maxrepeat"]
GUARD = "maxrepeat loop guard"

if not CLAUDE.exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CLAUDE} is missing: scripts/test.sh installs it with npm")
    pytest.skip("Claude Code CLI not installed (run scripts/test.sh)", allow_module_level=True)


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("Bash", {"command": command, "description": "run it"})


def _seed(flags: list[str]) -> list[str]:
    """``--preset seed`` unless the flags name a config or preset: the flags alone then
    say what the guard grades with (the live preset is tested on its own)."""
    return [] if "--config" in flags or "--preset" in flags else ["--preset", "seed"]


def _run(tmp: Path, script: list[Step], flags: list[str], pause: float = 0.0) -> dict[str, Any]:
    """Install the guard in a fresh project, run `claude -p` against the scripted model,
    and return what a test needs: the transcript records, requests, the CLI's result."""
    project, config, _, env = claude_folders(tmp, os.environ.get("PATH", "/usr/bin:/bin"))
    install = subprocess.run(
        [*MAXREPEAT, "hook", "install", "claude-code", "--project", *_seed(flags), *flags,
         "--executable", " ".join(MAXREPEAT)],
        cwd=project, env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True, text=True, timeout=60)
    assert install.returncode == 0, install.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert sorted(settings["hooks"]) == ["PostToolUse", "PostToolUseFailure", "PreToolUse"]
    with ScriptedModel(script, pause=pause, latency=0.5).serving() as model:
        run = subprocess.run(
            [str(CLAUDE), "-p", "fix the build", "--output-format", "json",
             "--allowedTools", "Bash"],
            cwd=project, env={**env, "ANTHROPIC_BASE_URL": model.url,
                              "PYTHONPATH": os.pathsep.join(sys.path)},
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    transcripts = sorted(config.glob("projects/*/*.jsonl"))
    assert len(transcripts) == 1, transcripts
    records = [json.loads(line) for line in transcripts[0].read_text().splitlines() if line]
    return {"out": out, "records": records, "transcript": transcripts[0],
            "requests": model.conversation_requests()}


def _guard_messages(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(tool_use_id, how, text) of every guard message Claude Code recorded."""
    found = []
    for r in records:
        a = r.get("attachment") if r.get("type") == "attachment" else None
        if not isinstance(a, dict):
            continue
        if a.get("type") == "hook_additional_context":
            text = "\n".join(a.get("content", []))
        elif a.get("type") == "hook_blocking_error":
            text = a.get("blockingError", {}).get("blockingError", "")
        elif a.get("type") == "hook_stopped_continuation":
            text = a.get("message", "")
        else:
            continue
        if GUARD in text:
            found.append((a.get("toolUseID"), a["type"], text))
    for r in records:  # calls refused before they ran: the refusal is their result
        content = r.get("message", {}).get("content") if r.get("type") == "user" else None
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result" and GUARD in str(
                    b.get("content")):
                found.append((b["tool_use_id"], "refused", str(b["content"])))
    return found


def _first_failing_call(transcript: Path, config: MaxRepeatConfig) -> str | None:
    """The call at which `maxrepeat grade` of the transcript's prefix first fails: the
    prefixes end after each call's result (or after the call, when it has none)."""
    traj = next(iter(maxrepeat.read_trajectories(transcript, format="claude-code")))
    events = [e.to_dict() if hasattr(e, "to_dict") else e for e in traj.to_dict()["events"]]
    answered = {e["data"].get("toolCallId") for e in events if e["type"] == "tool_result"}
    for i, e in enumerate(events):
        cid = e["data"].get("toolCallId") if e["type"] in ("tool_call", "tool_result") else None
        last = (e["type"] == "tool_result") or (e["type"] == "tool_call" and cid not in answered)
        if last and grade({"events": events[:i + 1]}, config).failed:
            return str(cid)
    return None


def _order(records: list[dict[str, Any]]) -> list[str]:
    ids = []
    for r in records:
        content = r.get("message", {}).get("content") if r.get("type") == "assistant" else None
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                ids.append(b["id"])
    return ids


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _sent_after(requests: list[dict[str, Any]], text: str, k: int | None = None) -> bool:
    """Whether a request sent to the model holds ``text``; with ``k``: first the request
    right after call k (the (k+1)-th response's), never one before it."""
    if k is None:
        return any(text in s for r in requests for s in _strings(r["messages"]))
    first = [i for i, r in enumerate(requests) if any(text in s for s in _strings(r["messages"]))]
    return bool(first) and first[0] == k + 1


@pytest.mark.parametrize("command", ["false", "echo same output"],
                         ids=["failing-command", "succeeding-command"])
def test_repeated_command_is_warned_at_the_first_failing_call_then_stopped(
        tmp_path: Path, command: str) -> None:
    """Default match (observation), max 2: the 3rd identical call is the first at which
    grade fails; the guard warns there, blocks at the 4th and stops the agent."""
    config = MaxRepeatConfig(max=2)
    got = _run(tmp_path, [[bash(command)]] * 8 + ["gave up"], ["--max", "2"])
    messages = _guard_messages(got["records"])
    first_fail = _first_failing_call(got["transcript"], config)
    assert first_fail is not None
    order = _order(got["records"])
    assert order.index(first_fail) == 2
    assert messages[0][0] == first_fail and messages[0][1] == "hook_additional_context"
    assert "(warning)" in messages[0][2] and "3 times in a row (at most 2 allowed" in \
        messages[0][2]
    # The model was sent the warning with the next request.
    assert _sent_after(got["requests"], messages[0][2].splitlines()[0], k=2)
    kinds = [m[2].split(":")[0] for m in messages]
    assert kinds[:3] == [f"{GUARD} (warning)", f"{GUARD} (blocked)", f"{GUARD} (stopped)"]
    assert got["out"]["terminal_reason"] == "hook_stopped"
    assert len(order) < 8, "the agent was not stopped"


def test_clean_session_hears_nothing(tmp_path: Path) -> None:
    script: list[Step] = [[bash(f"echo step {i}")] for i in range(6)] + ["done"]
    got = _run(tmp_path, script, ["--max", "2"])
    assert _guard_messages(got["records"]) == []
    assert not _sent_after(got["requests"], GUARD)
    assert _first_failing_call(got["transcript"], MaxRepeatConfig(max=2)) is None
    assert got["out"]["terminal_reason"] == "completed"
    assert len(_order(got["records"])) == 6


def test_cycle_of_period_two(tmp_path: Path) -> None:
    """false / ls missing / false / ...: with max 2 and period 2 the guard speaks at the
    first call at which grade fails (the end of the 3rd copy), never at a half copy."""
    config = MaxRepeatConfig(max=2, max_cycle_period=2)
    pair = [[bash("false")], [bash("ls /missing-dir")]]
    got = _run(tmp_path, pair * 5 + ["done"], ["--max", "2", "--max-cycle-period", "2"])
    messages = _guard_messages(got["records"])
    first_fail = _first_failing_call(got["transcript"], config)
    order = _order(got["records"])
    assert first_fail is not None and order.index(first_fail) == 5
    assert messages[0][0] == first_fail
    assert "the cycle of 2 steps" in messages[0][2] and "3 times in a row" in messages[0][2]
    assert _sent_after(got["requests"], messages[0][2].splitlines()[0], k=5)
    spoken = [order.index(m[0]) for m in messages if m[1] != "hook_stopped_continuation"]
    assert spoken[:2] == [5, 7]  # each full copy, not the half copy between


@pytest.mark.parametrize("pause", [0.0, 1.0], ids=["streamed", "transcript-lags"])
def test_pre_tool_use_refuses_the_repeat_before_it_runs(tmp_path: Path, pause: float) -> None:
    """name-args mode: after the warning, the next identical call is denied by PreToolUse
    (it never runs: its result is the refusal), and the one after stops the agent.
    ``transcript-lags``: each response stays open 1 s after its call has streamed, so
    Claude Code runs the call's hooks before its transcript holds the call (the race
    that, under load, let the 4th call run; see docs/design/agent-guards.md). Every
    response here starts 0.5 s after its request, as a real model's does (`_run`):
    answered at once, on a busy machine or with Claude Code's debug log on, the
    transcript can lag a whole turn, the limit that page states."""
    marker = tmp_path / "runs.txt"
    got = _run(tmp_path, [[bash(f"echo x >> {marker}")]] * 8 + ["done"],
               ["--max", "2", "--match", "name-args"], pause)
    messages = _guard_messages(got["records"])
    order = _order(got["records"])
    how = [(order.index(m[0]), m[1]) for m in messages]
    assert how[0] == (2, "hook_additional_context")
    assert (3, "refused") in how, how
    refusal = {order.index(m[0]): m[2] for m in messages if m[1] == "refused"}[3]
    assert "did not run" in refusal
    # as the guard predicts it for a transcript that lags (`refusal_result`)
    assert refusal.startswith("PreToolUse:Bash hook error: maxrepeat loop guard (blocked)")
    assert marker.read_text().count("x") == 3  # the 4th call did not run
    assert got["out"]["terminal_reason"] == "hook_stopped"


def test_parallel_calls_get_one_message_per_turn(tmp_path: Path) -> None:
    """Two parallel calls per turn, the same pair three times (name-args, max 1): the
    guard speaks once for the turn that fails, not once per call."""
    turn = [bash("echo a"), bash("echo b")]
    got = _run(tmp_path, [turn, turn, turn, "done"],
               ["--max", "1", "--match", "name-args", "--stop-at", "0"])
    messages = _guard_messages(got["records"])
    order = _order(got["records"])
    turns = [order.index(m[0]) // 2 for m in messages]
    assert turns == [1, 2]
