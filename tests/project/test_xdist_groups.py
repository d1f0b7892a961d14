"""Under scripts/test.sh's pytest-xdist run (``-p xdist.plugin -n 2 --dist loadgroup``,
plug-in autoloading off), the tests of a module that share a module-scoped fixture run on
one worker, which makes the fixture once; tests that name an ``xdist_group`` of their own
share a worker too (tests/conftest.py). Neither held before: the conftest looked for the
plug-in under a name ``-p xdist.plugin`` does not give it, and pytest 9.2 reads no more the
id pytest-xdist rewrites; each worker made every such fixture again (an agent's sessions,
a server, a campaign)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the suite's own hooks (tests/conftest.py), in a conftest of the temporary folder
_CONFTEST = ("import tests.conftest as suite\n"
             "globals().update({k: getattr(suite, k) for k in dir(suite) "
             "if k.startswith('pytest_')})\n")

_MODULE = '''
import os
import pytest

MADE = os.environ["GROUPS_OUT"]


def _note(what):
    with open(MADE, "a") as f:
        f.write(f"{what} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n")


@pytest.fixture(scope="module")
def shared():
    _note("made")
    return 1


@pytest.mark.parametrize("n", range(6))
def test_shares(shared, n):
    _note(f"shares{n}")


@pytest.mark.parametrize("n", range(3))
@pytest.mark.xdist_group("pair")
def test_named_group(n):
    _note(f"pair{n}")


@pytest.mark.parametrize("n", range(8))
def test_alone(n):
    _note(f"alone{n}")
'''


def test_a_shared_fixture_is_made_once_and_named_groups_share_a_worker(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(_CONFTEST)
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent(_MODULE))
    out = tmp_path / "made.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GROUPS_OUT": str(out),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-n", "2", "--dist",
         "loadgroup", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path),
         "-c", os.devnull, str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    lines = [line.split() for line in out.read_text().splitlines()]
    made = [worker for what, worker in lines if what == "made"]
    assert len(made) == 1, lines  # one worker made the fixture, once
    assert {w for what, w in lines if what.startswith("shares")} == set(made), lines
    assert len({w for what, w in lines if what.startswith("pair")}) == 1, lines
    assert len(lines) == 1 + 6 + 3 + 8
