"""Ray Data: grade a Dataset on a local Ray (num_cpus=2), and maxrepeat grade --engine ray."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import maxrepeat
from maxrepeat.cli import cli
from tests.conftest import call

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::FutureWarning", "ignore::ResourceWarning")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """One small local Ray for the module."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def _run(i: int) -> dict[str, Any]:
    return {"id": f"r{i}", "events": [call("bash", f"c{k}", {"k": 0}) for k in range(i % 4)]}


def test_grade_dataset_of_jsonl_lines(local_ray: Any, tmp_path: Path) -> None:
    """Lines of JSONL files read by read_text give the same rows as grade_record."""
    import maxrepeat.engines.ray as mray

    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(_run(i)) + "\n" for i in range(6)) + "{broken\n")
    cfg = {"max": 2, "match": "name"}
    rows = mray.grade_dataset(local_ray.data.read_text(str(path)), cfg).take_all()
    want = maxrepeat.grade_batch([json.dumps(_run(i)) for i in range(6)], cfg)
    def unsourced(row: dict[str, Any]) -> dict[str, Any]:  # a row is read from "<row>"
        return {**row, "metadata": {k: v for k, v in row["metadata"].items() if k != "source"}}

    by_id = {r["trajectory"]: unsourced(r) for r in rows}
    assert all(by_id[w["trajectory"]] == unsourced(w) for w in want)
    assert sorted(r["status"] for r in rows).count("error") == 1 and len(rows) == 7


def test_grade_dataset_of_dict_rows(local_ray: Any) -> None:
    """Rows holding a trajectory dict under a named column are graded."""
    import maxrepeat.engines.ray as mray

    ds = local_ray.data.from_items([{"traj": _run(3)}])
    config = maxrepeat.MaxRepeatConfig(2, match="name")
    rows = mray.grade_dataset(ds, config, column="traj").take_all()
    assert [(r["trajectory"], r["passed"]) for r in rows] == [("r3", False)]


def test_cli_engine_ray_matches_local(local_ray: Any, tmp_path: Path) -> None:
    """maxrepeat grade --engine ray writes what the local engine writes, in input order."""
    for i in range(5):
        (tmp_path / f"{i}.json").write_text(json.dumps(_run(i)))
    args = ["grade", str(tmp_path), "--max", "2", "--match", "name", "-o", "jsonl", "-f", "vally"]
    runner = CliRunner()
    local = runner.invoke(cli, [*args, "-j", "1"])
    remote = runner.invoke(cli, [*args, "--engine", "ray"])
    assert remote.exit_code == local.exit_code == 1
    assert remote.stdout == local.stdout


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Ray installed the error says which extra to install."""
    import maxrepeat.engines.ray as mray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(maxrepeat.MissingExtraError, match=r"pip install 'maxrepeat\[ray\]'"):
        mray.grade_dataset(None, {"max": 1})


CLI = [sys.executable, "-c", "from maxrepeat.cli import main; main()"]


def _ray_grade(path: Path, address: str, *extra: str, timeout: str = "3"
               ) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "MAXREPEAT_RAY_TIMEOUT": timeout}
    env.pop("RAY_ADDRESS", None)
    return subprocess.run([*CLI, "grade", str(path), "--max", "2", "--match", "name",
                           "--engine", "ray", "--ray-address", address, *extra],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("scheme", ["ray://", ""])
def test_unreachable_cluster_is_one_line_and_exit_2(tmp_path: Path, scheme: str) -> None:
    """A refused address and a silent one (listening, never answering) end within the
    documented timeout with one line, exit 2: no traceback, no hang in retries."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run(3)))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused_port = closed.getsockname()[1]
    closed.close()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel completes connections; nothing ever answers
    try:
        for port, why in ((refused_port, "refused"), (silent.getsockname()[1], "no answer")):
            started = time.monotonic()
            proc = _ray_grade(path, f"{scheme}127.0.0.1:{port}")
            took = time.monotonic() - started
            assert proc.returncode == 2, proc.stderr
            lines = proc.stderr.splitlines()
            assert len(lines) == 1, proc.stderr
            line = lines[0]
            assert line.startswith(f"maxrepeat: cannot connect to Ray at {scheme}127.0.0.1:")
            assert why in line.lower() and proc.stdout == ""
            assert took < 3 + 30  # the timeout, plus Python and Ray's import
    finally:
        silent.close()


def test_quiet_ray_run_prints_nothing_on_stderr(local_ray: Any, tmp_path: Path) -> None:
    """--quiet: none of Ray's log lines or progress bars; the results on stdout."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run(3)))
    address = local_ray.get_runtime_context().gcs_address
    proc = _ray_grade(path, address, "-q", "-o", "jsonl", timeout="60")
    assert proc.stderr == "" and proc.returncode == 1
    [row] = [json.loads(x) for x in proc.stdout.splitlines()]
    assert (row["trajectory"], row["passed"]) == ("r3", False)
