"""Inspect .eval archives: zstd members, and one bad member costs only its own sample."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.readers import INTERNAL_ERROR, read_trajectories
from maxrepeat.readers.inspect_log import _zipfile

ZSTD = 93


def _sample(sid: Any, repeats: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for n in range(repeats):
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{n}", "function": "bash", "arguments": {"cmd": "ls"}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "a.txt"})
    return {"id": sid, "epoch": 1, "messages": messages}


def _write_eval(path: Path, members: dict[str, Any]) -> None:
    zipfile = _zipfile()
    with zipfile.ZipFile(path, "w", compression=ZSTD) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "demo"}}))
        for name, value in members.items():
            archive.writestr(name, json.dumps(value))


def _flag_encrypted(path: Path, member: str) -> None:
    """Set the 'encrypted' bit of ``member`` in its local and central headers."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    for signature, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_at:start + name_at + len(name)] == name:
                (flags,) = struct.unpack_from("<H", data, start + flag_at)
                struct.pack_into("<H", data, start + flag_at, flags | 1)
            start += 4
    path.write_bytes(bytes(data))


def test_zstd_members_are_read(tmp_path: Path) -> None:
    log = tmp_path / "run.eval"
    _write_eval(log, {"samples/1_epoch_1.json": _sample(1, 4)})
    [traj] = read_trajectories(log)
    assert traj.id == "demo/1/epoch1" and traj.format == "inspect"
    assert sum(e.type == "tool_call" for e in traj.events) == 4


def test_one_bad_member_does_not_lose_the_archive(tmp_path: Path) -> None:
    long_id = "7" * 5000  # int() refuses more than 4,300 digits
    log = tmp_path / "run.eval"
    _write_eval(log, {
        "samples/2_epoch_1.json": _sample(2, 2),
        "samples/\u00b2_epoch_1.json": _sample("sq", 1),  # '²'.isdigit() is True
        f"samples/{long_id}_epoch_1.json": _sample("long", 1),
        "samples/10_epoch_1.json": _sample(10, 1),
        "samples/3_epoch_1.json": _sample(3, 3),
    })
    _flag_encrypted(log, "samples/3_epoch_1.json")
    items = list(read_trajectories(log, errors="yield"))
    good = [t.id for t in items if not isinstance(t, Exception)]
    bad = [str(e) for e in items if isinstance(e, Exception)]
    # numeric ids in numeric order (2 < 10 < the 5,000-digit one), then the others
    assert good == ["demo/2/epoch1", "demo/10/epoch1", "demo/long/epoch1", "demo/sq/epoch1"]
    [error] = bad
    assert "samples/3_epoch_1.json" in error and "encrypted" in error
    assert INTERNAL_ERROR not in error


def test_a_member_inflating_past_the_limit_is_an_error_not_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few kilobytes that inflate to megabytes (the limit is lowered here from 256 MiB)
    give an error for that sample; the others are read."""
    monkeypatch.setenv("MAXREPEAT_MAX_EVAL_MEMBER", str(1024 * 1024))
    bomb = _sample(9, 1)
    bomb["messages"][0]["content"] = " " * (3 * 1024 * 1024)
    log = tmp_path / "run.eval"
    _write_eval(log, {"samples/1_epoch_1.json": _sample(1, 2), "samples/9_epoch_1.json": bomb})
    assert log.stat().st_size < 64 * 1024
    items = list(read_trajectories(log, errors="yield"))
    assert [getattr(i, "id", None) for i in items] == ["demo/1/epoch1", None]
    assert str(items[1]) == (f"{log}!samples/9_epoch_1.json: zip member must inflate to at "
                             "most 1,048,576 bytes (got more: a zip bomb, or set "
                             "MAXREPEAT_MAX_EVAL_MEMBER)")
