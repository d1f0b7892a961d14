"""``--output json``: one document ``{"results": [...], "summary": {...}}``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from ..core.result import GraderResult
from ..core.summary import Summary
from .base import Reporter

__all__ = ["REPORTER", "JsonReporter", "render"]


def render(results: Sequence[GraderResult], summary: Summary) -> str:
    """The whole batch as one indented JSON document."""
    doc = {"results": list(results), "summary": summary.to_dict()}
    return msgspec.json.format(msgspec.json.encode(doc).decode("utf-8"), indent=2) + "\n"


class JsonReporter(Reporter):
    """``--output json``: the whole batch as one document, written at the end."""

    name = "json"
    suffixes = (".json",)
    help = "one document of results and summary"
    order = 20

    def render(
        self, results: Sequence[GraderResult], summary: Summary,
        details: Sequence[Any] | None = None,
    ) -> str:
        return render(results, summary)


REPORTER = JsonReporter
