"""The batch engine: globs, worker processes, input order, split JSONL, progress, summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import maxrepeat
from maxrepeat.cli import cli
from maxrepeat.engines.batch import BatchGrader
from maxrepeat.engines.progress import progress_bar
from maxrepeat.engines.units import Unit, expand_inputs, plan_units
from tests.conftest import call

CFG = [maxrepeat.MaxRepeatConfig(2, match="name"), maxrepeat.MaxRepeatConfig(1, max_cycle_period=2)]


def _traj(i: int, loops: int) -> dict[str, Any]:
    events = [call("bash" if i % 2 else "read", f"c{k}", {"k": k % 2}) for k in range(loops)]
    return {"id": f"run-{i}", "events": events}


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A directory of small JSON files, a JSONL file, and one malformed file."""
    for i in range(12):
        sub = tmp_path / ("a" if i < 6 else "b")
        sub.mkdir(exist_ok=True)
        (sub / f"{i:02d}.json").write_text(json.dumps(_traj(i, i % 5)))
    lines = [json.dumps({k: v for k, v in _traj(100 + i, i % 4).items() if k != "id"})
             for i in range(40)]
    (tmp_path / "b" / "many.jsonl").write_text("\n".join(lines[:20]) + "\n\n{bad\n"
                                               + "\n".join(lines[20:]) + "\n")
    (tmp_path / "a" / "zz-broken.json").write_text('{"events": [')
    return tmp_path


def _collect(paths: list[str], jobs: int, chunk: int = 1 << 24) -> tuple[list[Any], list[str]]:
    errors: list[str] = []
    with BatchGrader(paths, CFG, fmt="vally", jobs=jobs, chunk=chunk,
                     on_error=errors.append) as batch:
        return [r.to_dict() for r in batch.results()], errors


def test_parallel_matches_sequential(tree: Path) -> None:
    """Two workers, with the JSONL split in small ranges, give the one-process results in order."""
    one = _collect([str(tree)], jobs=1)
    two = _collect([str(tree)], jobs=2, chunk=300)
    assert two == one
    assert len(one[0]) == 2 * (12 + 40 + 2) and len(one[1]) == 2


def test_split_ranges_keep_line_labels(tree: Path) -> None:
    """Records of a JSONL file cut into byte ranges keep their file:line names."""
    results, errors = _collect([str(tree / "b" / "many.jsonl")], jobs=2, chunk=100)
    labels = [r["trajectory"] for r in results[::2]]
    assert labels[:2] == [f"{tree}/b/many.jsonl:1", f"{tree}/b/many.jsonl:2"]
    assert errors[0].startswith(f"{tree}/b/many.jsonl:22:")
    assert labels[-1] == f"{tree}/b/many.jsonl:42"


def test_ranges_cover_file_at_line_starts(tree: Path) -> None:
    """Planned byte ranges tile the file and each starts where a line starts."""
    path = tree / "b" / "many.jsonl"
    data = path.read_bytes()
    units = list(plan_units([str(path)], chunk=250))
    assert len(units) > 3 and units[0].start == 0 and units[-1].end == len(data)
    for a, b in zip(units, units[1:], strict=False):
        assert a.end == b.start and data[b.start - 1:b.start] == b"\n"
        assert b.first_line == data[:b.start].count(b"\n") + 1


def test_small_files_are_grouped(tree: Path) -> None:
    """Small files travel to a worker together, in order."""
    units = list(plan_units(expand_inputs([str(tree / "a")])))
    assert units == [Unit(tuple(sorted(str(p) for p in (tree / "a").iterdir())))]


def test_quoted_glob_is_expanded(tree: Path) -> None:
    """A glob the shell did not expand ('**' included) is expanded, sorted."""
    found = expand_inputs([f"{tree}/**/*.jsonl", f"{tree}/a/0[01].json"])
    assert found == [f"{tree}/b/many.jsonl", f"{tree}/a/00.json", f"{tree}/a/01.json"]


