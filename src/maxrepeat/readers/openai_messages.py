"""OpenAI chat-completions message lists, bare or embedded.

Accepted layouts: a bare JSON list of messages; an object with ``messages`` (a request
body, a tau2-bench simulation); a tau-bench result ``{task_id, reward, info, traj, trial}``
or a list of them (one trajectory per element, id ``task<task_id>-trial<trial>``); a
tau2-bench file with ``simulations``; JSONL with one such object per line.

What marks a model response (one turn): each ``role: assistant`` message with
``tool_calls`` (or the legacy ``function_call``). Its calls are ``function.name`` with
``function.arguments`` decoded from their JSON string (kept as the string when it does not
parse). ``role: tool`` messages answer by ``tool_call_id``; a legacy ``role: function``
message answers the oldest unanswered call of its ``name``. Results are the ``content``
(content-part lists become their text). Chat completions have no error flag; tau2-bench's
``error: true`` on a tool message becomes ``success: false``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..core.events import Trajectory
from . import Item, Reader, Source
from ._chat import MessageWalk, all_keys, any_key, first_char, has_key
from ._chatruns import Run, read_runs
from ._json import first_jsonl_record

__all__ = ["READER", "trajectory_from_messages"]

NAME = "openai-messages"


def trajectory_from_messages(run: Run, lenient: bool = False) -> Trajectory:
    """A `Trajectory` from one conversation in the chat-completions shape.

    >>> msgs = [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...          "function": {"name": "ls", "arguments": "{\\"d\\": \\".\\"}"}}]},
    ...         {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}]
    >>> t = trajectory_from_messages(Run(None, "x.json", msgs, ""))
    >>> [(e.type, e.data.arguments or e.data.result) for e in t.events]
    [('turn_start', None), ('tool_call', {'d': '.'}), ('tool_result', 'a.txt'), ('turn_end', None)]
    """
    walk = MessageWalk(path=run.path)
    for index, message in enumerate(run.messages):
        walk.add(message, index)
    return Trajectory(events=walk.builder.events(), id=run.id, source=run.source,
                      format=NAME, lenient=lenient, metadata=run.metadata)


def _read(source: Source) -> Iterator[Item]:
    yield from read_runs(source, trajectory_from_messages)


def _anthropic_blocks(head: bytes) -> bool:
    return any(has_key(head, "type", v) for v in (b'"tool_use"', b'"tool_result"'))


def _sniff(head: bytes, source: Source) -> int:
    start = first_char(head)
    if start not in (b"[", b"{") or not _may_hold_messages(head):
        return 0
    if _anthropic_blocks(head):
        return 10
    if any_key(head, "tool_call_metadata", ("samples", b"[")):
        return 0  # OpenHands events and Inspect logs embed chat messages too
    if all_keys(head, ("traj", b"["), "task_id"):
        return 88
    if all_keys(head, "task_id", "reward", ("info", b"{")):
        return 70  # a tau-bench result whose traj lies beyond the head
    if not has_key(head, "role", b'"'):
        return 0
    tools = any_key(head, ("tool_calls", b"["), ("role", b'"tool"'), ("function_call", b"{"))
    if start == b"[" and tools:
        return 80
    if any_key(head, ("messages", b"["), ("simulations", b"[")):
        return 70 if tools else 40
    return 40 if start == b"[" else 0


def _may_hold_messages(head: bytes) -> bool:
    """False when the head is JSON Lines whose first record has neither messages nor
    traj as a list."""
    record = first_jsonl_record(head)
    return record is None or isinstance(record.get("messages"), list) or isinstance(
        record.get("traj"), list)


READER = Reader(
    name=NAME,
    description="OpenAI chat-completions message lists with tool_calls and role tool "
    "results, bare or embedded (tau-bench results, {messages: [...]})",
    extensions=(".json", ".jsonl"),
    markers=(b'"tool_use"', b'"tool_result"', b'"traj"', b'"task_id"', b'"role"'),
    top=88,
    order=210,
    sniff=_sniff,
    read=_read,
)
