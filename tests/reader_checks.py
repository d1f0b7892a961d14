"""Checks the reader tests of agent session logs (Pi, Qwen Code) make alike: the shell
commands of each step, and that a log read in two halves, the first's state saved and
resumed, converts to what one full read gives."""

from __future__ import annotations

from pathlib import Path

from maxrepeat import read_trajectories
from maxrepeat.core.events import TOOL_CALL, Event, Trajectory
from maxrepeat.readers._resume import resume


def command_steps(traj: Trajectory) -> list[list[str]]:
    """Per step (from each ``turn_start``), the ``command`` argument of its calls."""
    steps: list[list[str]] = []
    for e in traj.events:
        if e.type == "turn_start":
            steps.append([])
        elif e.type == TOOL_CALL:
            steps[-1].append(e.data.arguments["command"])
    return steps


def check_resumed_at_every_cut(reader: str, path: Path) -> None:
    """At every line of ``path`` cut into two, the second half read after resuming the
    first's saved state gives the events of one full read."""
    lines = path.read_bytes().splitlines(keepends=True)
    [traj] = list(read_trajectories(path, format=reader))
    full = list(traj.events)
    for cut in range(len(lines) + 1):
        conv = resume(reader, str(path), None)
        settled: list[Event] = []
        for n, raw in enumerate(lines[:cut], 1):
            conv.feed(n, raw)
        settled += conv.settle()
        conv = resume(reader, str(path), conv.save())
        for n, raw in enumerate(lines[cut:], cut + 1):
            conv.feed(n, raw)
        settled += conv.settle()
        assert settled + conv.open_events() == full, (path.name, cut)
