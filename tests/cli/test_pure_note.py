"""An install without the native extension says so once, on its first run (issue 29)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.cli.purenote import NOTE

#: maxrepeat as installed without a C compiler: the extension cannot be imported
WITHOUT_NATIVE = ("import sys; sys.modules['maxrepeat.core._native'] = None\n"
                  "from maxrepeat.cli import main; main()")
EXAMPLE = str(Path(__file__).parents[2] / "examples" / "clean.json")


def _run(code: str, cache: Path, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "MAXREPEAT_PURE"}
    proc = subprocess.run([sys.executable, "-c", code, "grade", EXAMPLE, "--max", "3"],
                          capture_output=True, text=True, timeout=60,
                          env={**base, "XDG_CACHE_HOME": str(cache), **env})
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_said_once_without_the_extension(tmp_path: Path) -> None:
    assert NOTE in _run(WITHOUT_NATIVE, tmp_path)
    assert NOTE not in _run(WITHOUT_NATIVE, tmp_path)  # remembered
    assert any((tmp_path / "maxrepeat").iterdir())


@pytest.mark.parametrize("pure", ["1"])
def test_not_said_when_the_pure_path_is_asked_for(tmp_path: Path, pure: str) -> None:
    assert NOTE not in _run(WITHOUT_NATIVE, tmp_path, MAXREPEAT_PURE=pure)


def test_not_said_with_the_extension(tmp_path: Path) -> None:
    pytest.importorskip("maxrepeat.core._native")
    assert NOTE not in _run("from maxrepeat.cli import main; main()", tmp_path)
    assert not (tmp_path / "maxrepeat").exists()
