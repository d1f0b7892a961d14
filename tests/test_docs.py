"""The documentation runs: README code blocks and every docstring example of the package."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import maxrepeat

from .conftest import ROOT

README = ROOT / "README.md"
#: a fenced block: ```python (run as a script) or ```pycon (run as a doctest session)
_FENCE = re.compile(r"^```(python|pycon)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _modules() -> list[str]:
    found = ["maxrepeat"]
    for info in pkgutil.walk_packages(maxrepeat.__path__, prefix="maxrepeat."):
        found.append(info.name)
    return sorted(found)


def _readme_blocks() -> list[tuple[str, str, int]]:
    text = README.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in _FENCE.finditer(text)]


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


def test_readme_has_runnable_examples() -> None:
    """The README shows Python examples (so the test below checks something)."""
    assert any(kind == "python" for kind, _, _ in _readme_blocks())


@pytest.mark.parametrize("kind, code, line", _readme_blocks(),
                         ids=[f"README.md:{line}" for _, _, line in _readme_blocks()])
def test_readme_example_runs(kind: str, code: str, line: int,
                             monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """A README code block runs from the repository root without error."""
    monkeypatch.chdir(ROOT)
    if kind == "pycon":
        parser = doctest.DocTestParser()
        test = parser.get_doctest(code, {}, f"README.md:{line}", str(README), line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.failures == 0, capsys.readouterr().out
    else:
        exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
