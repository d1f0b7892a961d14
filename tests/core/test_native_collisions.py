"""Step ids are exact by construction (issue 28, item 2): the native path numbers a key
(a tool name, a call, a step's calls) by comparing its bytes with the bytes first seen,
never by a hash alone, so two different steps never share an id, however their hashes
fall (docs/design/native.md, "Exact keys").

The proof forces collisions: the extension built with ``-DMAXREPEAT_FH_BITS=4`` cuts the
key hash to 4 bits (16 values: every trajectory with more than 16 distinct keys has equal
hashes for different keys), and that build still grades like the reference, on crafted
trajectories of many distinct steps and on the differential tests. The build goes to a
copy of src/ in a temporary folder, as scripts/sanitize.sh makes its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from maxrepeat.core import accel

ROOT = Path(__file__).resolve().parents[2]
CC = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")

needs_build = pytest.mark.skipif(
    not accel.available() or CC is None or not Path(
        sysconfig.get_paths()["include"], "Python.h").exists(),
    reason="the native extension is not built, or no C compiler / Python headers")

#: the differential tests run again against the 4-bit build (fewer examples each)
DIFFERENTIAL = ["tests/core/test_native.py", "tests/core/near/test_near_native.py",
                "tests/core/test_steps_fast.py", "tests/core/test_property_reference.py"]
#: examples per property in that run (MAXREPEAT_COLLISION_EXAMPLES=300 for a long one)
EXAMPLES = os.environ.get("MAXREPEAT_COLLISION_EXAMPLES", "10")

# Trajectories of many distinct steps, each repeated: with 16 hash values almost every
# lookup meets a key of equal hash and different bytes. Run in the 4-bit build.
PROBE = r"""
import sys
import maxrepeat
from maxrepeat.core import accel
from maxrepeat.core.fingerprints import build_step_table, build_step_table_pure
from maxrepeat.core.grade import as_trajectory
from maxrepeat.readers.vally import read_bytes_as_trajectories
import json

assert accel.native is not None and accel.native.__file__.startswith(sys.argv[1])
assert accel.native.KEY_HASH_BITS == 4, accel.native.KEY_HASH_BITS

def call(i, tool, args, out, both):
    cid = f"c{i}"
    ev = [{"type": "tool_call", "data": {"toolName": tool, "toolCallId": cid,
                                          "arguments": args}},
          {"type": "tool_result", "data": {"toolCallId": cid, "result": out}}]
    if not both:
        return ev
    return [{"type": "turn_start", "data": {}}, *ev, *both, {"type": "turn_end", "data": {}}]

def trajectory(distinct):
    events, n = [], 0
    for rep in range(3):
        for k in range(distinct):
            n += 1
            extra = []
            if k % 5 == 0:  # a two-call step: its calls' numbers make its key
                n += 1
                extra = call(n, "read", {"path": f"/f{k % 7}"}, f"line {k % 3}", [])
            # tools of one name and of several; arguments and results that differ by one
            # character; a loop (k < 4 repeated in a row) inside
            tool = ("bash", "edit", "run")[k % 3]
            events += call(n, tool, {"command": f"ls {k}", "n": k % 2}, f"out {k % 11}",
                           extra)
            if k < 4 and rep == 0:
                for again in range(3):
                    n += 1
                    events += call(n, tool, {"command": f"ls {k}", "n": k % 2},
                                   f"out {k % 11}", [])
    return {"id": "t", "events": events}

CONFIGS = [{"max": 2, "match": m} for m in ("name", "name-args", "observation")] + [
    {"max": 2, "max_cycle_period": 3, "match": "observation"},
    {"max": 2, "match": "name-args", "normalize": ["volatile"]},
    {"max": 2, "match": "name-args", "normalize": ["volatile"], "with_observation": True},
    {"max": 2, "match": "observation", "normalize": ["volatile"]},
]
checked = 0
for distinct in (40, 300):
    doc = trajectory(distinct)
    [read] = read_bytes_as_trajectories(json.dumps(doc).encode(), "t.json")
    for traj in (read, as_trajectory(doc)):
        for config in CONFIGS:
            cfg = maxrepeat.MaxRepeatConfig.from_mapping(config)
            accel.use_native(True)
            got = build_step_table(traj.events, cfg)
            result = maxrepeat.grade(traj, cfg).to_dict()
            accel.use_native(False)
            want = build_step_table_pure(traj.events, cfg)
            assert list(got.ids) == list(want.ids), (config, distinct)
            if config["match"] != "name":  # more distinct keys than hash values
                assert len(set(want.ids)) > 16, (config, distinct)
            assert result == maxrepeat.grade(traj, cfg).to_dict(), (config, distinct)
            checked += 1
print("checked", checked)
"""


@pytest.fixture(scope="module")
def collision_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of src/ whose extension is built with a 4-bit key hash."""
    work = tmp_path_factory.mktemp("fh4")
    shutil.copytree(ROOT / "src", work / "src",
                    ignore=shutil.ignore_patterns("_native*.so", "__pycache__"))
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    core = work / "src" / "maxrepeat" / "core"
    assert CC is not None
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                    "-DMAXREPEAT_FH_BITS=4", f"-I{include}",
                    # every C file of core/ is one translation unit of the extension
                    *sorted(str(c) for c in core.glob("*.c")),
                    "-o", str(core / f"_native{suffix}")], check=True, timeout=600)
    return work / "src"


def _env(src: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "MAXREPEAT_NATIVE_EXAMPLES": EXAMPLES,
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("MAXREPEAT_PURE", None)
    return env


@pytest.mark.skipif(not accel.available(), reason="the native extension is not built")
def test_the_installed_build_hashes_keys_on_64_bits() -> None:
    """The shipped build keeps the whole hash (the 4-bit one is only for this test)."""
    assert accel.native is not None and accel.native.KEY_HASH_BITS == 64


@needs_build
def test_forced_collisions_still_grade_like_the_reference(collision_build: Path) -> None:
    """With 16 hash values, trajectories of 40 and 300 distinct steps (one- and two-call
    steps, loops inside) get the reference's ids and result in every mode, exact and
    near-duplicate, read from bytes and given in memory."""
    run = subprocess.run([sys.executable, "-c", PROBE, str(collision_build)],
                         capture_output=True, text=True, timeout=600, env=_env(collision_build),
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split() == ["checked", "28"]


@needs_build
@pytest.mark.slow  # a nested pytest run (~11 CPU-s); the fast subset keeps the probe above
def test_differential_tests_pass_on_the_collision_build(collision_build: Path) -> None:
    """The native-against-pure tests pass with the 4-bit build imported."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "_hypothesis_pytestplugin", "-p",
         "no:cacheprovider", *DIFFERENTIAL],
        capture_output=True, text=True, timeout=1800, env=_env(collision_build), cwd=ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
