"""``--output jsonl``: one result per line, each with exactly the keys of spec §5."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..core.result import GraderResult
from ..core.summary import Summary
from .base import LineReporter

__all__ = ["REPORTER", "JsonlReporter", "line", "footer", "render"]

_encode = msgspec.json.Encoder().encode


def line(result: GraderResult) -> str:
    """One result as one JSON line (with its newline)."""
    return _encode(result).decode("utf-8") + "\n"


def footer(summary: Summary) -> str:
    """Nothing: JSONL holds results only (the summary goes to the console)."""
    return ""


def render(results: Sequence[GraderResult], summary: Summary) -> str:
    """Every result, one per line."""
    return "".join(line(r) for r in results)


class JsonlReporter(LineReporter):
    """``--output jsonl``: each result written as it arrives."""

    name = "jsonl"
    suffixes = (".jsonl", ".ndjson")
    help = "one result per line, as it is graded"
    order = 30

    def line(self, result: GraderResult) -> str:
        return line(result)

    def footer(self, summary: Summary) -> str:
        return footer(summary)


REPORTER = JsonlReporter
