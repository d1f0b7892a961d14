"""``--output html``: one self-contained page to see where each agent looped.

The page holds a summary (counts, pass rate per grader, a histogram of the figure) and,
per trajectory, a timeline of its watched steps coloured by tool with every loop run
highlighted; selecting a step shows its calls, arguments and observation.

This module holds the report's data: `timeline` turns the watched steps of one result
(given by the grading driver, or ``maxrepeat.steps(trajectory, config)``) into a compact,
shortened `Timeline`, and `render` takes one per result (or None; without timelines the
page still shows every result and its runs). Trajectory text is made inert here; the page
around the data (style, script, the safe embedding of untrusted text, the
Content-Security-Policy) is `reporters.html_page`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..core.canonical import decode_value
from ..core.preview import inert, shorten
from ..core.result import GraderResult
from ..core.steps import MISSING, Step
from ..core.summary import Summary
from ._tally import tally
from .base import Reporter
from .html_page import page

__all__ = ["REPORTER", "HtmlReporter", "CallView", "StepView", "Timeline", "timeline",
           "timeline_of", "render"]

#: characters kept of each argument or observation shown in a step's details
DETAIL_LIMIT: Final = 2000
#: watched steps drawn per timeline (the rest are counted, not drawn)
STEP_LIMIT: Final = 2000
#: characters of arguments and observations in one page; past it, results (passing ones
#: first) keep their timelines but not their step details, so huge batches stay openable
DETAIL_BUDGET: Final = 32_000_000


@dataclass(frozen=True, slots=True)
class CallView:
    """One watched call as the page shows it: texts already shortened and made inert."""

    event: int
    tool: str
    call_id: str | None
    arguments: str
    observation: str | None


@dataclass(frozen=True, slots=True)
class StepView:
    """One watched step: its index over the watched steps and its calls."""

    index: int
    calls: tuple[CallView, ...]


@dataclass(frozen=True, slots=True)
class Timeline:
    """The watched steps of one result, as drawn (``hidden`` steps past `STEP_LIMIT`)."""

    steps: tuple[StepView, ...]
    hidden: int = 0


def _readable(text: str) -> str:
    """Inert text that keeps its line breaks and tabs (the page shows them as such)."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(inert(line.replace("\t", "    ")) for line in lines)


def _show(value: Any) -> str:
    try:
        value = decode_value(value)
        if isinstance(value, str):
            return _readable(shorten(value[: DETAIL_LIMIT * 2], DETAIL_LIMIT))
        if isinstance(value, (dict, list)) and len(repr(value)) > DETAIL_LIMIT * 8:
            text = json.dumps(value, ensure_ascii=False)
        else:
            text = json.dumps(value, ensure_ascii=False, indent=2)
    except (RecursionError, ValueError, TypeError):
        return "(a value that cannot be shown)"
    return _readable(shorten(text, DETAIL_LIMIT))


def timeline(steps: Sequence[Step]) -> Timeline:
    """The compact view of one result's watched steps (from ``maxrepeat.steps``).

    >>> import maxrepeat
    >>> t = {"events": [{"type": "tool_call", "data": {"toolName": "bash", "arguments": {"n": 1}}}]}
    >>> timeline(maxrepeat.steps(t, maxrepeat.MaxRepeatConfig(1))).steps[0].calls[0].tool
    'bash'
    """
    views = []
    for step in steps[:STEP_LIMIT]:
        calls = tuple(
            CallView(
                event=c.event_index,
                tool=inert(shorten(c.tool_name, 200)),
                call_id=inert(shorten(c.call_id, 200)) if c.call_id is not None else None,
                arguments=_show(c.arguments),
                observation=None if c.observation is MISSING else _show(c.observation),
            )
            for c in step.calls
        )
        views.append(StepView(step.index, calls))
    return Timeline(tuple(views), max(len(steps) - STEP_LIMIT, 0))


def _status(result: GraderResult) -> str:
    if result.status == "error":
        return "error"
    return "pass" if result.passed else "fail"


_RANK: Final = {"error": 0, "fail": 1, "pass": 2}


