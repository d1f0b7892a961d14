"""``--output markdown``: a summary for pull-request comments and CI job summaries.

Counts, a pass-rate table per grader, then the failing and erroring results with their
evidence. Every value from a trajectory or a config is written as a code span: Markdown,
HTML, links and @-mentions inside it stay text. Pipes are escaped for GitHub-flavoured
tables, newlines become spaces, and the span's backtick fence outgrows any backtick run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from ..core.preview import inert, shorten
from ..core.result import GraderResult
from ..core.summary import Summary
from ._tally import ordered_failing_first, tally, verdict_line
from .base import Reporter

__all__ = ["REPORTER", "MarkdownReporter", "render", "code"]

#: rows of failing/erroring results shown; a PR comment must stay well under 65,536 chars
ROW_LIMIT: Final = 50
EVIDENCE_LIMIT: Final = 300
_BACKTICKS = re.compile("`+")


def code(text: str) -> str:
    """``text`` as an inline code span that is safe inside a table cell.

    >>> code("a|b")
    '`a\\\\|b`'
    >>> code("x `y`")
    '`` x `y` ``'
    """
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    text = inert(flat).replace("|", "\\|")
    if not text:
        return '`""`'
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    # A code span drops one space from each end when both ends are spaces; pad so that
    # backticks at the ends stay apart from the fence and edge spaces survive.
    edges = text[0] + text[-1]
    pad = " " if "`" in edges or (edges == "  " and text.strip(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f}%"


def _headline(summary: Summary) -> str:
    verdict = "errors" if summary.errors else ("failures" if summary.failed else "all passed")
    mark = {"errors": "⚠️", "failures": "❌", "all passed": "✅"}[verdict]
    return f"## {mark} maxrepeat: {verdict_line(summary)}"


def _row(result: GraderResult) -> str:
    meta = result.metadata
    status = "error" if result.status == "error" else "fail"
    occ = str(meta.occurrences) if result.status == "ok" else "–"
    loop = f"{meta.loop_steps}/{meta.watched_steps}" if result.status == "ok" else "–"
    evidence = code(shorten(result.evidence, EVIDENCE_LIMIT))
    return (
        f"| {code(result.trajectory)} | {code(result.name)} | {status} | {occ} | {loop} "
        f"| {evidence} |"
    )


def render(results: Sequence[GraderResult], summary: Summary) -> str:
    """The batch as a Markdown document (GitHub-flavoured tables)."""
    out = [_headline(summary), ""]
    out += ["| grader | passed | failed | errors | pass rate |", "|---|--:|--:|--:|--:|"]
    for t in tally(results):
        out.append(
            f"| {code(t.name)} | {t.passed} | {t.failed} | {t.errors} | {_percent(t.pass_rate)} |"
        )
    if summary.figures:
        dist = ", ".join(f"{k}: {v}" for k, v in sorted(summary.figures.items()))
        out += ["", f"Largest repeat per result (occurrences: results): {dist}"]
    bad = [r for r in ordered_failing_first(results) if r.status == "error" or not r.passed]
    if bad:
        out += [
            "",
            "### Failing results",
            "",
            "| trajectory | grader | status | occurrences | loop steps | evidence |",
            "|---|---|---|--:|--:|---|",
        ]
        out += [_row(r) for r in bad[:ROW_LIMIT]]
        if len(bad) > ROW_LIMIT:
            out += ["", f"…and {len(bad) - ROW_LIMIT} more failing results not shown."]
    return "\n".join(out) + "\n"


class MarkdownReporter(Reporter):
    """``--output markdown``: one document, written at the end."""

    name = "markdown"
    suffixes = (".md",)
    help = "a summary for pull requests and CI job summaries"
    order = 50

    def render(
        self, results: Sequence[GraderResult], summary: Summary,
        details: Sequence[Any] | None = None,
    ) -> str:
        return render(results, summary)


REPORTER = MarkdownReporter
