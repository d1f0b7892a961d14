"""``--output console``: one line per trajectory and grader, then a summary.

Text from trajectories (ids, evidence) is made inert before it reaches the terminal, and
is handed to rich as plain `Text`, never as markup, so ``[bold]`` in an id stays text.
Without colour (a log, a file, ``--color never``) the same text is written without rich,
which is then never imported.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from ..core.preview import inert
from ..core.result import GraderResult
from ..core.summary import Summary
from ._tally import counted, verdict_line
from .base import LineReporter

__all__ = ["REPORTER", "ConsoleReporter", "line", "footer", "render", "make_console"]


def make_console(file: Any = None, color: bool | None = None) -> Any:
    """A rich console (imported here only: rich is the console reporter's dependency)."""
    from rich.console import Console

    # _environ: the caller decided about colour (NO_COLOR, FORCE_COLOR, --color); rich's
    # own reading of those variables (an empty NO_COLOR counts as set) must not undo it
    return Console(
        file=file, force_terminal=color, no_color=color is False, highlight=False,
        soft_wrap=True, emoji=False, markup=False, _environ={},
    )


def _mark(result: GraderResult) -> tuple[str, str]:
    if result.status == "error":
        return "ERROR", "bold magenta"
    if result.passed:
        return "PASS ", "bold green"
    return "FAIL ", "bold red"


def _text(result: GraderResult) -> Any:
    from rich.text import Text

    mark, style = _mark(result)
    text = Text()
    text.append(mark, style=style)
    text.append("  ")
    text.append(inert(result.trajectory), style="bold")
    text.append("  ")
    text.append(inert(result.name), style="cyan")
    text.append("  ")
    text.append(inert(result.evidence))
    return text


def _render_text(obj: Any, color: bool | None) -> str:
    buf = io.StringIO()
    console = make_console(buf, color)
    console.print(obj)
    return buf.getvalue()


def line(result: GraderResult, color: bool | None = False) -> str:
    """One result as one console line."""
    if not color:
        mark, _style = _mark(result)
        return (f"{mark}  {inert(result.trajectory)}  {inert(result.name)}  "
                f"{inert(result.evidence)}\n")
    return _render_text(_text(result), color)


def summary_text(summary: Summary) -> str:
    """The summary as plain text lines."""
    parts = [verdict_line(summary)]
    if summary.figures:
        dist = ", ".join(f"{k}: {v}" for k, v in sorted(summary.figures.items()))
        parts.append(f"largest repeat per result (occurrences: count): {dist}")
    if summary.failing_tools:
        top = sorted(summary.failing_tools.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        parts.append("tools in failing patterns: " + ", ".join(
            f"{inert(k)} ({v})" for k, v in top))
    if summary.nothing_watched:
        # A pass with nothing watched is no evidence: say so, with the format it was read
        # as, so a wrong --format or an export without tool calls is seen.
        count = sum(summary.nothing_watched.values())
        formats = ", ".join(f"{inert(k)} {v}" for k, v in sorted(summary.nothing_watched.items()))
        parts.append(f"no tool call watched in {counted(count, 'result')} "
                     f"(read as: {formats}); they pass without evidence: check --input-format "
                     "and --tools")
    return "\n".join(parts) + "\n"


def footer(summary: Summary, color: bool | None = False) -> str:
    """The summary block printed after the result lines."""
    body = summary_text(summary)
    if not color:
        return "\n" + body
    from rich.text import Text

    style = "bold red" if summary.exit_code else "bold green"
    return "\n" + _render_text(Text(body.rstrip("\n"), style=style), color)


def render(results: Sequence[GraderResult], summary: Summary, color: bool | None = False) -> str:
    """All result lines and the summary."""
    return "".join(line(r, color) for r in results) + footer(summary, color)


class ConsoleReporter(LineReporter):
    """``--output console``: a line per result as it arrives, then the summary."""

    name = "console"
    suffixes = (".txt",)
    help = "a line per result, then a summary"
    order = 10

    def line(self, result: GraderResult) -> str:
        return line(result, self.color)

    def footer(self, summary: Summary) -> str:
        return footer(summary, self.color)


REPORTER = ConsoleReporter
