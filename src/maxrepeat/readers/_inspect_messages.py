"""Inspect AI's messages as events: one sample of a log (`trajectory_from_sample`, what
`inspect_log` reads from ``.eval`` and ``.json`` logs), or a live conversation
(`trajectory_from_messages`, `events_from_messages`: what the Inspect scorer grades and
the ``react()`` guard feeds). One assistant message is one turn; ``role: tool``
messages answer by ``tool_call_id``; ``attachment://<hash>`` strings are replaced by the
sample's attachments first (the format: `inspect_log`'s docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from ._chat import MessageWalk
from ._toolevents import content_text, type_name

__all__ = ["FORMAT", "trajectory_from_sample", "trajectory_from_messages", "events_from_messages"]

#: the format's name, which the trajectories carry (``--format inspect``; `inspect_log.NAME`)
FORMAT: Final = "inspect"
_ATTACHMENT: Final = "attachment://"


def _resolve(value: Any, attachments: Mapping[str, Any]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by its content."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            found = attachments.get(value[len(_ATTACHMENT):])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, Mapping):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _failed(message: Mapping[str, Any]) -> bool:
    return isinstance(message.get("error"), Mapping)


def trajectory_from_sample(sample: Any, task: str, *, source: str, lenient: bool = False,
                           path: str = "") -> Trajectory:
    """A `Trajectory` from one Inspect sample object.

    >>> s = {"id": 1, "epoch": 2, "messages": [
    ...   {"role": "assistant", "content": "", "tool_calls": [
    ...     {"id": "c1", "function": "bash", "arguments": {"cmd": "attachment://h1"}}]},
    ...   {"role": "tool", "tool_call_id": "c1", "content": "", "function": "bash",
    ...    "error": {"type": "timeout", "message": "timed out"}}],
    ...   "attachments": {"h1": "ls -la"}}
    >>> t = trajectory_from_sample(s, "demo", source="log.json")
    >>> t.id, t.events[1].data.arguments, t.events[2].data.result, t.events[2].data.success
    ('demo/1/epoch2', {'cmd': 'ls -la'}, 'timed out', False)
    """
    if not isinstance(sample, Mapping):
        raise TrajectoryFormatError(
            source, f"a sample must be an object (got {type_name(sample)})", position=path or None)
    attachments = sample.get("attachments")
    attachments = attachments if isinstance(attachments, Mapping) else {}
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise TrajectoryFormatError(
            source, f"must be an array (got {type_name(messages)})",
            position=f"{path}.messages" if path else "messages")
    sample_id = sample.get("id")
    epoch = sample.get("epoch", 1)
    ident = f"{task}/{sample_id}/epoch{epoch}"

    walk = MessageWalk(path=f"{path}.messages" if path else "messages", failed=_failed)
    try:
        for index, message in enumerate(messages):
            if attachments:
                message = _resolve(message, attachments)
            if isinstance(message, Mapping) and message.get("role") == "tool":
                text = content_text(message.get("content"))
                error = message.get("error")
                if (text is None or text == "") and isinstance(error, Mapping) and isinstance(
                        error.get("message"), str):
                    cid = message.get("tool_call_id")
                    if isinstance(cid, str):
                        walk.answer(cid, message, error["message"])
                        continue
            walk.add(message, index)
    except TrajectoryFormatError as err:
        raise TrajectoryFormatError(source, err.reason, position=err.position) from None
    return Trajectory(events=walk.builder.events(), id=ident, source=source, format=FORMAT,
                      lenient=lenient)


def _as_dict(message: Any) -> Any:
    # Live ChatMessage objects are pydantic models; their JSON dump is what a log holds.
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    return message


def trajectory_from_messages(
    messages: Sequence[Any], *, id: str | None = None, source: str = "<inspect sample>"
) -> Trajectory:
    """A `Trajectory` from an Inspect conversation: ``ChatMessage`` objects or their JSON
    dicts (``role``, ``tool_calls``, ``tool_call_id``, ``content``, ``error``).

    >>> t = trajectory_from_messages([
    ...     {"role": "user", "content": "list files"},
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "function": "bash", "content": "a.txt"}],
    ...     id="s1")
    >>> t.id, [e.type for e in t.events]
    ('s1', ['turn_start', 'tool_call', 'tool_result', 'turn_end'])
    """
    sample = {"id": id, "messages": [_as_dict(m) for m in messages]}
    found = trajectory_from_sample(sample, "inspect", source=source)
    return Trajectory(events=found.events, id=id, source=source, format=FORMAT)


def events_from_messages(messages: Sequence[Any]) -> tuple[Any, ...]:
    """The events of an Inspect conversation (one assistant message is one turn): what
    the Inspect scorer (`maxrepeat.scorers.inspect`) grades and the ``react()`` guard feeds.

    >>> events = events_from_messages([
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}},
    ...         {"id": "c2", "function": "bash", "arguments": {"cmd": "pwd"}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ...     {"role": "tool", "tool_call_id": "c2", "content": "/work"}])
    >>> [(e.type, e.data.tool_call_id) for e in events]  # doctest: +NORMALIZE_WHITESPACE
    [('turn_start', None), ('tool_call', 'c1'), ('tool_call', 'c2'),
     ('tool_result', 'c1'), ('tool_result', 'c2'), ('turn_end', None)]
    """
    return tuple(trajectory_from_messages(messages).events)
