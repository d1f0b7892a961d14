"""Every result names its file, and a run name never repeats within one invocation."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.readers.test_inspect_eval_members import _sample, _write_eval

CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def _openhands_record(instance: str, repeats: int) -> dict[str, Any]:
    """One line of an OpenHands evaluation output.jsonl (V0 events under history)."""
    history: list[dict[str, Any]] = []
    for n in range(repeats):
        history.append({"id": 2 * n, "source": "agent", "action": "run",
                        "args": {"command": "pytest", "thought": ""}})
        history.append({"id": 2 * n + 1, "source": "agent", "observation": "run",
                        "cause": 2 * n, "content": "1 failed",
                        "extras": {"metadata": {"exit_code": 1}}})
    return {"instance_id": instance, "instruction": "fix it", "history": history,
            "error": None}


def _grade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "grade", *args, "--max", "3", "-q"], capture_output=True,
                          text=True, timeout=120)


def test_openhands_instances_of_two_files(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for sub, repeats in (("a", 5), ("b", 1)):
        (runs / sub).mkdir(parents=True)
        (runs / sub / "output.jsonl").write_text(
            json.dumps(_openhands_record("django-1", repeats)) + "\n"
            + json.dumps(_openhands_record("flask-2", 1)) + "\n")
    proc = _grade(str(runs), "-o", "jsonl")
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    a, b = runs / "a" / "output.jsonl", runs / "b" / "output.jsonl"
    assert [(r["trajectory"], r["metadata"]["source"], r["passed"]) for r in rows] == [
        ("django-1", f"{a}:1", False), ("flask-2", f"{a}:2", True),
        (f"django-1 ({b}:1)", f"{b}:1", True), (f"flask-2 ({b}:2)", f"{b}:2", True)]
    junit = ET.fromstring(_grade(str(runs), "-o", "junit").stdout)
    assert [(c.get("name"), c.get("file")) for c in junit.iter("testcase")] == [
        (r["trajectory"], r["metadata"]["source"]) for r in rows]


def test_inspect_samples_of_two_logs_and_one_file_twice(tmp_path: Path) -> None:
    first, second = tmp_path / "first.eval", tmp_path / "second.eval"
    _write_eval(first, {"samples/1_epoch_1.json": _sample(1, 4)})
    _write_eval(second, {"samples/1_epoch_1.json": _sample(1, 1)})
    proc = _grade(str(first), str(second), str(first), "-o", "jsonl")
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    member = "!samples/1_epoch_1.json"
    assert [(r["trajectory"], r["metadata"]["source"]) for r in rows] == [
        ("demo/1/epoch1", f"{first}{member}"),
        (f"demo/1/epoch1 ({second}{member})", f"{second}{member}"),
        (f"demo/1/epoch1 ({first}{member})", f"{first}{member}")]
    # one run graded by two graders keeps one name
    proc = subprocess.run([*CLI, "grade", str(first), str(first), "-o", "jsonl", "-q",
                           "--config", str(_two_graders(tmp_path))],
                          capture_output=True, text=True, timeout=120)
    names = [json.loads(x)["trajectory"] for x in proc.stdout.splitlines()]
    assert names == ["demo/1/epoch1"] * 2 + [f"demo/1/epoch1 ({first}{member})"] * 2


def _two_graders(tmp_path: Path) -> Path:
    path = tmp_path / "graders.yaml"
    path.write_text("graders:\n"
                    "  - {type: max-repeat, name: strict, config: {max: 2}}\n"
                    "  - {type: max-repeat, name: loose, config: {max: 9}}\n")
    return path


def test_unreadable_input_names_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"events": [}\n{"id": "ok", "events": []}\n')
    rows = [json.loads(x) for x in _grade(str(bad), "-o", "jsonl").stdout.splitlines()]
    assert [(r["status"], r["metadata"]["source"]) for r in rows] == [
        ("error", f"{bad}:1"), ("ok", f"{bad}:2")]
