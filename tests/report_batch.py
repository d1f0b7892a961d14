"""A small, fixed batch for the report tests: loops, a cycle, a clean run, a hostile run
whose text tries to escape every output format, and an unreadable trajectory."""

from __future__ import annotations

from typing import Any

import maxrepeat
from maxrepeat.reporters.html import Timeline, timeline_of

from .conftest import call, result, turn

#: What the hostile trajectory's script would do if any of it ever ran in a browser.
HOSTILE_SCRIPT = "window.__pwned = 1; document.title = 'pwned'"
HOSTILE_ID = (
    "<script>" + HOSTILE_SCRIPT + "</script> | `tick` @here **bold** [x](http://e.invalid)"
)
HOSTILE_TOOL = 'bash<img src=x onerror="' + HOSTILE_SCRIPT + '">'
HOSTILE_ARGS = {
    "command": "</script><script>" + HOSTILE_SCRIPT + "</script>",
    "html": "<img src=x onerror=\"" + HOSTILE_SCRIPT + "\"><svg onload=alert(1)>",
    "controls": "\x1b[31mred\x1b[0m \x00\x0b\x7f \u202egnp.exe \ufffe|pipe|",
}
HOSTILE_OBSERVATION = "\x1b]0;title\x07\x1b[2J</textarea><iframe src=//e.invalid>\r\nline 2"


def _steps(*calls: tuple[str, Any, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i, (name, args, obs) in enumerate(calls):
        cid = f"c{i}"
        events += turn(call(name, cid, args), result(cid, obs))
    return events


def trajectories() -> list[dict[str, Any]]:
    """The batch, in input order."""
    pytest_call = ("bash", {"command": "pytest -q"}, "1 failed")
    flaky = _steps(("read_file", {"path": "a.py"}, "def f(): ..."), *[pytest_call] * 5,
                   ("edit_file", {"path": "a.py"}, "ok"), ("bash", {"command": "pytest -q"},
                                                           "1 passed"))
    push = ("bash", {"command": "git push"}, "rejected")
    pull = ("bash", {"command": "git pull --rebase"}, "ok")
    cycle = _steps(("read_file", {"path": "b.py"}, "x"), *[push, pull] * 3,
                   ("grep", {"pattern": "TODO"}, ""), *[("read_file", {"path": "c"}, "y")] * 4)
    clean = _steps(("read_file", {"path": "a"}, "1"), ("edit_file", {"path": "a"}, "ok"),
                   ("bash", {"command": "make"}, "built"))
    hostile = _steps(*[(HOSTILE_TOOL, HOSTILE_ARGS, HOSTILE_OBSERVATION)] * 4)
    broken = [{"type": "tool_call", "data": {"toolName": 7}}]
    return [
        {"id": "flaky-tests", "events": flaky},
        {"id": "push-pull-cycle", "events": cycle},
        {"id": "clean-run", "events": clean},
        {"id": HOSTILE_ID, "events": hostile},
        {"id": "broken-record", "events": broken},
    ]


def configs() -> list[maxrepeat.MaxRepeatConfig]:
    """Two graders, as a config file would give them."""
    return [
        maxrepeat.MaxRepeatConfig(3, name="same-output"),
        maxrepeat.MaxRepeatConfig(2, max_cycle_period=3, match="name-args", name="cycles"),
    ]


def graded() -> tuple[list[maxrepeat.GraderResult], maxrepeat.Summary, list[Timeline | None]]:
    """Results (trajectory by trajectory, grader by grader), their summary and timelines."""
    results: list[maxrepeat.GraderResult] = []
    timelines: list[Timeline | None] = []
    cfgs = configs()
    for t in trajectories():
        for cfg in cfgs:
            r = maxrepeat.grade(t, cfg)
            results.append(r)
            timelines.append(timeline_of(t, cfg) if r.status == "ok" else None)
    return results, maxrepeat.summarize(results, len(cfgs)), timelines
