"""Packaging: the project builds without a warning (an SPDX licence string and its file),
and the package is mypy --strict clean without the optional extras as well as with them
(tests/project/test_architecture.py checks the latter in the full test environment)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: extras the test environment itself needs (mypy and the stubs; the docs builder)
TOOL_EXTRAS = ("test", "docs")


def _extra_modules() -> list[str]:
    """The top-level modules of every optional extra's distributions (those installed
    here), plus the frameworks' own core packages the guards import."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    names = {re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0].lower().replace("_", "-")
             for extra, reqs in extras.items() if extra not in TOOL_EXTRAS for req in reqs}
    found = {module for module, dists in importlib.metadata.packages_distributions().items()
             if any(d.lower().replace("_", "-") in names for d in dists)}
    return sorted(found | {"inspect_ai", "ray", "langchain", "langchain_core", "langgraph",
                           "agents", "pydantic_ai", "smolagents"})


EXTRA_MODULES = _extra_modules()


def _quiet_env() -> dict[str, str]:
    """The environment without the machine's pip settings (they print notes of their own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def _build_wheel(tmp: Path, env: dict[str, str], *skip: str) -> tuple[str, Path]:
    """pip's wheel of a copy of the sources in ``tmp`` (``skip``: patterns of more files
    to leave out of the copy), built under ``env``: pip's output, and the wheel."""
    pytest.importorskip("setuptools", minversion="77",
                        reason="the test extra installs setuptools>=77")
    tree = tmp / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src",
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", *skip))
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(tmp / "dist"), str(tree)],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    [wheel] = (tmp / "dist").glob("maxrepeat-*.whl")
    return output, wheel


@pytest.mark.slow  # builds a wheel: ~12 CPU-seconds
def test_wheel_builds_without_warnings(tmp_path: Path) -> None:
    """Building the wheel prints no warning, and it carries the licence (SPDX ``MIT`` and
    the LICENSE file)."""
    output, wheel = _build_wheel(tmp_path, _quiet_env())
    assert "warning" not in output.lower(), output
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode()
    assert "License-Expression: MIT" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    # what an index shows (issue 29): where the project lives, the Pythons it supports,
    # and a description whose links all work outside the repository
    assert "Project-URL: Documentation, https://" in text and "Project-URL: Source, " in text
    for version in ("3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in text
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links and all(re.match(r"https://", link) for link in links), links
    # the built module, not the sources it was built from
    assert not [n for n in names if n.endswith((".c", ".h"))], names
    # the optional native fast path is built where a C compiler exists, with its stub
    assert "maxrepeat/core/_native.pyi" in names, names
    if shutil.which("cc") or shutil.which("gcc"):
        assert any(n.startswith("maxrepeat/core/_native.") and n.endswith(".so")
                   for n in names), names


@pytest.mark.slow  # a fresh virtual environment and a pip install: ~40 s of waiting
def test_installs_without_a_compiler(tmp_path: Path) -> None:
    """Where the extension cannot be built (no C compiler: CC names a missing one) the
    wheel still builds, without it, and the pure-Python path is what runs."""
    _, wheel = _build_wheel(tmp_path, {**_quiet_env(), "CC": str(tmp_path / "no-such-compiler")},
                            "*.so")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "maxrepeat/core/accel.py" in names
    assert not any(n.endswith(".so") for n in names), names


@pytest.mark.slow
def test_mypy_strict_clean_without_the_extras(tmp_path: Path) -> None:
    """mypy --strict passes when none of the optional extras is installed: it runs against
    an interpreter whose site-packages hold everything of this one except the extras."""
    pytest.importorskip("mypy")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    target = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    source = Path(sysconfig.get_paths()["purelib"])
    hidden = {m.lower() for m in EXTRA_MODULES}
    for entry in source.iterdir():
        top = entry.name.split(".", 1)[0].split("-", 1)[0].lower()
        if top in hidden:
            continue
        link = target / entry.name
        if not link.exists():
            link.symlink_to(entry)
    check = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print([m for m in "
         f"{list(EXTRA_MODULES)!r} if u.find_spec(m)])"],
        capture_output=True, text=True, check=True, timeout=60)
    assert check.stdout.strip() == "[]", check.stdout
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-executable", str(python), "--cache-dir",
         str(tmp_path / "mypy-cache")], cwd=ROOT, capture_output=True, text=True,
        timeout=900, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_sdist_holds_the_sources_and_no_tests_it_could_not_run(tmp_path: Path) -> None:
    """The sdist builds the wheel (C sources included) and runs the README's example
    (examples/), but leaves the test suite out: it needs the repository's fixtures."""
    pytest.importorskip("setuptools", minversion="77",
                        reason="the test extra installs setuptools>=77")
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "MANIFEST.in",
                 "CHANGELOG.md", "CONTRIBUTING.md"):
        shutil.copy(ROOT / name, tree / name)
    for name in ("src", "examples", "tests"):
        shutil.copytree(ROOT / name, tree / name,
                        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "*.so"))
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; "
         "print(build_meta.build_sdist(sys.argv[1]))", str(tmp_path / "dist")],
        cwd=tree, env=_quiet_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    import tarfile

    with tarfile.open(tmp_path / "dist" / run.stdout.split()[-1]) as sdist:
        names = [n.split("/", 1)[1] for n in sdist.getnames() if "/" in n]
    assert not [n for n in names if n.startswith("tests/")], names
    assert "src/maxrepeat/core/_native.c" in names and "examples/graders.yaml" in names
    assert "CHANGELOG.md" in names and "CONTRIBUTING.md" in names
