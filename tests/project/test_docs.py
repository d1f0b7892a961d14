"""The documentation runs: the code blocks of README.md and of every docs/ page, and every
docstring example of the package."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import shlex
import subprocess
import sys

import pytest

import maxrepeat
from tests.conftest import ROOT

README = ROOT / "README.md"
#: README.md and the pages of the documentation site
DOCUMENTS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
#: a fenced block: ```python (run as a script) or ```pycon (run as a doctest session);
#: ```py only shows code (one that needs a cluster, say)
_FENCE = re.compile(r"^```(python|pycon)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _modules() -> list[str]:
    found = ["maxrepeat"]
    for info in pkgutil.walk_packages(maxrepeat.__path__, prefix="maxrepeat."):
        found.append(info.name)
    return sorted(found)


def _blocks() -> list[tuple[str, str, str]]:
    """(kind, code, "file:line") of every runnable block of the documents."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        where = document.relative_to(ROOT).as_posix()
        found += [(m.group(1), m.group(2), f"{where}:{text.count(chr(10), 0, m.start()) + 1}")
                  for m in _FENCE.finditer(text)]
    return found


BLOCKS = _blocks()


def test_every_public_symbol_has_a_runnable_example() -> None:
    """Each name of maxrepeat.__all__ carries a >>> example in its docstring."""
    missing = [n for n in maxrepeat.__all__ if n != "__version__"
               and ">>>" not in (getattr(maxrepeat, n).__doc__ or "")]
    assert missing == []


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every docstring example of the module gives the output it shows (run from the
    repository root, so examples may read examples/)."""
    monkeypatch.chdir(ROOT)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("maxrepeat"):
            pytest.skip(f"{name} needs {exc.name} (an optional extra)")
        raise
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, _ = doctest.testmod(module, optionflags=flags, report=True)
    assert failed == 0


def test_docs_have_runnable_examples() -> None:
    """The README and the docs show Python examples (so the test below checks something)."""
    assert {where.split(":")[0] for kind, _, where in BLOCKS if kind == "python"} >= {
        "README.md", "docs/getting-started.md", "docs/integrations/monitor.md"}


@pytest.mark.parametrize("kind, code, where", BLOCKS, ids=[w for _, _, w in BLOCKS])
def test_doc_example_runs(kind: str, code: str, where: str, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    """A code block of the README or a docs page runs from the repository root."""
    monkeypatch.chdir(ROOT)
    if kind == "pycon":
        parser = doctest.DocTestParser()
        test = parser.get_doctest(code, {}, where, where.split(":")[0], 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.failures == 0, capsys.readouterr().out
    else:
        exec(compile(code, where, "exec"), {"__name__": "__docs__"})


#: a ```console block: `$ maxrepeat ...` lines, each followed by what it prints
_CONSOLE = re.compile(r"^```console[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _sessions() -> list[tuple[str, str, str]]:
    """(command, expected output, "file:line") of every console example."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        where = document.relative_to(ROOT).as_posix()
        for m in _CONSOLE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            for part in re.split(r"^(?=\$ )", m.group(1), flags=re.MULTILINE):
                if part.startswith("$ maxrepeat "):
                    command, _, output = part.partition("\n")
                    found.append((command[2:], output, f"{where}:{line}"))
    return found


SESSIONS = _sessions()


@pytest.mark.parametrize("command, expected, where", SESSIONS,
                         ids=[f"{w} {c[:40]}" for c, _, w in SESSIONS])
def test_console_example_prints_what_it_shows(command: str, expected: str,
                                              where: str) -> None:
    """A `$ maxrepeat ...` example, run from the repository root as a separate process
    (with `-o console`, the default on a terminal), prints exactly the lines shown: those
    starting `maxrepeat:` on standard error, the rest on standard output."""
    args = shlex.split(command)[1:]
    if not {"-o", "--output"} & set(args):
        args += ["-o", "console"]
    run = subprocess.run([sys.executable, "-c", "from maxrepeat.cli import main; main()",
                          *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=False)
    lines = expected.rstrip("\n").split("\n")
    shown_err = [x for x in lines if x.startswith("maxrepeat:")]
    shown_out = [x for x in lines if not x.startswith("maxrepeat:")]
    assert run.stdout.rstrip("\n").split("\n") == shown_out, where
    assert [x for x in run.stderr.splitlines() if x] == shown_err, where


def test_console_examples_exist() -> None:
    """The README and the docs show console sessions (so the test above checks something)."""
    assert {where.split(":")[0] for _, _, where in SESSIONS} >= {
        "README.md", "docs/getting-started.md"}
