"""The reporter interface: what every output format offers the ``grade`` command.

A report is written as results arrive: `Reporter.add` returns the text to write now for
one result (a line, for formats that stream; nothing, for those that need the whole batch)
and `Reporter.finish` the text that ends the report (a footer, or the whole document).
`Reporter.render` gives a whole report at once, for library use. A format that shows
more than results asks for it with `Reporter.detail`: a function of a result's watched
steps that the grading driver applies where the steps already are (the HTML timelines).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..core.result import GraderResult
from ..core.steps import Step
from ..core.summary import Summary

__all__ = ["Reporter", "LineReporter"]


class Reporter(ABC):
    """One output format. Subclasses that need the whole batch implement `render`; the
    default `add` keeps each result (and its detail) for `finish`.

    >>> from maxrepeat.reporters import get_reporter
    >>> from maxrepeat import MaxRepeatConfig, grade, summarize
    >>> results = [grade({"id": "r", "events": []}, MaxRepeatConfig(1))]
    >>> reporter = get_reporter("json")
    >>> reporter.add(results[0]), reporter.finish(summarize(results)).count('"trajectory"')
    ('', 1)

    A format declares itself on its class: ``name`` (``--output-format NAME``; its module
    is ``reporters/NAME.py``), ``suffixes`` (the report file endings that pick it when
    ``--output-format`` is not given), ``help`` (what it writes, for ``--help``) and
    ``order`` (where it is listed, lower first). The registry reads ``order`` and
    ``suffixes`` from the module's source without importing it, so each is written on
    one line as a literal.
    """

    name: ClassVar[str] = ""
    suffixes: ClassVar[tuple[str, ...]] = ()
    help: ClassVar[str] = ""
    order: ClassVar[int] = 1000

    def __init__(self, color: bool | None = False) -> None:
        self.color = color
        self._results: list[GraderResult] = []
        self._details: list[Any] = []

    def detail(self) -> Callable[[Sequence[Step]], Any] | None:
        """What the report shows beside each result, as a module-level function of the
        result's watched steps (the grading driver runs it where the steps are, in worker
        processes too); None: results only."""
        return None

    @abstractmethod
    def render(
        self, results: Sequence[GraderResult], summary: Summary,
        details: Sequence[Any] | None = None,
    ) -> str:
        """The whole report (``details``: one per result, or None)."""

    def add(self, result: GraderResult, detail: Any = None) -> str:
        """Take one result (with its detail); the text to write now."""
        self._results.append(result)
        self._details.append(detail)
        return ""

    def finish(self, summary: Summary) -> str:
        """The text that ends the report, once every result was added."""
        return self.render(self._results, summary, self._details)


class LineReporter(Reporter):
    """A format written one result at a time: a line per result, then a footer."""

    @abstractmethod
    def line(self, result: GraderResult) -> str:
        """One result as text."""

    @abstractmethod
    def footer(self, summary: Summary) -> str:
        """The text after the last result."""

    def render(
        self, results: Sequence[GraderResult], summary: Summary,
        details: Sequence[Any] | None = None,
    ) -> str:
        return "".join(self.line(r) for r in results) + self.footer(summary)

    def add(self, result: GraderResult, detail: Any = None) -> str:
        return self.line(result)

    def finish(self, summary: Summary) -> str:
        return self.footer(summary)
