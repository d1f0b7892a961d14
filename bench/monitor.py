"""Events per second of `maxrepeat.Monitor` (a measurement, never a pass/fail test).

    python bench/monitor.py                 # 200,000 turns per case
    python bench/monitor.py --turns 20000   # a quick look

For each match mode and a period bound of 1 and 10 it feeds a synthetic trajectory in the
normal order (turn_start, one or two calls, their results, turn_end; loops of period 1–4
mixed with varied calls) to one monitor, asking for the result after every event as a live
guard does, and prints events per second, the state size at the end (it must not grow
with the trajectory, except for the one entry per answered call id that ``observation``
mode keeps unless ``forget_answers=True``) and, for comparison, how long one `grade()` of the whole
trajectory takes. A last line measures the out-of-order case: one result that never arrives, which
keeps every later step open (see docs/design/monitor.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
import tracemalloc
from typing import Any

from maxrepeat import MaxRepeatConfig, Monitor, grade


def trajectory(turns: int, seed: int = 7) -> list[dict[str, Any]]:
    """Events of ``turns`` turns in the normal order, with loops mixed in."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    n = 0
    block: list[str] = []
    while n < turns:
        if rng.random() < 0.3:
            period = rng.randint(1, 4)
            block = [f"cmd{rng.randint(0, 9)}" for _ in range(period)]
            commands = block * rng.randint(2, 6)
        else:
            commands = [f"cmd{rng.randint(0, 50)}"]
        for command in commands:
            events.append({"type": "turn_start", "data": {}})
            calls = 2 if rng.random() < 0.1 else 1
            for c in range(calls):
                cid = f"c{n}-{c}"
                events.append({"type": "tool_call", "data": {
                    "toolName": "bash", "toolCallId": cid, "arguments": {"command": command}}})
                events.append({"type": "tool_result", "data": {
                    "toolCallId": cid, "result": f"output of {command}", "success": True}})
            events.append({"type": "turn_end", "data": {}})
            n += 1
    return events


def measure(
    events: list[dict[str, Any]], config: MaxRepeatConfig, forget: bool = False
) -> tuple[float, int]:
    """(events per second, state bytes at the end) with a result after every event."""
    monitor = Monitor(config, forget_answers=forget)
    start = time.perf_counter()
    for event in events:
        monitor.feed(event)
    elapsed = time.perf_counter() - start
    return len(events) / elapsed, len(monitor.to_bytes())


def answer_bytes(events: list[dict[str, Any]], period: int) -> tuple[float, int]:
    """(bytes per answered call id, ids) that ``observation`` mode keeps: the traced
    memory (tracemalloc, after a full collection) still held by a monitor fed ``events``,
    minus that of a ``forget_answers=True`` monitor fed the same events (which differs
    only by the table of first results), divided by the answered ids. Events are decoded
    from JSON lines while traced, as a reader gives them, so the call id strings the
    monitor keeps are counted."""
    config = MaxRepeatConfig(max=3, max_cycle_period=period)
    lines = [json.dumps(e) for e in events]
    held = []
    for forget in (False, True):
        gc.collect()
        tracemalloc.start()
        monitor = Monitor(config, forget_answers=forget)
        for line in lines:
            monitor.feed(json.loads(line))
        monitor.result()
        gc.collect()
        held.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.stop()
        del monitor
    ids = len({e["data"]["toolCallId"] for e in events if e["type"] == "tool_result"})
    return (held[0] - held[1]) / ids, ids


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--memory-only", action="store_true",
                        help="only the bytes kept per answered call id")
    parser.add_argument("--memory-turns", type=int, default=10_000,
                        help="turns of the per-id memory measurement (default 10,000)")
    args = parser.parse_args()
    events = trajectory(args.turns)
    # Memory per id on its own (smaller) trajectory: four traced passes are slow.
    small = trajectory(args.memory_turns)
    # Results repeat in this data (a loop's outputs); a second copy makes every one unique.
    unique = [{**e, "data": {**e["data"], "result": "output " + e["data"]["toolCallId"]}}
              if e["type"] == "tool_result" else e for e in small]
    for label, data in (("repeated", small), ("unique", unique)):
        for period in (1, 10):
            per_id, ids = answer_bytes(data, period)
            print(f"observation, period {period}, {label} results: {per_id:,.0f} bytes kept "
                  f"per answered call id ({ids:,} ids; tracemalloc, minus forget_answers)")
    if args.memory_only:
        return
    print(f"{len(events):,} events, {args.turns:,} turns, normal order, result after each event")
    print(f"{'match':<12}{'period':>7}{'events/s':>14}{'state bytes':>13}{'grade() s':>11}")
    for match in ("name", "name-args", "observation"):
        for period in (1, 10):
            config = MaxRepeatConfig(max=3, max_cycle_period=period, match=match)
            rate, size = measure(events, config)
            start = time.perf_counter()
            grade({"events": events}, config)
            batch = time.perf_counter() - start
            print(f"{match:<12}{period:>7}{rate:>14,.0f}{size:>13,}{batch:>11.2f}")
    for period in (1, 10):
        config = MaxRepeatConfig(max=3, max_cycle_period=period)
        rate, size = measure(events, config, forget=True)
        print(f"{'observation, forget_answers':<28}{period:>3}{rate:>12,.0f}{size:>13,}")
    # Turns of many parallel calls: the open turn is compared through a running summary.
    wide: list[dict[str, Any]] = []
    for t in range(3):
        wide.append({"type": "turn_start", "data": {}})
        for i in range(min(args.turns, 20000)):
            cid = f"w{t}-{i}"
            wide.append({"type": "tool_call", "data": {
                "toolName": "read", "toolCallId": cid, "arguments": {"path": "a.txt"}}})
            wide.append({"type": "tool_result", "data": {"toolCallId": cid, "result": "x"}})
        wide.append({"type": "turn_end", "data": {}})
    rate, size = measure(wide, MaxRepeatConfig(max=2, max_cycle_period=10))
    print(f"observation, 3 turns of {min(args.turns, 20000):,} parallel calls: "
          f"{rate:,.0f} events/s")
    # One call whose result never comes: every later step stays open to change.
    short = trajectory(min(args.turns, 2000))
    short = [e for e in short if e.get("data", {}).get("toolCallId") != "c5-0"
             or e["type"] != "tool_result"]
    rate, size = measure(short, MaxRepeatConfig(max=3, max_cycle_period=10))
    print(f"observation, one result missing ({len(short):,} events): {rate:,.0f} events/s, "
          f"state {size:,} bytes")


if __name__ == "__main__":
    main()
