"""Claude Code session transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``).

One JSON record per line. What becomes events:

* ``type: assistant`` records carry one content block each of one API response; the lines
  of one response share ``message.id``. **One ``message.id`` is one turn**: the first
  line of a new id closes the open turn and opens the next one, and every ``tool_use``
  block (``id``, ``name``, ``input``) becomes a ``tool_call`` (a block without a string
  ``name`` is skipped).
* ``type: user`` records with ``tool_result`` blocks give ``tool_result`` events
  (``tool_use_id``; content-block lists become their text; ``is_error: true`` gives
  ``success: false``), without the ``Shell cwd was reset to …`` line the Bash tool adds
  when the record's ``toolUseResult.stderr`` ends with it
  (`._agent_chrome.claude_code_result`). Results stay inside the turn that asked for them.
* ``progress``, ``file-history-snapshot``, ``queue-operation``, ``summary``, ``system``
  and ``result`` records, and prompts with plain text, are ignored.
* A record whose ``uuid`` was seen before (a resumed session copies old records) is
  skipped.
* Subagent and compaction runs (``isSidechain: true``, in their own
  ``<session>/subagents/agent-*.jsonl`` files, or inline in older files) and, in
  ``claude -p --output-format stream-json`` output, messages with a
  ``parent_tool_use_id``, are trajectories of their own. A trajectory is named by its
  ``sessionId`` (``session_id`` in stream-json), with ``/agent-<agentId>`` for a subagent.

`SessionStream` does the conversion record by record and can be saved and restored, so
that the ``hook`` command converts only the lines added since its last call and gets the
same events as a full read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Event, EventData, Trajectory
from . import Item, Reader, Source
from ._agent_chrome import claude_code_result
from ._json import CutLastLineError, decode_line, first_json_char, iter_lines, strip_bom
from ._marks import Marks, mark
from ._toolevents import content_text, type_name

__all__ = ["READER", "SessionStream", "record_of_line"]

_IGNORED: Final = frozenset(
    {"progress", "file-history-snapshot", "queue-operation", "summary", "system", "result"}
)
MAIN: Final = ""
_TOOL_EVENTS: Final = frozenset({"tool_call", "tool_result"})


class _Group(msgspec.Struct):
    """Conversion state of one trajectory: the open turn and the records already seen."""

    turn: str | None = None
    seen: Marks = msgspec.field(default_factory=Marks)  # 16-byte digests of uuids
    session: str | None = None
    lenient: bool = False  # a record needed lenient JSON reading


class SessionStream(msgspec.Struct):
    """Converts the records of one transcript, in order, into events per trajectory.

    ``primary`` is the group of the first user or assistant record: the session itself in
    a session file, the subagent in a subagent file. Group ``""`` is the main session; a
    subagent is ``agent-<agentId>`` (``sidechain`` without an id), a stream-json
    sub-task ``task-<parent_tool_use_id>``.

    >>> s = SessionStream()
    >>> rec = {"type": "assistant", "uuid": "a1", "sessionId": "S", "message": {"id": "m1",
    ...        "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}}
    >>> [e.type for e in s.record(rec)[1]]
    ['turn_start', 'tool_call']
    """

    primary: str | None = None
    groups: dict[str, _Group] = msgspec.field(default_factory=dict)

    def record(self, rec: dict[str, Any], lenient: bool = False) -> tuple[str, list[Event]]:
        """(group, events) for one record (no events for records that carry none);
        ``lenient`` says the record was read by the lenient JSON decoder."""
        kind = rec.get("type")
        if kind not in ("assistant", "user") or not isinstance(rec.get("message"), dict):
            return MAIN, []
        key = _group_of(rec)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group()
            if self.primary is None:
                self.primary = key
        group.lenient = group.lenient or lenient
        if group.session is None:
            session = rec.get("sessionId", rec.get("session_id"))
            if isinstance(session, str):
                group.session = session
        uuid = rec.get("uuid")
        seen = mark(uuid) if isinstance(uuid, str) else None
        if seen is not None and seen in group.seen:
            return key, []
        events = (_assistant if kind == "assistant" else _user)(rec["message"], rec, group)
        if seen is not None and any(e.type in _TOOL_EVENTS for e in events):
            # Only records with tool events are remembered, as short digests in one byte
            # string: the state that the hook saves after every call is copied, not built.
            group.seen.add(seen)
        return key, events

    def finish(self, key: str) -> list[Event]:
        """The events that end group ``key`` (closing its open turn)."""
        group = self.groups.get(key)
        if group is None or group.turn is None:
            return []
        group.turn = None
        return [Event("turn_end")]

    def lenient(self, key: str) -> bool:
        """Whether a record of group ``key`` needed lenient JSON reading."""
        group = self.groups.get(key)
        return group is not None and group.lenient

    def trajectory_id(self, key: str) -> str | None:
        """The id of group ``key``'s trajectory: its session id, plus the subagent."""
        group = self.groups.get(key)
        session = group.session if group is not None else None
        if session is None:
            return None
        return session if key == MAIN else f"{session}/{key}"


def _group_of(rec: dict[str, Any]) -> str:
    parent = rec.get("parent_tool_use_id")
    if isinstance(parent, str) and parent:
        return f"task-{parent}"
    if rec.get("isSidechain") is True:
        agent = rec.get("agentId")
        return f"agent-{agent}" if isinstance(agent, str) and agent else "sidechain"
    return MAIN


def _assistant(message: dict[str, Any], rec: dict[str, Any], group: _Group) -> list[Event]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    turn = message.get("id")
    if not isinstance(turn, str):
        # No response id (never seen in real files): each record is its own response.
        turn = rec.get("uuid") if isinstance(rec.get("uuid"), str) else None
    events: list[Event] = []
    if turn is None or turn != group.turn:
        if group.turn is not None:
            events.append(Event("turn_end"))
        events.append(Event("turn_start", EventData(turn_id=turn)))
        group.turn = turn if turn is not None else ""
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name = block.get("name")
            if not isinstance(name, str):
                continue  # not a call Claude Code could have run
            cid = block.get("id")
            events.append(Event("tool_call", EventData(
                tool_name=name,
                tool_call_id=cid if isinstance(cid, str) else None,
                arguments=block.get("input"),
            )))
    return events


def _user(message: dict[str, Any], rec: dict[str, Any], group: _Group) -> list[Event]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    events = []
    # the tool's own response, when the record holds one (transcript, stream-json) for
    # its only result
    blocks = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    response = rec.get("toolUseResult", rec.get("tool_use_result")) if blocks == 1 else None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            cid = block.get("tool_use_id")
            if not isinstance(cid, str):
                continue
            events.append(Event("tool_result", EventData(
                tool_call_id=cid,
                result=claude_code_result(content_text(block.get("content")), response),
                success=block.get("is_error") is not True,
            )))
    return events


def record_of_line(line: bytes, name: str, number: int) -> tuple[dict[str, Any], bool]:
    """One JSONL line as (record, read leniently); `TrajectoryFormatError` naming the
    file and line."""
    value, lenient = decode_line(line, name, number)
    if not isinstance(value, dict):
        raise TrajectoryFormatError(
            name, f"each line must be a JSON object (got {type_name(value)})", line=number
        )
    return value, lenient


def _read(source: Source) -> Iterator[Item]:
    stream = SessionStream()
    events: dict[str, list[Event]] = {}
    with source.open() as fh:
        for number, line in iter_lines(fh):
            try:
                rec, lenient = record_of_line(line, source.name, number)
            except CutLastLineError as err:
                yield err  # the complete lines before it are still graded
                break
            except TrajectoryFormatError as err:
                yield err
                return
            key, new = stream.record(rec, lenient)
            if new:
                events.setdefault(key, []).extend(new)
    order = list(stream.groups)
    for key in order:
        found = events.get(key, [])
        found.extend(stream.finish(key))
        tid = stream.trajectory_id(key)
        where = source.name if key == stream.primary else f"{source.name}#{key}"
        yield Trajectory(events=found, id=tid, source=where, format="claude-code",
                         lenient=stream.lenient(key))
    if not order:
        yield Trajectory(events=(), id=None, source=source.name, format="claude-code")


_CHAT: Final = (b'"type":"assistant"', b'"type":"user"', b'"type": "assistant"',
                b'"type": "user"')
_SESSION: Final = (b'"sessionId"', b'"session_id"')
_CLAUDE_ONLY: Final = (b'"type":"file-history-snapshot"', b'"type":"queue-operation"',
                       b'"parentUuid"', b'"isSidechain"', b'"subtype":"init"',
                       b'"parent_tool_use_id"')


def _sniff(head: bytes, source: Source) -> int:
    body = strip_bom(head)
    if first_json_char(body) != b"{":
        return 0
    has_session = any(s in body for s in _SESSION)
    if not has_session:
        # 2.x writes sessionId after message, so a first prompt longer than the head
        # hides it; the record's opening keys still name a session transcript.
        opening = body.lstrip()[:256]
        return 70 if b'"parentUuid"' in opening and b'"isSidechain"' in opening else 0
    if any(c in body for c in _CHAT) and b'"message"' in body:
        return 92 if any(c in body for c in _CLAUDE_ONLY) else 75
    if any(c in body for c in _CLAUDE_ONLY):
        # A head of progress or snapshot records only: still a session file.
        return 60
    return 0


READER = Reader(
    name="claude-code",
    description="Claude Code session JSONL (~/.claude/projects/…/<session>.jsonl, subagent "
    "files, claude -p --output-format stream-json)",
    extensions=(".jsonl",),
    markers=(b'"sessionId"', b'"session_id"', b'"parentUuid"'),
    top=92,
    order=30,
    sniff=_sniff,
    read=_read,
)