def _detail_budget(
    results: Sequence[GraderResult], timelines: Sequence[Timeline | None]
) -> set[int]:
    """The results whose step details fit in `DETAIL_BUDGET`, failing ones served first."""
    order = sorted(range(len(results)), key=lambda i: _RANK[_status(results[i])])
    left = DETAIL_BUDGET
    shown: set[int] = set()
    for i in order:
        tl = timelines[i]
        if tl is None:
            continue
        cost = sum(len(c.arguments) + len(c.observation or "") for s in tl.steps for c in s.calls)
        if cost <= left:
            left -= cost
            shown.add(i)
    return shown


def _data(
    results: Sequence[GraderResult], summary: Summary, timelines: Sequence[Timeline | None]
) -> dict[str, Any]:
    tools: dict[str, int] = {}
    groups: list[dict[str, Any]] = []
    shown = _detail_budget(results, timelines)
    for n, (r, tl) in enumerate(zip(results, timelines, strict=True)):
        meta = r.metadata
        steps = None
        if tl is not None:
            steps = [
                {"i": s.index,
                 "c": [[tools.setdefault(c.tool, len(tools)), c.event, c.call_id, c.arguments,
                        c.observation] if n in shown else
                       [tools.setdefault(c.tool, len(tools)), c.event, c.call_id, None, None, 1]
                       for c in s.calls]}
                for s in tl.steps
            ]
        item = {
            "grader": inert(r.name),
            "status": _status(r),
            "evidence": r.evidence,
            "occ": meta.occurrences,
            "max": meta.max,
            "match": meta.match,
            "watched": meta.watched_steps,
            "loopSteps": meta.loop_steps,
            # metadata.runs may be capped (--max-runs); the page says how many there were
            "runsTotal": meta.runs_total,
            "runs": [[x.start_step, x.end_step, x.period, x.occurrences, x.start_event,
                      x.end_event, " | ".join(x.pattern)] for x in meta.runs],
            "steps": steps,
            "hidden": tl.hidden if tl is not None else 0,
            "src": inert(meta.source) if meta.source is not None else None,
            "fmt": meta.format,
        }
        label = inert(r.trajectory)
        if groups and groups[-1]["label"] == label and all(
            x["grader"] != item["grader"] for x in groups[-1]["results"]
        ):
            groups[-1]["results"].append(item)
        else:
            groups.append({"label": label, "results": [item]})
    for g in groups:
        g["worst"] = min(_RANK[x["status"]] for x in g["results"])
    groups.sort(key=lambda g: g["worst"])
    return {
        "summary": summary.to_dict(),
        "graders": [{"name": inert(t.name), "passed": t.passed, "failed": t.failed,
                     "errors": t.errors, "rate": round(t.pass_rate, 4)} for t in tally(results)],
        "tools": list(tools),
        "trajectories": groups,
    }


def render(
    results: Sequence[GraderResult],
    summary: Summary,
    timelines: Sequence[Timeline | None] | None = None,
) -> str:
    """The batch as one self-contained HTML page (no network requests when opened).

    ``timelines`` holds one `Timeline` (or None) per result, in the same order; without
    it the page lists results and runs but draws no timelines.
    """
    if timelines is None:
        timelines = [None] * len(results)
    if len(timelines) != len(results):
        raise ValueError(f"one timeline per result (got {len(timelines)} for {len(results)})")
    return page(_data(results, summary, timelines), summary)


def timeline_of(trajectory: Any, config: Any) -> Timeline | None:
    """The `Timeline` of one trajectory under one config, or None when it cannot be read.

    >>> import maxrepeat
    >>> t = {"events": [{"type": "tool_call", "data": {"toolName": "bash"}}]}
    >>> len(timeline_of(t, maxrepeat.MaxRepeatConfig(1)).steps)
    1
    """
    from ..core.errors import TrajectoryFormatError
    from ..core.grade import steps

    try:
        return timeline(steps(trajectory, config))
    except (TrajectoryFormatError, RecursionError, ValueError, TypeError):
        return None


class HtmlReporter(Reporter):
    """``--output html``: one page, written at the end, with a `Timeline` per result made
    by the grading driver from the steps it built (`timeline`)."""

    name = "html"
    suffixes = (".html", ".htm")
    help = "one page with a timeline of each trajectory"
    order = 60

    def detail(self) -> Callable[[Sequence[Step]], Timeline]:
        return timeline

    def render(
        self, results: Sequence[GraderResult], summary: Summary,
        details: Sequence[Any] | None = None,
    ) -> str:
        return render(results, summary, details)


REPORTER = HtmlReporter
