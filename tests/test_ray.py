"""Ray Data: grade a Dataset on a local Ray (num_cpus=2), and maxrepeat grade --engine ray."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import maxrepeat
from maxrepeat.cli import cli

from .conftest import call

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
    rows = mray.grade_dataset(ds, maxrepeat.MaxRepeatConfig(2, match="name"), column="traj").take_all()
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
