"""``maxrepeat grade`` is argument parsing over one engine call (`engines.grading.Grading`):
the report the command writes is the report the call writes, and the command holds none
of the orchestration (engines, run names, summary counts) itself."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat import MaxRepeatConfig
from maxrepeat.engines.driver import Graders
from maxrepeat.engines.grading import Grading
from maxrepeat.reporters import get_reporter
from tests.conftest import ROOT


def _batch(tmp_path: Path) -> Path:
    calls = [{"type": "tool_call", "data": {"toolName": "ls", "toolCallId": f"c{i}",
                                            "arguments": {"p": "."}}} for i in range(4)]
    for i, events in enumerate([calls, calls[:1], []]):
        (tmp_path / f"r{i}.json").write_text(json.dumps({"id": "same", "events": events}))
    (tmp_path / "bad.json").write_text("{not json")
    return tmp_path


@pytest.mark.parametrize("output", ["jsonl", "junit", "markdown"])
def test_the_command_writes_what_the_call_writes(tmp_path: Path, output: str) -> None:
    folder = _batch(tmp_path)
    graders = Graders([MaxRepeatConfig(2, match="name-args")])
    out: list[str] = []
    with Grading([str(folder)], graders, get_reporter(output), jobs=1) as grading:
        summary = grading.run(out.append)
    proc = subprocess.run(
        [sys.executable, "-m", "maxrepeat", "grade", str(folder), "--max", "2", "--match",
         "name-args", "-o", output, "-q", "-j", "1"],
        capture_output=True, text=True, timeout=120)
    assert proc.stdout == "".join(out)
    assert proc.returncode == summary.exit_code == 2  # the unreadable file
    assert summary.total == 4 and summary.failed == 1
    if output == "jsonl":  # run names made unique across the batch, by the call
        names = [json.loads(line)["trajectory"] for line in "".join(out).splitlines()]
        assert len(set(names)) == 4


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine must be one of local, ray"):
        Grading(["x"], Graders([MaxRepeatConfig(2)]), get_reporter("jsonl"), engine="dask")


def test_the_command_holds_no_orchestration() -> None:
    """cli/grade.py imports no engine and builds no summary or run names: those are the
    call's."""
    source = (ROOT / "src/maxrepeat/cli/grade.py").read_text()
    imported = {(node.module or "").lstrip(".") for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom)}
    assert "engines.grading" in imported
    assert not {"engines.batch", "engines.ray", "engines.unitgrader", "core.runnames"} & imported
    assert "SummaryBuilder" not in source and "BatchGrader" not in source
