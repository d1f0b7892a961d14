"""Resumable conversion of Codex, Gemini CLI and Copilot CLI logs (issue 12 item 4,
issue 18 item 14): a log cut at any line boundaries and converted a part at a time, with
the state saved and restored at every cut, gives at every cut exactly the events (and
lenient flag) of one full read of the log so far.

Templates are the real logs recorded with each agent's release (`bench/loops/recorded`),
the reader fixtures and, with the corpus, the real Gemini CLI session there (its messages
written as the JSONL layout). Hypothesis also shuffles and repeats their lines and adds
the records that change earlier turns (late results, late error flags, new arguments for
a known call, Gemini rewrites and rewinds): those must fall back to a read from the start
(`_Changed`), never give other events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxrepeat.core.events import Event
from maxrepeat.readers import Source, _gemini_cli_resume, _resume, get_reader
from maxrepeat.readers._resume import _Changed, _NotResumable, _StateError, resume
from tests.conftest import CORPUS, FIXTURES, ROOT

RECORDED = ROOT / "bench" / "loops" / "recorded"
READERS = ("codex", "gemini-cli", "copilot-cli")


def _templates(reader: str) -> list[Path]:
    fixture = {"codex": FIXTURES / "codex" / "rollout.jsonl",
               "gemini-cli": FIXTURES / "gemini-cli" / "session.jsonl",
               "copilot-cli": FIXTURES / "copilot-cli" / "events.jsonl"}[reader]
    return sorted(RECORDED.glob(f"{reader}--*.jsonl")) + [fixture]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def full(reader: str, lines: list[bytes]) -> tuple[list[Event], bool]:
    """What one full read gives (the main trajectory, as the hook reads it)."""
    data = b"".join(lines)
    if not data.strip():
        return [], False
    for item in get_reader(reader).read(Source.from_bytes(data, "log")):
        if not isinstance(item, Exception):
            return list(item.events), item.lenient
    raise AssertionError(f"not readable: {item}")


def resumed(reader: str, lines: list[bytes], cuts: list[int]) -> int:
    """Convert ``lines`` a part at a time (the state saved and restored at each cut),
    checking every cut against a full read; how many cuts fell back to the start."""
    state: bytes | None = None
    settled: list[Event] = []
    start = fallbacks = 0
    for end in [*cuts, len(lines)]:
        events, lenient = full(reader, lines[:end])
        got = _convert(reader, lines, state, start, end)
        if got is None:  # a change to a settled turn: the hook reads from the start
            fallbacks += 1
            settled = []
            got = _convert(reader, lines, None, 0, end)
        if got is None:  # settled too early even from the start: the hook reads whole
            state, settled, start = None, [], 0
            continue
        new, state, opened, got_lenient = got
        settled += new
        assert settled + opened == events, (reader, end)
        assert got_lenient == lenient
        start = end
    return fallbacks


def _convert(reader: str, lines: list[bytes], state: bytes | None, start: int, end: int
             ) -> tuple[list[Event], bytes, list[Event], bool] | None:
    try:
        conv = resume(reader, "log", state)
        for n in range(start, end):
            # as the hook reads them: without the newline (as a full read: with it)
            conv.feed(n + 1, lines[n][:-1] if n % 2 and lines[n].endswith(b"\n") else lines[n])
        new = conv.settle()
        saved = conv.save()
        return new, saved, conv.open_events(), conv.lenient
    except _Changed:
        return None


@pytest.mark.parametrize("reader", READERS)
def test_real_logs_cut_at_every_line_resume_as_one_read(reader: str) -> None:
    templates = _templates(reader)
    assert len(templates) >= 5
    for path in templates:
        lines = _lines(path.read_bytes())
        # the hook's case: a state saved after every line
        assert resumed(reader, lines, list(range(1, len(lines)))) == 0, path.name
        assert resumed(reader, lines, []) == 0


def _ids(reader: str, lines: list[bytes]) -> tuple[list[str], list[str]]:
    """(call ids, Gemini message ids) named in a log."""
    calls, messages = [], []
    for raw in lines:
        rec = json.loads(raw)
        if reader == "codex":
            cid = (rec.get("payload") or {}).get("call_id")
            if isinstance(cid, str):
                calls.append(cid)
        elif reader == "copilot-cli":
            cid = (rec.get("data") or {}).get("toolCallId")
            if isinstance(cid, str):
                calls.append(cid)
        elif isinstance(rec.get("id"), str) and "type" in rec:
            messages.append(rec["id"])
            calls += [c["id"] for c in rec.get("toolCalls") or [] if isinstance(c.get("id"), str)]
    return calls or ["none"], messages or ["none"]


def _changing(reader: str, kind: int, cid: str, mid: str, template: dict[str, Any]
              ) -> dict[str, Any]:
    """A record that changes (or may change) an earlier turn."""
    if reader == "codex":
        return [{"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": cid,
                                                   "exit_code": 1}},
                {"type": "response_item", "payload": {"type": "function_call_output",
                                                      "call_id": cid, "output": "late"}},
                {"type": "response_item", "payload": {"type": "function_call", "name": "sh",
                                                      "call_id": cid, "arguments": "{}"}},
                {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t9"}},
                ][kind % 4]
    if reader == "copilot-cli":
        return [{"type": "tool.execution_complete", "data": {"toolCallId": cid,
                                                             "success": False, "error": "x"}},
                {"type": "assistant.message", "data": {"messageId": "mx", "toolRequests": [
                    {"toolCallId": cid, "name": "bash", "arguments": {"command": "new"}}]}},
                {"type": "tool.execution_start", "data": {"toolCallId": cid + "x",
                                                          "toolName": "bash",
                                                          "arguments": {"command": "ls"}}},
                {"type": "assistant.turn_end", "data": {}},
                ][kind % 4]
    if kind % 3 == 0:
        return {"$rewindTo": mid}
    message = dict(template, id=mid) if template.get("type") == "gemini" else {
        "id": mid, "type": "gemini", "content": ""}
    if kind % 3 == 1:
        message["toolCalls"] = [{"id": cid, "name": "run_shell_command", "args": {"c": 1},
                                 "status": "error", "result": []}]
    return message


@st.composite
def _logs(draw: st.DrawFn, reader: str) -> tuple[list[bytes], list[int]]:
    paths = _templates(reader)
    lines = _lines(draw(st.sampled_from(paths)).read_bytes())
    calls, messages = _ids(reader, lines)
    head = lines[:1]  # the session's first record stays first (it decides the layout)
    body: list[bytes] = []
    for _ in range(draw(st.integers(0, 40))):
        if draw(st.integers(0, 3)) == 0:
            rec = _changing(reader, draw(st.integers(0, 11)), draw(st.sampled_from(calls)),
                            draw(st.sampled_from(messages)),
                            json.loads(draw(st.sampled_from(lines))))
            body.append(json.dumps(rec).encode() + b"\n")
        else:
            body.append(draw(st.sampled_from(lines[1:] or lines)))
    out = head + body
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(out) - 1)), max_size=12)))
    return out, [c for c in cuts if c < len(out)]


@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_shuffled_and_changed_logs_resume_as_one_read(reader: str, data: st.DataObject) -> None:
    lines, cuts = data.draw(_logs(reader))
    # how early turns are settled changes the speed only: settle as early as possible too
    force, keep = _resume.FORCE_AFTER, _gemini_cli_resume.KEEP
    _resume.FORCE_AFTER = data.draw(st.sampled_from([1, 2, force]))
    _gemini_cli_resume.KEEP = data.draw(st.sampled_from([0, 1, keep]))
    try:
        resumed(reader, lines, cuts)
    finally:
        _resume.FORCE_AFTER, _gemini_cli_resume.KEEP = force, keep


def test_a_settled_turn_changed_later_falls_back() -> None:
    """A late error flag for a result already settled as a success, a rewind and a
    rewrite of a settled Gemini message: `_Changed`, then one read gives the events."""
    def rec(payload: dict[str, Any]) -> bytes:
        return json.dumps({"type": "response_item", "payload": payload}).encode() + b"\n"

    lines = [rec({"type": "function_call", "name": "sh", "call_id": f"c{i}",
                  "arguments": "{}"}) for i in range(3)]
    lines = [x for i, line in enumerate(lines) for x in
             (line, rec({"type": "function_call_output", "call_id": f"c{i}", "output": "ok"}))]
    late = json.dumps({"type": "event_msg", "payload": {"type": "exec_command_end",
                                                        "call_id": "c0",
                                                        "exit_code": 2}}).encode() + b"\n"
    assert resumed("codex", lines + [late], [len(lines)]) == 1
    assert full("codex", lines + [late])[0][2].data.success is False

    meta = json.dumps({"sessionId": "s", "projectHash": "h"}).encode() + b"\n"

    def msg(i: int, out: str) -> bytes:
        return json.dumps({"id": f"g{i}", "type": "gemini", "toolCalls": [
            {"id": f"c{i}", "name": "sh", "args": {}, "status": "success",
             "result": [{"functionResponse": {"response": {"output": out}}}]}]}).encode() + b"\n"

    lines = [meta] + [msg(i, "ok") for i in range(5)]
    assert resumed("gemini-cli", lines + [msg(0, "changed")], [len(lines)]) == 1
    assert resumed("gemini-cli", lines + [msg(4, "changed")], [len(lines)]) == 0  # open
    rewind = json.dumps({"$rewindTo": "g1"}).encode() + b"\n"
    assert resumed("gemini-cli", lines + [rewind, msg(7, "x")], [len(lines)]) == 1
    assert resumed("gemini-cli", lines + [json.dumps({"$rewindTo": "g4"}).encode() + b"\n"],
                   [len(lines)]) == 0  # an open message: no fallback


@pytest.mark.parametrize("reader", READERS)
def test_a_state_that_does_not_decode_is_refused(reader: str) -> None:
    conv = resume(reader, "log", None)
    for n, line in enumerate(_lines(_templates(reader)[0].read_bytes()), 1):
        conv.feed(n, line)
    conv.settle()
    good = conv.save()
    for bad in (b"", b"\xc1", good[:-3], msgspec.msgpack.encode([1, 2, 3]),
                msgspec.msgpack.encode({"a": 1}), good[:1] + b"\x00" + good[2:]):
        with pytest.raises(_StateError):
            resume(reader, "log", bad)


def test_legacy_gemini_json_is_read_whole() -> None:
    conv = resume("gemini-cli", "log", None)
    lines = _lines((FIXTURES / "gemini-cli" / "legacy.json").read_bytes())
    with pytest.raises(_NotResumable):
        for n, line in enumerate(lines, 1):
            conv.feed(n, line)


@pytest.mark.corpus
def test_the_corpus_gemini_session_as_jsonl_resumes_as_one_read() -> None:
    """The real Gemini CLI session of the corpus (legacy single JSON), its messages
    written as Gemini CLI >= 0.40 writes them (metadata line, one line per message)."""
    found = sorted((CORPUS / "gemini-cli").glob("*.json"))
    assert found
    for path in found:
        doc = json.loads(path.read_bytes())
        meta = {k: v for k, v in doc.items() if k != "messages"}
        lines = [json.dumps(meta).encode() + b"\n"] + [
            json.dumps(m).encode() + b"\n" for m in doc["messages"]]
        assert resumed("gemini-cli", lines, list(range(1, len(lines)))) == 0
        assert full("gemini-cli", lines)[0] == full("gemini-cli", [path.read_bytes()])[0]
