"""The house rules that code review forgets: a pure core, one public namespace."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import maxrepeat

PKG = Path(maxrepeat.__file__).parent

#: the layers, bottom up: a folder may import only from the folders listed for it (and
#: itself). The top-level package module (``__init__``) only re-exports lazily.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "specs": {"core"},
    "readers": {"core"},
    "reporters": {"core"},
    "engines": {"core", "specs", "readers", "reporters"},
    "guards": {"core", "specs", "readers", "reporters", "engines"},
    # platform scorers sit beside the guards: nothing imports them
    "scorers": {"core", "specs", "readers", "reporters", "engines"},
    "cli": {"core", "specs", "readers", "reporters", "engines", "guards"},
}

#: libraries the pure core never imports: I/O, CLI, terminal, YAML, engines, frameworks
FORBIDDEN_MODULES = {"os", "sys", "io", "pathlib", "tempfile", "shutil", "subprocess", "socket",
                     "click", "rich", "yaml", "ray", "inspect_ai", "ijson", "zipfile", "gzip",
                     "multiprocessing", "concurrent", "logging"}
FORBIDDEN_CALLS = {"open", "print", "input"}


def _modules() -> list[tuple[str, Path]]:
    """(dotted name relative to the package, file) of every module of the package."""
    out = []
    for file in sorted(PKG.rglob("*.py")):
        rel = file.relative_to(PKG).with_suffix("")
        parts = list(rel.parts)
        out.append((".".join(parts), file))
    return out


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or ""))
            if node.level and not node.module:
                out += [(node.level, a.name) for a in node.names]
    return out


def _absolute(module: str, level: int, name: str) -> str:
    """The dotted name (relative to the package) that ``from <level dots><name>`` means."""
    base = module.split(".")[:-1]  # the module's package ("__init__" counts as a module)
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _internal_targets(module: str, tree: ast.AST) -> list[str]:
    targets = []
    for level, name in _imports(tree):
        if level:
            targets.append(_absolute(module, level, name))
        elif name == "maxrepeat" or name.startswith("maxrepeat."):
            targets.append(name.removeprefix("maxrepeat").lstrip("."))
    return targets


def test_every_module_lives_in_a_layer_folder() -> None:
    """The package root holds only the public namespace; every other module is in a layer
    folder (a new folder forces a decision here)."""
    stray = [m for m, _ in _modules() if "." not in m and m not in {"__init__", "__main__"}]
    assert stray == []
    folders = {m.split(".")[0] for m, _ in _modules() if "." in m}
    assert folders <= set(ALLOWED), folders - set(ALLOWED)


def test_layers_import_only_downwards() -> None:
    """core imports nothing outside core; specs, readers and reporters only core; engines no
    guard or CLI; guards never the CLI."""
    bad: list[str] = []
    for module, file in _modules():
        layer = module.split(".")[0]
        if layer not in ALLOWED:
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for target in _internal_targets(module, tree):
            head = target.split(".")[0]
            if head == "" or target == "__version__":
                # the package namespace itself: only __version__ may be taken from it
                continue
            if head != layer and head not in ALLOWED[layer]:
                bad.append(f"{module}: imports {target}")
    assert bad == []


def test_core_does_no_io_and_imports_no_adapter_library() -> None:
    """Core modules import no I/O, CLI, terminal, YAML or engine library, and call no
    open(), print() or input()."""
    bad: list[str] = []
    for module, file in _modules():
        if not module.startswith("core."):
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for level, mod in _imports(tree):
            if level == 0 and mod.split(".")[0] in FORBIDDEN_MODULES:
                bad.append(f"{module}: import {mod}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in FORBIDDEN_CALLS:
                bad.append(f"{module}:{node.lineno}: {node.func.id}()")
    assert bad == []


def test_the_architecture_test_sees_a_violation(tmp_path: Path) -> None:
    """The import resolver is not vacuous: a guard importing the CLI is reported."""
    tree = ast.parse("from ..cli.options import grader_options\nfrom ..core import errors\n")
    assert _internal_targets("guards.example", tree) == ["cli.options", "core"]


def test_importing_the_package_loads_no_cli_or_terminal_library() -> None:
    """`import maxrepeat` pulls in neither click nor rich (library users pay for neither)."""
    import subprocess
    import sys

    code = ("import sys, maxrepeat; "
            "print(','.join(m for m in ('click', 'rich', 'ray', 'inspect_ai') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_names_resolve() -> None:
    """Every name in maxrepeat.__all__ exists, and has a docstring."""
    missing = [n for n in maxrepeat.__all__ if not hasattr(maxrepeat, n)]
    assert missing == []
    undocumented = [n for n in maxrepeat.__all__ if n != "__version__"
                    and not (getattr(maxrepeat, n).__doc__ or "").strip()]
    assert undocumented == []


def test_py_typed_is_shipped() -> None:
    """The package ships its type information."""
    assert (PKG / "py.typed").exists()


def test_readers_and_reporters_import() -> None:
    """Every registered reader and reporter module imports."""
    from maxrepeat.readers.registry import reader_modules
    from maxrepeat.reporters import OUTPUTS

    for module in [*reader_modules().values(), *OUTPUTS.values()]:
        importlib.import_module(module)


def test_every_output_is_a_reporter() -> None:
    """Every output format is one `Reporter` class (the grade command special-cases none)."""
    from maxrepeat.reporters import OUTPUTS, get_reporter
    from maxrepeat.reporters.base import Reporter

    for name, module in OUTPUTS.items():
        cls = importlib.import_module(module).REPORTER
        assert issubclass(cls, Reporter), name
        assert isinstance(get_reporter(name), cls)


@pytest.mark.slow  # ~1-2 CPU-minutes; the fast loop runs mypy itself (CONTRIBUTING.md)
def test_package_is_mypy_strict_clean(tmp_path: Path) -> None:
    """`mypy --strict` (the [tool.mypy] settings) finds nothing in src/maxrepeat."""
    import subprocess
    import sys

    root = PKG.parent.parent
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=root, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
