"""What ``maxrepeat grade`` of one small native file imports (issue 17: start-up).

Start-up time itself is measured by ``bench/run.py --only startup`` and never asserted
here (a loaded machine would make such a test flaky). What is pinned is the cause: the
modules a plain grade must not import, because only other paths need them (other
readers, YAML, rich, ijson, the streaming reader, the ``tools`` regex translator, the
near-duplicate normalizers, OpenSSL's hashlib).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_REPORT = """
import sys
from maxrepeat.cli import main
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
"""

#: imported only by the paths that need them
_NOT_ON_THE_GRADE_PATH = (
    "yaml", "rich", "ijson", "re2", "hashlib", "_hashlib", "tempfile", "zipfile",
    "concurrent.futures.process", "maxrepeat.core.toolmatch", "maxrepeat.core.neardup",
    "maxrepeat.core.monitor", "maxrepeat.readers._vally_stream", "maxrepeat.specs.configfile",
    "maxrepeat.specs.evalspec", "maxrepeat.guards",
)


def _imported(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", _REPORT, str(out), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return set(out.read_text().split("\n"))


def _native_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    events = [{"type": "tool_call", "data": {"toolName": "ls", "toolCallId": f"c{i}",
                                             "arguments": {"path": "."}}} for i in range(5)]
    path.write_text(json.dumps({"id": "r", "events": events}))
    return path


def test_grading_one_native_file_imports_one_reader_and_nothing_it_does_not_use(
        tmp_path: Path) -> None:
    path = _native_file(tmp_path)
    for args in (["--max", "3", "-o", "jsonl", "-q"], ["--max", "3"],
                 ["--max", "3", "--output", "jsonl", "--quiet"]):
        mods = _imported(tmp_path, "grade", str(path), *args)
        # click's parser tries a short option (-q) as a long one first and, failing,
        # looks for close matches with difflib: only short options may cost that import
        assert "-q" in args or "difflib" not in mods, args
        readers = sorted(m for m in mods if m.startswith("maxrepeat.readers.")
                         and not m.rsplit(".", 1)[1].startswith("_"))
        assert readers == ["maxrepeat.readers.vally"], args
        assert not [m for m in _NOT_ON_THE_GRADE_PATH if m in mods], args


def test_the_paths_that_need_them_still_import_them(tmp_path: Path) -> None:
    """The lazy imports are reached: ``--tools`` compiles patterns, ``normalize`` builds
    the normalizers (through a config file, so YAML is read too)."""
    path = _native_file(tmp_path)
    mods = _imported(tmp_path, "grade", str(path), "--max", "3", "--tools", "^l", "-q")
    assert "maxrepeat.core.toolmatch" in mods
    config = tmp_path / "graders.yaml"
    config.write_text("graders:\n  - type: max-repeat\n    config:\n      max: 3\n"
                      "      normalize: [numbers]\n")
    mods = _imported(tmp_path, "grade", str(path), "--config", str(config), "-q")
    assert {"maxrepeat.core.neardup", "maxrepeat.specs.configfile"} <= mods


_GC_STATES = """
import gc, sys
import maxrepeat.cli
states = {"after import": gc.isenabled()}
from maxrepeat.engines import batch
graded = batch.BatchGrader.graded
def watched(self):
    states["while grading"] = gc.isenabled()
    return graded(self)
batch.BatchGrader.graded = watched
try:
    maxrepeat.cli.main(["grade", sys.argv[1], "--max", "3", "-q"])
except SystemExit:
    states["after main"] = gc.isenabled()
print(states)
"""


def test_the_collector_is_paused_only_while_the_command_starts(tmp_path: Path) -> None:
    """cli/_gc.py: off while click and the command's modules are imported, on again for
    the work, for an importer of maxrepeat.cli and after main()."""
    proc = subprocess.run([sys.executable, "-c", _GC_STATES, str(_native_file(tmp_path))],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == (
        "{'after import': True, 'while grading': True, 'after main': True}"), proc.stderr
