"""Anthropic Messages API lists: ``[{role, content: [blocks]}]``, bare or embedded.

Accepted layouts (as for openai-messages): a bare list of messages; an object with
``messages`` (a request body); a list of such objects; JSONL with one per line.

What marks a model response (one turn): each ``role: assistant`` message. Its
``tool_use`` (and ``server_tool_use``) blocks are the calls: ``name``, ``id``, ``input``
(decoded when it is a JSON string). ``tool_result`` blocks of the following user
message(s) answer them by ``tool_use_id`` (server tools: ``*_tool_result`` blocks); the
result is the block's ``content`` (a block list becomes its text) and ``is_error: true``
becomes ``success: false``.

Claude Code session JSONL uses the same blocks but one record per line with
``"type": "assistant"`` and a ``message``; that is the claude-code reader's format.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._chat import first_char, has_key
from ._chatruns import Run, read_runs
from ._json import first_jsonl_record
from ._toolevents import EventBuilder, content_text, decode_arguments, type_name

__all__ = ["READER", "trajectory_from_anthropic"]

NAME = "anthropic-messages"


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def trajectory_from_anthropic(run: Run, lenient: bool = False) -> Trajectory:
    """A `Trajectory` from one Messages API conversation.

    >>> msgs = [{"role": "assistant", "content": [
    ...             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": "ls"}}]},
    ...         {"role": "user", "content": [
    ...             {"type": "tool_result", "tool_use_id": "t1", "content": "x",
    ...              "is_error": True}]}]
    >>> t = trajectory_from_anthropic(Run(None, "m.json", msgs, ""))
    >>> [(e.type, e.data.success) for e in t.events]
    [('turn_start', None), ('tool_call', None), ('tool_result', False), ('turn_end', None)]
    """
    builder = EventBuilder()
    for index, message in enumerate(run.messages):
        where = f"{run.path}[{index}]"
        if not isinstance(message, Mapping):
            raise TrajectoryFormatError(
                None, f"must be a message object (got {type_name(message)})", position=where)
        role = message.get("role")
        if role == "assistant":
            builder.end_turn()
        for n, block in enumerate(_blocks(message)):
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if role == "assistant" and kind in ("tool_use", "server_tool_use"):
                name = block.get("name")
                if not isinstance(name, str):
                    raise TrajectoryFormatError(
                        None, f"must be a string (got {type_name(name)})",
                        position=f"{where}.content[{n}].name")
                if not builder.in_turn:
                    builder.start_turn()
                cid = block.get("id")
                own = cid if isinstance(cid, str) else f"block-{index}.{n}"
                builder.add_call(name, own, decode_arguments(block.get("input")))
            elif isinstance(kind, str) and kind.endswith("tool_result"):
                # tool_result in the next user message; server tools answer in place
                cid = block.get("tool_use_id")
                if isinstance(cid, str):
                    builder.add_result(cid, content_text(block.get("content")),
                                       block.get("is_error") is not True)
    return Trajectory(events=builder.events(), id=run.id, source=run.source, format=NAME,
                      lenient=lenient, metadata=run.metadata)


def _read(source: Source) -> Iterator[Item]:
    yield from read_runs(source, trajectory_from_anthropic)


def _sniff(head: bytes, source: Source) -> int:
    start = first_char(head)
    if start not in (b"[", b"{"):
        return 0
    record = first_jsonl_record(head)
    # Claude Code writes one message per line under "message"; ours hold "messages".
    if record is not None and not isinstance(record.get("messages"), list):
        return 0
    if not has_key(head, "role", b'"'):
        return 0
    if any(has_key(head, "type", v) for v in (b'"tool_use"', b'"tool_result"')):
        return 85
    if has_key(head, "content", b"[") and has_key(head, "type", b'"text"'):
        return 30
    return 0


READER = Reader(
    name=NAME,
    description="Anthropic Messages API lists with tool_use / tool_result blocks, bare or "
    "under messages",
    extensions=(".json", ".jsonl"),
    markers=(b'"role"',),
    top=85,
    order=220,
    sniff=_sniff,
    read=_read,
)
