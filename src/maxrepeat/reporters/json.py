"""``--output json``: one document ``{"results": [...], "summary": {...}}``."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..core.result import GraderResult
from ..core.summary import Summary

__all__ = ["render"]


def render(results: Sequence[GraderResult], summary: Summary) -> str:
    """The whole batch as one indented JSON document."""
    doc = {"results": [r.to_dict() for r in results], "summary": summary.to_dict()}
    return msgspec.json.format(msgspec.json.encode(doc).decode("utf-8"), indent=2) + "\n"
