"""A one-session JSONL file whose last line is cut off (the agent crashed or is still
writing): the complete lines are graded and the cut line is an error; a bad line inside
the file is an error and the session is not graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maxrepeat import MaxRepeatConfig, Trajectory, TrajectoryFormatError, grade
from maxrepeat.readers import Source, read_source

FIXTURES = Path(__file__).parents[1] / "fixtures"
CONFIG = MaxRepeatConfig(1, max_cycle_period=2, match="name-args")


def _claude_code_session() -> bytes:
    lines = []
    for i in range(4):
        lines.append({"type": "assistant", "uuid": f"a{i}", "sessionId": "S",
                      "message": {"id": f"msg_{i}", "role": "assistant", "content": [
                          {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                           "input": {"command": "make"}}]}})
        lines.append({"type": "user", "uuid": f"u{i}", "sessionId": "S",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"toolu_{i}",
                           "content": "error"}]}})
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


SESSIONS = {
    "claude-code": _claude_code_session(),
    "codex": (FIXTURES / "codex" / "rollout.jsonl").read_bytes(),
    "copilot-cli": (FIXTURES / "copilot-cli" / "events.jsonl").read_bytes(),
    "gemini-cli": (FIXTURES / "gemini-cli" / "session.jsonl").read_bytes(),
    "atif": (FIXTURES / "atif" / "stream.atif.jsonl").read_bytes(),
}


def _read(data: bytes, fmt: str) -> list[Trajectory | TrajectoryFormatError]:
    return list(read_source(Source.from_bytes(data, f"session.{fmt}.jsonl"), fmt))


@pytest.mark.parametrize("fmt", sorted(SESSIONS))
def test_cut_last_line_grades_the_complete_lines(fmt: str) -> None:
    """Cutting the last line in half gives its error plus the session of the lines before."""
    data = SESSIONS[fmt]
    body, last = data.rstrip(b"\n").rsplit(b"\n", 1)
    whole = _read(body + b"\n", fmt)
    cut = _read(body + b"\n" + last[: len(last) // 2], fmt)
    errors = [x for x in cut if isinstance(x, TrajectoryFormatError)]
    runs = [x for x in cut if isinstance(x, Trajectory)]
    assert len(errors) == 1 and errors[0].line == data.rstrip(b"\n").count(b"\n") + 1
    assert "truncated?" in str(errors[0])
    assert [grade(t, CONFIG).to_dict() for t in runs] == [
        grade(t, CONFIG).to_dict() for t in whole if isinstance(t, Trajectory)]


@pytest.mark.parametrize("fmt", sorted(SESSIONS))
def test_bad_line_inside_the_file_is_an_error_and_no_verdict(fmt: str) -> None:
    """A broken line followed by more lines: an error, and no partial session is graded."""
    lines = SESSIONS[fmt].splitlines(keepends=True)
    lines.insert(1, b"{not json\n")
    out = _read(b"".join(lines), fmt)
    assert [type(x) for x in out] == [TrajectoryFormatError]
    assert out[0].line == 2  # type: ignore[union-attr]
