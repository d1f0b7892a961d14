"""A brute-force reference of spec §3–4, written for clarity, not speed.

It shares no code with the package: steps by a plain walk, deep equality by a tagged
structural key (Python's ``==`` would make ``true == 1``), patterns by trying every start
and every period.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

_MISSING = object()


def _key(value: Any) -> Any:
    """A hashable key that is equal exactly when the JSON values are deep-equal."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("num", value)  # 1 == 1.0 and hash(1) == hash(1.0)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("obj", frozenset((k, _key(v)) for k, v in value.items()))
    raise TypeError(type(value))


def _empty(obs: Any) -> bool:
    if obs is _MISSING or obs is None:
        return True
    if isinstance(obs, str):
        return obs.strip() == ""
    if isinstance(obs, (list, dict)):
        return len(obs) == 0
    return False


@dataclass
class RefResult:
    occurrences: int
    period: int
    start_step: int | None
    end_step: int | None
    start_event: int | None
    end_event: int | None
    watched_steps: int
    watched_calls: int
    empty_steps: int


def reference(trajectory: dict[str, Any], config: dict[str, Any]) -> RefResult:
    """The figure and its location, by the spec's words."""
    events = trajectory["events"]
    tools = config.get("tools")
    match = config.get("match", "observation")
    period_bound = config.get("max_cycle_period", 1)

    def watched(name: str) -> bool:
        return tools is None or any(re.search(p, name) for p in tools)

    first_result: dict[str, Any] = {}
    for ev in events:
        if ev["type"] == "tool_result":
            cid = ev["data"].get("toolCallId")
            if cid is not None and cid not in first_result:
                first_result[cid] = ev["data"].get("result")

    steps: list[list[int]] = []
    open_turn: list[int] | None = None
    turn_is_open = False
    for i, ev in enumerate(events):
        if ev["type"] == "turn_start":
            if turn_is_open and open_turn:
                steps.append(open_turn)
            turn_is_open, open_turn = True, []
        elif ev["type"] == "turn_end":
            if turn_is_open and open_turn:
                steps.append(open_turn)
            turn_is_open, open_turn = False, None
        elif ev["type"] == "tool_call" and watched(ev["data"]["toolName"]):
            if turn_is_open:
                assert open_turn is not None
                open_turn.append(i)
            else:
                steps.append([i])
    if turn_is_open and open_turn:
        steps.append(open_turn)
    steps.sort(key=lambda s: s[0])

    fps: list[Any] = []
    for step in steps:
        parts = []
        empties = 0
        for i in step:
            data = events[i]["data"]
            name = data["toolName"]
            if match == "name":
                parts.append((name,))
            elif match == "name-args":
                parts.append((name, _key(data.get("arguments"))))
            else:
                cid = data.get("toolCallId")
                obs = first_result.get(cid, _MISSING) if cid is not None else _MISSING
                if _empty(obs):
                    empties += 1
                    parts.append((name, "no observation"))
                else:
                    parts.append((name, _key(obs)))
        if match == "observation" and empties and (empties == len(step) or period_bound > 1):
            fps.append(None)
        else:
            fps.append(frozenset(Counter(parts).items()))

    n = len(fps)
    best: tuple[int, int, int] | None = None  # (k, p, start)
    for p in range(1, period_bound + 1):
        for start in range(n - p + 1):
            block = fps[start:start + p]
            if any(f is None for f in block):
                continue
            k = 1
            while fps[start + k * p:start + (k + 1) * p] == block:
                k += 1
            cand = (k, p, start)
            if best is None or (k, -p, -start) > (best[0], -best[1], -best[2]):
                best = cand
    empty_steps = sum(1 for f in fps if f is None)
    calls = sum(len(s) for s in steps)
    if best is None:
        return RefResult(0, 0, None, None, None, None, len(steps), calls, empty_steps)
    k, p, start = best
    end = start + k * p - 1
    return RefResult(k, p, start, end, min(steps[start]), max(steps[end]), len(steps), calls,
                     empty_steps)