def test_unmatched_glob_is_reported(tmp_path: Path) -> None:
    """A glob that matches nothing is an unreadable input, graded as an error."""
    results, errors = _collect([f"{tmp_path}/nothing-*.json"], jobs=2)
    assert [r["status"] for r in results] == ["error", "error"] and "cannot read" in errors[0]


def test_early_close_stops_the_pool(tree: Path) -> None:
    """Leaving the loop early (as on Ctrl-C) shuts the workers down."""
    batch = BatchGrader([str(tree)], CFG, fmt="vally", jobs=2, chunk=100, window=2)
    for _ in batch.results():
        break
    batch.close(kill=True)
    assert batch._pool is None


def test_cli_jobs_output_identical(tree: Path) -> None:
    """maxrepeat grade -j 2 writes exactly what -j 1 writes, and the same exit code."""
    runner = CliRunner()
    args = ["grade", str(tree), "-f", "vally", "--max", "2", "--match", "name", "-o", "jsonl"]
    one = runner.invoke(cli, [*args, "-j", "1"])
    two = runner.invoke(cli, [*args, "-j", "2"])
    assert one.exit_code == two.exit_code == 2
    assert one.stdout == two.stdout and one.stdout.count("\n") == 54


def test_cli_summary_counts(tree: Path) -> None:
    """The summary names trajectories, passed, failed, errors, figures and failing tools."""
    res = CliRunner().invoke(cli, ["grade", str(tree / "a"), "-f", "vally", "--max", "2",
                                   "--match", "name", "-o", "jsonl", "-j", "2"])
    lines = res.stderr.splitlines()
    assert "7 trajectories, 7 results: 4 passed, 2 failed, 1 error" in lines
    assert any(line.startswith("largest repeat per result") for line in lines)
    assert "tools in failing patterns: bash (1), read (1)" in lines


def test_progress_bar_off_when_disabled() -> None:
    """Without a terminal (or with --quiet) there is no bar and no callback."""
    with progress_bar(False) as on_unit:
        assert on_unit is None


def test_bar_on_terminal_leaves_redirected_stdout_alone(tree: Path) -> None:
    """With standard error a terminal (the bar shows), results still go to standard output."""
    import os
    import subprocess
    import sys

    primary, secondary = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from maxrepeat.cli import main; main()", "grade",
             str(tree / "a"), str(tree / "b"), "-f", "vally", "--max", "2", "-o", "jsonl",
             "-j", "2"],
            stdout=subprocess.PIPE, stderr=secondary, timeout=120, check=False)
    finally:
        os.close(secondary)
        os.close(primary)
    assert proc.stdout.decode().count("\n") == 54


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_counts_bytes_and_trajectories_not_units(tree: Path, jobs: int) -> None:
    """The bar is told bytes of input graded of the total, and trajectories read; a large
    JSONL file cut into byte ranges still adds up to its size."""
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    seen: list[tuple[int, int, int]] = []
    batch = BatchGrader([str(tree)], CFG, fmt="vally", jobs=jobs, chunk=400,
                        on_unit=lambda *a: seen.append(a))
    graded = list(batch.graded())
    total = sum(p.stat().st_size for p in files)
    assert all(t == total for _, t, _ in seen) and seen[-1][0] == total
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)
    assert seen[-1][2] == len(graded) == 12 + 41 + 1  # files, JSONL lines (one bad), broken
    assert len(seen) > len(files)  # the JSONL file was cut, yet nothing says "units"


def test_progress_bar_shows_bytes_and_trajectories() -> None:
    from rich.console import Console

    from maxrepeat.engines.progress import _Bar

    bar = _Bar()
    bar(3 * 1024 * 1024, 10 * 1024 * 1024, 1234)
    console = Console(record=True, width=120)
    console.print(bar.progress.make_tasks_table(bar.progress.tasks))
    text = console.export_text()
    assert "1,234 trajectories" in text and "3.1/10.5 MB" in text and "unit" not in text
