"""Formats and outputs register themselves: the registries are derived from the modules
that declare a `Reader` or a `Reporter`, and another package adds one through the
``maxrepeat.readers`` / ``maxrepeat.reporters`` entry-point groups, without a fork.

The third-party package here is real: a module and its ``.dist-info`` (``METADATA`` and
``entry_points.txt``, what pip writes) in a temporary folder on ``PYTHONPATH``, found by
``importlib.metadata`` as an installed distribution is.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maxrepeat import reporters
from maxrepeat.readers import registry
from maxrepeat.readers._declared import reader_fields
from maxrepeat.reporters.base import Reporter

_PLUGIN = '''
"""A third party's format (lines ``CALL tool argument``) and output (tab-separated)."""
from maxrepeat.core.events import trajectory_from_dict
from maxrepeat.readers import Reader
from maxrepeat.reporters.base import LineReporter


def _sniff(head, source):
    return 70 if head.startswith(b"CALL ") else 0


def _read(source):
    events = []
    for i, line in enumerate(source.read_bytes().decode().splitlines()):
        _, tool, arg = line.split(" ", 2)
        events.append({"type": "tool_call", "data": {
            "toolName": tool, "toolCallId": f"c{i}", "arguments": {"arg": arg}}})
    yield trajectory_from_dict({"id": "demo-run", "events": events}, source=source.name)


READER = Reader(name="demo-lines", description="CALL lines of the demo tool",
                extensions=(".demo",), markers=(b"CALL ",), top=70, sniff=_sniff, read=_read)


class TsvReporter(LineReporter):
    name = "tsv"
    suffixes = (".tsv",)
    help = "a tab-separated line per result"

    def line(self, result):
        return f"{result.trajectory}\\t{result.name}\\t{result.passed}\\n"

    def footer(self, summary):
        return f"total\\t{summary.total}\\n"
'''

_ENTRY_POINTS = """
[maxrepeat.readers]
demo-lines = mr_demo_plugin:READER

[maxrepeat.reporters]
tsv = mr_demo_plugin:TsvReporter
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "mr_demo_plugin.py").write_text(_PLUGIN)
    info = root / "mr_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mr-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(_ENTRY_POINTS)
    return root


def _maxrepeat(plugin_path: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if plugin_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(plugin_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "maxrepeat", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def _demo_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.demo"
    path.write_text("CALL ls /tmp\nCALL ls /tmp\nCALL ls /tmp\n")
    return path


def test_a_third_party_format_and_output_are_used_by_grade(
        plugin_path: Path, tmp_path: Path) -> None:
    path = _demo_file(tmp_path)
    # detected (no built-in reader knows these lines) and forced by name
    for fmt in ("auto", "demo-lines"):
        proc = _maxrepeat(plugin_path, "grade", str(path), "--format", fmt, "--max", "2",
                          "--match", "name-args", "-o", "tsv", "-q")
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout == "demo-run\tmax-repeat(max=2, match=name-args)\tFalse\ntotal\t1\n", fmt
    # a report file's ending picks the plug-in's output
    report = tmp_path / "report.tsv"
    proc = _maxrepeat(plugin_path, "grade", str(path), "--max", "3", "--output-file",
                      str(report), "-q")
    assert proc.returncode == 0, proc.stderr
    assert report.read_text() == "demo-run\tmax-repeat(max=3)\tTrue\ntotal\t1\n"
    # listed where the built-in ones are
    listed = _maxrepeat(plugin_path, "formats").stdout.splitlines()
    assert listed[-1].split() == ["demo-lines", "CALL", "lines", "of", "the", "demo", "tool"]
    helptext = " ".join(_maxrepeat(plugin_path, "grade", "--help").stdout.split())
    assert "tsv (a tab-separated line per result)" in helptext
    assert ".htm html, .tsv; other endings" in helptext


def test_without_the_plugin_its_names_are_refused_as_before(tmp_path: Path) -> None:
    path = _demo_file(tmp_path)
    proc = _maxrepeat(None, "grade", str(path), "--format", "demo-lines", "--max", "2")
    assert proc.returncode == 2
    assert "--input-format must be one of auto, vally, atif," in proc.stderr
    proc = _maxrepeat(None, "grade", str(path), "--max", "2", "-o", "tsv")
    assert proc.returncode == 2
    assert ("--output-format must be one of console, json, jsonl, junit, markdown, html "
            "(got tsv)") in proc.stderr
    proc = _maxrepeat(None, "grade", str(path), "--max", "2", "-q", "-o", "jsonl")
    assert proc.returncode == 2
    assert "cannot tell the format: a shape no reader knows" in proc.stdout + proc.stderr


_METADATA_READ = """
import sys, json
from maxrepeat.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
from maxrepeat.readers import registry
from maxrepeat.readers._declared import reader_fields
from maxrepeat import reporters
print(json.dumps([registry._plugins.cache_info().currsize,
                  reporters._plugins.cache_info().currsize]))
"""


def test_built_in_formats_and_outputs_never_read_package_metadata(
        plugin_path: Path, tmp_path: Path) -> None:
    """A native file, detected and reported by built-ins, reads no entry points (the cost
    of scanning every installed distribution stays out of start-up)."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"id": "r", "events": [
        {"type": "tool_call", "data": {"toolName": "ls", "toolCallId": "c", "arguments": {}}}]}))
    env = {**os.environ, "PYTHONPATH": str(plugin_path)}
    for args in (["--max", "2", "-q"], ["--max", "2", "-q", "--format", "vally",
                                        "--output-file", str(tmp_path / "out.json")]):
        proc = subprocess.run([sys.executable, "-c", _METADATA_READ, "-", "grade", str(path),
                               *args], capture_output=True, text=True, env=env, timeout=120)
        assert proc.stdout.splitlines()[-1] == "[0, 0]", proc.stderr


def test_every_reader_module_declares_what_the_registry_reads_from_its_source() -> None:
    """The registry's table (read from the sources, nothing imported) is each module's
    `Reader`, and every module of the package that declares one is in it."""
    table = registry._table()
    for entry in table:
        reader = importlib.import_module(entry.module).READER
        assert (reader.name, reader.order, reader.top, reader.markers) == (
            entry.name, entry.order, entry.top, entry.markers), entry.module
    here = Path(registry.__file__).parent
    declaring = {f"maxrepeat.readers.{p.stem}" for p in here.glob("*.py")
                 if "\nREADER" in p.read_text()}
    assert {e.module for e in table} == declaring
    assert len({e.order for e in table}) == len(table)  # ties are never left to chance


def test_every_reporter_module_declares_what_the_registry_reads_from_its_source() -> None:
    for order, name, suffixes in reporters._table():
        cls = reporters.reporter_class(name)
        assert issubclass(cls, Reporter)
        assert (cls.order, cls.name, cls.suffixes) == (order, name, suffixes)
        assert cls.help, name
    every = [s for _, _, suffixes in reporters._table() for s in suffixes]
    assert len(every) == len(set(every))  # one output per file ending


def test_the_static_read_refuses_what_it_cannot_take() -> None:
    """A declaration the source reader cannot take (not a literal, no name) is a
    `ValueError`, on which the registry imports the module instead (`_declared`)."""
    text = textwrap.dedent("""
        READER = Reader(
            name=make_name(),
            sniff=_sniff,
        )
        """).encode()
    with pytest.raises(ValueError):
        reader_fields(text)
    with pytest.raises(ValueError):  # no name: not taken for a format with defaults
        reader_fields(b"\nREADER = Reader(\n    top=90,\n)\n")
    assert reader_fields(b"x = 1\n") is None
