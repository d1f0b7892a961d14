"""The project's own golden cases (tests/data/spec_cases.yaml), expanded for the tests.

The YAML file writes trajectories in a shorthand (its header explains it); this module
turns each case into the shape the tests use: ``config``, a ``trajectory`` in the native
JSON shape, and ``expect`` as the result keys to compare (``status`` and ``passed`` at the
top of a result, everything else under ``metadata``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data" / "spec_cases.yaml"


class _Calls:
    """Numbers the calls of one trajectory: c1, c2, ... unless a call names its id."""

    def __init__(self) -> None:
        self.count = 0

    def expand(self, call: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        self.count += 1
        cid = call.get("id", f"c{self.count}")
        data: dict[str, Any] = {"toolName": call["tool"]}
        if cid is not None:
            data["toolCallId"] = cid
        if "args" in call:
            data["arguments"] = call["args"]
        event = {"type": "tool_call", "data": data}
        if "out" not in call:
            return event, None
        return event, _result(cid, call["out"])


def _result(cid: Any, value: Any) -> dict[str, Any]:
    return {"type": "tool_result", "data": {"toolCallId": cid, "result": value, "success": True}}


def expand_events(items: list[Any]) -> list[dict[str, Any]]:
    """The events a shorthand list stands for."""
    calls = _Calls()
    events: list[dict[str, Any]] = []
    for item in items:
        if item == "open":
            events.append({"type": "turn_start", "data": {}})
        elif item == "close":
            events.append({"type": "turn_end", "data": {}})
        elif "turn" in item:
            pairs = [calls.expand(c) for c in item["turn"]]
            events.append({"type": "turn_start", "data": {}})
            events.extend(call for call, _ in pairs)
            events.extend(res for _, res in pairs if res is not None)
            events.append({"type": "turn_end", "data": {}})
        elif "call" in item:
            call, res = calls.expand(item["call"])
            events.append(call)
            if res is not None:
                events.append(res)
        elif "result" in item:
            events.append(_result(item["result"]["id"], item["result"]["out"]))
        elif "say" in item:
            events.append({"type": "assistant_message", "data": {"content": item["say"]}})
        elif "event" in item:
            events.append(item["event"])
        else:
            raise ValueError(f"unknown shorthand {item!r}")
    return events


def _expect(raw: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"status": raw.get("status", "ok")}
    for key, value in raw.items():
        if key == "steps":
            out["startStep"], out["endStep"] = value if value is not None else (None, None)
        elif key == "events":
            out["startEvent"], out["endEvent"] = value if value is not None else (None, None)
        elif key != "status":
            out[key] = value
    return out


@cache
def load_cases() -> dict[str, list[dict[str, Any]]]:
    """Every grading and lint case, expanded (grading: name, why, config, trajectory,
    expect; lint: name, why, config, valid)."""
    raw = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    grading = [{"name": c["name"], "why": c["why"], "config": c["config"],
                "trajectory": {"id": c["name"], "events": expand_events(c["events"])},
                "expect": _expect(c["expect"])} for c in raw["grading"]]
    names = [c["name"] for c in grading] + [c["name"] for c in raw["lint"]]
    if len(names) != len(set(names)):
        raise ValueError("case names must be unique")
    return {"grading": grading, "lint": raw["lint"]}


def pick(result: dict[str, Any], expect: dict[str, Any]) -> dict[str, Any]:
    """The keys of a result dict that ``expect`` names, in its shape (``evidence`` as the
    expected substrings found in the sentence)."""
    out: dict[str, Any] = {}
    for key, value in expect.items():
        if key in ("status", "passed", "score"):
            out[key] = result[key]
        elif key == "evidence":
            out[key] = [s for s in value if s in result["evidence"]]
        else:
            out[key] = result["metadata"][key]
    return out
