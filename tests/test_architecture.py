"""The house rules that code review forgets: a pure core, one public namespace."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import maxrepeat

PKG = Path(maxrepeat.__file__).parent

#: the functional core: no I/O, no CLI/terminal/YAML/engine library, no adapter imports
CORE = {"_canonical", "_config", "_errors", "_grade", "_model", "_monitor", "_patterns",
        "_preview", "_regex", "_result", "_schema", "_steps", "_summary"}
#: adapters at the edge (they may do I/O and import libraries)
ADAPTERS = {"__init__", "_configfile", "_evalspec", "_batch", "_streaming", "cli", "hook",
            "inspect", "ray", "records", "__main__", "_sigint"}

FORBIDDEN_MODULES = {"os", "sys", "io", "pathlib", "tempfile", "shutil", "subprocess", "socket",
                     "click", "rich", "yaml", "ray", "inspect_ai", "ijson", "zipfile", "gzip",
                     "multiprocessing", "concurrent", "logging"}
FORBIDDEN_RELATIVE = {"readers", "reporters", "cli", "_configfile", "_batch", "_evalspec",
                      "hook", "inspect", "ray"}
FORBIDDEN_CALLS = {"open", "print", "input"}


def _top_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(PKG)]) if not m.ispkg)


def test_every_top_module_is_classified() -> None:
    """Each top-level module is declared core or adapter (a new one forces a decision)."""
    assert set(_top_modules()) <= CORE | ADAPTERS, set(_top_modules()) - CORE - ADAPTERS


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


def test_core_does_no_io_and_imports_no_adapter() -> None:
    """Core modules import no I/O, CLI, terminal, YAML or engine library, nor any adapter."""
    bad: list[str] = []
    for name in sorted(CORE & set(_top_modules())):
        tree = ast.parse((PKG / f"{name}.py").read_text(encoding="utf-8"))
        for level, mod in _imports(tree):
            head = mod.split(".")[0]
            if level == 0 and (head in FORBIDDEN_MODULES or mod.startswith("maxrepeat.")):
                bad.append(f"{name}: import {mod}")
            if level == 1 and head in FORBIDDEN_RELATIVE:
                bad.append(f"{name}: from .{mod}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in FORBIDDEN_CALLS:
                bad.append(f"{name}:{node.lineno}: {node.func.id}()")
    assert bad == []


def test_importing_the_package_loads_no_cli_or_terminal_library() -> None:
    """`import maxrepeat` pulls in neither click nor rich (library users pay for neither)."""
    import subprocess
    import sys

    code = ("import sys, maxrepeat; "
            "print(','.join(m for m in ('click', 'rich', 'ray', 'inspect_ai') if m in sys.modules))")
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
    from maxrepeat.readers import _MODULES
    from maxrepeat.reporters import OUTPUTS

    for module in [*_MODULES.values(), *OUTPUTS.values()]:
        importlib.import_module(module)


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
