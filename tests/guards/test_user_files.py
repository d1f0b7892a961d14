"""A user's settings file is sacred (issue 30, rows 1, 2, 3 and 10): ``hook install`` and
``uninstall`` read it as strict JSON and write numbers back as they were written, write
through a symlink, keep mode, owner and line endings, never wait on a FIFO, and name the
user's file (never a temporary one) in every failure."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from maxrepeat.guards.install import install, uninstall

CMD = "maxrepeat hook claude-code --max 3"


def _settings(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def _refuse(name: str) -> None:
    raise ValueError(name)


def _js_parse(text: str) -> object:
    """``text`` read as an agent's ``JSON.parse`` would take it (strict JSON only), its
    numbers as written."""
    return json.loads(text, parse_constant=_refuse, parse_int=str, parse_float=str)


@pytest.mark.parametrize("number", ["1e999", "-1e999", "0.10", "1E+2", "1" * 5000,
                                    "123456789012345678901234567890", "1e-999"])
def test_numbers_are_written_back_as_they_were_written(tmp_path: Path, number: str) -> None:
    path = _settings(tmp_path, '{"cleanupPeriodDays": %s, "x": [%s]}' % (number, number))
    install("claude-code", CMD, "project", project=tmp_path)
    text = path.read_text()
    _js_parse(text)  # never Infinity or NaN
    assert f'"cleanupPeriodDays": {number},' in text and f"    {number}\n" in text
    uninstall("claude-code", "project", project=tmp_path)
    assert _js_parse(path.read_text()) == {"cleanupPeriodDays": number, "x": [number]}


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(tmp_path: Path, token: str) -> None:
    original = '{\n  "a": "NaN",\n  "b": %s\n}\n' % token
    path = _settings(tmp_path, original)
    with pytest.raises(ValueError, match=rf"settings.json:3:8: settings must be strict JSON "
                                         rf"\(got {token}\); left unchanged"):
        install("claude-code", CMD, "project", project=tmp_path)
    assert path.read_text() == original


def test_a_symlink_is_written_through_and_mode_and_line_endings_kept(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_bytes(b'{\r\n  "model": "opus"\r\n}\r\n')
    real.chmod(0o644)
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    install("claude-code", CMD, "project", project=tmp_path)
    assert link.is_symlink() and link.resolve() == real.resolve()
    data = real.read_bytes()
    assert CMD.encode() in data and b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    uninstall("claude-code", "project", project=tmp_path)
    assert link.is_symlink() and real.read_bytes() == b'{\r\n  "model": "opus"\r\n}\r\n'
    assert stat.S_IMODE(real.stat().st_mode) == 0o644


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / ".claude" / "settings.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "maxrepeat", "hook", "install", "claude-code",
                           "--max", "3"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "settings.json: settings must be a regular file (got a FIFO)" in proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_failures_name_the_users_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    path = _settings(tmp_path, b'{"a":\n "\xff"}')
    with pytest.raises(ValueError, match=r"settings.json:2:3: settings must be UTF-8 text "
                                         r"\(got byte 0xff\)"):
        install("claude-code", CMD, "project", project=tmp_path)
    _settings(tmp_path, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"settings.json:1:1: settings must be JSON nested at"):
        install("claude-code", CMD, "project", project=tmp_path)
    path.write_text('{"a": 1}')

    def refused(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied", src)

    monkeypatch.setattr(os, "replace", refused)  # a read-only folder, even for root
    with pytest.raises(ValueError) as err:
        install("claude-code", CMD, "project", project=tmp_path)
    assert str(err.value).startswith(f"{path}.maxrepeat.bak: cannot write the settings: "
                                     "Permission denied")
    assert ".tmp-" not in str(err.value) and path.read_text() == '{"a": 1}'


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another user")
def test_the_owner_is_kept(tmp_path: Path) -> None:
    path = _settings(tmp_path, '{"model": "opus"}\n')
    os.chown(path, 4321, 4322)
    install("claude-code", CMD, "project", project=tmp_path)
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (4321, 4322) and CMD in path.read_text()
