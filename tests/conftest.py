"""Shared test helpers: where the shared spec and corpus are, and small builders."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: ../shared beside the repository (a clean clone in CI has it too)
SHARED = Path(os.environ.get("MAXREPEAT_SHARED", ROOT.parent / "shared"))
SPEC_CASES = SHARED / "spec" / "cases.json"
CORPUS = SHARED / "corpus"
EXAMPLES = ROOT / "examples"


def load_cases() -> dict[str, Any]:
    """The golden cases of the shared spec, or empty lists when the file is absent."""
    if not SPEC_CASES.exists():
        return {"grading": [], "lint": []}
    data: dict[str, Any] = json.loads(SPEC_CASES.read_text(encoding="utf-8"))
    return data


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


def call(name: str, cid: str | None, args: Any = None) -> dict[str, Any]:
    """A tool_call event dict."""
    data: dict[str, Any] = {"toolName": name, "arguments": args}
    if cid is not None:
        data["toolCallId"] = cid
    return {"type": "tool_call", "data": data}


def result(cid: str, value: Any) -> dict[str, Any]:
    """A tool_result event dict."""
    return {"type": "tool_result", "data": {"toolCallId": cid, "result": value, "success": True}}


def turn(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """Events wrapped in turn_start / turn_end."""
    return [{"type": "turn_start", "data": {}}, *events, {"type": "turn_end", "data": {}}]
