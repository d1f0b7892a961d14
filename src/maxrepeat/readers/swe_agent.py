"""SWE-agent ``.traj`` files: the 0.x ``trajectory[]`` of action strings and the 1.x
function-calling ``history``.

What marks a model response (one turn):

- ``trajectory[]`` present: each element is one response of the model and the action it
  took. The tool is the first word of ``action``, the arguments are the whole action
  string (``edit 10:12 ...``), the result is ``observation``. When ``history`` holds the
  same step as an assistant message with ``tool_calls`` (1.x function calling, matched in
  order by its ``action`` text), the calls take that message's tool names, decoded
  arguments and ids instead: those are what the model actually passed.
- no ``trajectory[]`` (demonstration files keep only ``history``): each assistant message
  is one turn; its ``tool_calls`` are the calls (or, without them, its ``action`` string as
  above), and ``role: tool`` messages answer them through ``tool_call_ids`` (a list).

SWE-agent has no per-step error flag (failures are in the observation text), so every
result is ``success: true``; the run's ``info.exit_status`` goes into the trajectory's
metadata. Messages flagged ``is_demo`` are demonstrations, not part of the run.

A RetryAgent file (``attempts[]``, each a whole ``.traj``, with the chosen attempt copied to
the top level) gives one trajectory per attempt, named ``<file>#attempt<n>``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._chat import MessageWalk, first_char, has_key, load_document, tool_call_parts
from ._toolevents import EventBuilder, content_text, type_name

__all__ = ["READER", "trajectory_from_traj"]

NAME = "swe-agent"


def _action_call(action: str) -> tuple[str, str] | None:
    words = action.split(None, 1)
    if not words:
        return None
    return words[0], action


def _fc_messages(history: list[Any]) -> list[Mapping[str, Any]]:
    return [m for m in history if isinstance(m, Mapping) and m.get("role") == "assistant"
            and not m.get("is_demo") and isinstance(m.get("tool_calls"), list)
            and m["tool_calls"]]


def _index_of(items: list[Any], item: Any) -> int:
    return next(i for i, x in enumerate(items) if x is item)


def _tool_outputs(history: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in history:
        if isinstance(m, Mapping) and m.get("role") == "tool":
            ids = m.get("tool_call_ids")
            if isinstance(m.get("tool_call_id"), str):
                ids = [m["tool_call_id"]]
            for cid in ids if isinstance(ids, list) else []:
                if isinstance(cid, str):
                    out.setdefault(cid, content_text(m.get("content")))
    return out


def _from_steps(steps: list[Any], history: list[Any]) -> EventBuilder:
    builder = EventBuilder()
    fc = _fc_messages(history)
    outputs = _tool_outputs(history)
    j = 0
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise TrajectoryFormatError(
                None, f"must be an object (got {type_name(step)})", position=f"trajectory[{i}]")
        action = step.get("action")
        observation = step.get("observation")
        builder.start_turn()
        message = None
        if j < len(fc):
            fc_action = fc[j].get("action")
            if not isinstance(fc_action, str) or fc_action == action:
                message, j = fc[j], j + 1
        if message is not None:
            where = f"history[{_index_of(history, message)}]"
            for n, call in enumerate(message["tool_calls"]):
                name, cid, args = tool_call_parts(call, f"{where}.tool_calls[{n}]")
                own = cid if cid is not None else f"step-{i}.{n}"
                if builder.has_call(own):
                    own = f"{own}@step-{i}"  # demonstrations reuse ids across steps
                builder.add_call(name, own, args)
                # The step's observation is the result of its (single) action; a second
                # parallel call can only be answered by its own tool message.
                if n == 0:
                    builder.add_result(own, observation)
                elif cid is not None and cid in outputs:
                    builder.add_result(own, outputs[cid])
        elif isinstance(action, str) and (parts := _action_call(action)) is not None:
            cid = f"step-{i}"
            builder.add_call(parts[0], cid, parts[1])
            builder.add_result(cid, observation)
        builder.end_turn()
    return builder


def _from_history(history: list[Any]) -> EventBuilder:
    def calls_of(message: Mapping[str, Any], index: int) -> list[tuple[str, str | None, Any]]:
        if message.get("is_demo"):
            return []
        calls = walk.openai_calls(message, index)
        action = message.get("action")
        if not calls and isinstance(action, str) and (parts := _action_call(action)):
            calls = [(parts[0], None, parts[1])]
        return calls

    # Without tool_calls, the observation of an action string arrives as the next
    # user message (0.x); with them, as role tool messages.
    walk = MessageWalk(path="history", prefix="msg-", calls_of=calls_of, failed=lambda m: False)
    for index, message in enumerate(history):
        if isinstance(message, Mapping) and message.get("role") == "user" \
                and not message.get("is_demo") and walk.pending():
            name, cid = walk.pending()[0]
            if cid.startswith("msg-"):
                walk.answer(cid, message)
                continue
        walk.add(message, index)
    return walk.builder


def trajectory_from_traj(value: Any, source: str, lenient: bool = False) -> Trajectory:
    """A `Trajectory` from a decoded ``.traj`` object.

    >>> t = trajectory_from_traj({"trajectory": [{"action": "ls -a", "observation": "x"}]},
    ...                          "run.traj")
    >>> [(e.type, e.data.tool_name, e.data.arguments) for e in t.events][:2]
    [('turn_start', None, None), ('tool_call', 'ls', 'ls -a')]
    """
    if not isinstance(value, Mapping):
        raise TrajectoryFormatError(
            source, f"a .traj file must hold a JSON object (got {type_name(value)})")
    steps, history = value.get("trajectory"), value.get("history")
    if steps is not None and not isinstance(steps, list):
        raise TrajectoryFormatError(
            source, f"must be an array (got {type_name(steps)})", position="trajectory")
    if history is not None and not isinstance(history, list):
        raise TrajectoryFormatError(
            source, f"must be an array (got {type_name(history)})", position="history")
    if steps is None and history is None:
        raise TrajectoryFormatError(
            source, "a SWE-agent .traj needs a trajectory or a history array")
    try:
        if steps:
            builder = _from_steps(steps, history or [])
        else:
            builder = _from_history(history or [])
    except TrajectoryFormatError as err:
        raise TrajectoryFormatError(source, err.reason, position=err.position) from None
    info = value.get("info")
    status = info.get("exit_status") if isinstance(info, Mapping) else None
    return Trajectory(
        events=builder.events(), source=source, format=NAME, lenient=lenient,
        metadata={"exit_status": status} if isinstance(status, str) else {},
    )


def _read(source: Source) -> Iterator[Item]:
    try:
        value, lenient = load_document(source)
    except TrajectoryFormatError as err:
        yield err
        return
    attempts = value.get("attempts") if isinstance(value, Mapping) else None
    if isinstance(attempts, list) and attempts:
        # RetryAgent: every attempt is a run; the top level repeats the chosen one.
        for i, attempt in enumerate(attempts):
            try:
                yield trajectory_from_traj(attempt, f"{source.name}#attempt{i}", lenient)
            except TrajectoryFormatError as err:
                yield TrajectoryFormatError(err.source, err.reason, position=(
                    f"attempts[{i}].{err.position}" if err.position else f"attempts[{i}]"))
        return
    try:
        yield trajectory_from_traj(value, source.name, lenient)
    except TrajectoryFormatError as err:
        yield err


def _sniff(head: bytes, source: Source) -> int:
    if first_char(head) != b"{":
        return 0
    if has_key(head, "tool_call_metadata") or has_key(head, "events", b"["):
        return 0  # OpenHands events / native trajectories carry these
    if has_key(head, "trajectory", b"[") and has_key(head, "action", b'"') and (
            has_key(head, "observation") or has_key(head, "response")):
        return 90
    if has_key(head, "history", b"[") and has_key(head, "message_type", b'"') and has_key(
            head, "agent", b'"'):
        return 80
    if source.suffix == ".traj" and (has_key(head, "trajectory") or has_key(head, "history")):
        return 60
    return 0


READER = Reader(
    name=NAME,
    description="SWE-agent .traj: 0.x trajectory[] action strings and 1.x function-calling "
    "history",
    extensions=(".traj", ".json"),
    markers=(b'"trajectory"', b'"history"'),
    top=90,
    order=170,
    sniff=_sniff,
    read=_read,
)
