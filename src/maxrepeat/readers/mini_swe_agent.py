"""mini-swe-agent trajectory JSON (``*.traj.json``), v1 text actions and v2 tool calls.

What marks a model response (one turn): each ``role: assistant`` message.

- v1 (``trajectory_format: "mini-swe-agent-1"``) and v2 text mode: the action is the single
  fenced ``bash`` (v2: ``mswea_bash_command``) block of the assistant ``content``; a message
  with no block or several was refused by the agent (a format error, nothing ran), so it
  has no call. The result is the next ``user`` message (``<returncode>N</returncode>
  <output>…``).
- v2 (``mini-swe-agent-1.1``): ``extra.actions[]`` lists what ran (``{command,
  tool_call_id?}``); tool-calling models also write ``tool_calls`` and answer with
  ``role: tool`` messages carrying ``tool_call_id``.
- A bare JSON list of those messages (no ``info``, no ``trajectory_format``), as
  mini-swe-agent's own test data keeps recorded runs, reads like ``{"messages": [...]}``.

Every call is ``bash`` with arguments ``{"command": …}`` (tool-calling models: the
decoded arguments of the call). The error flag is the return code: ``extra.returncode``,
else the ``<returncode>`` tag of the observation; non-zero means ``success: false``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._chat import MessageWalk, first_char, has_key, load_document
from ._toolevents import content_text, type_name

__all__ = ["READER", "trajectory_from_mini"]

NAME = "mini-swe-agent"

_BLOCK: Final = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE: Final = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")


def _returncode(message: Mapping[str, Any]) -> int | None:
    extra = message.get("extra")
    if isinstance(extra, Mapping):
        code = extra.get("returncode")
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    text = content_text(message.get("content"))
    if isinstance(text, str):
        found = _RETURNCODE.search(text)
        if found:
            return int(found.group(1))
    return None


def _failed(message: Mapping[str, Any]) -> bool:
    code = _returncode(message)
    return code is not None and code != 0


def trajectory_from_mini(value: Any, source: str, lenient: bool = False) -> Trajectory:
    """A `Trajectory` from a decoded mini-swe-agent trajectory object.

    >>> msgs = [{"role": "assistant", "content": "ok\\n```bash\\nls\\n```"},
    ...         {"role": "user", "content": "<returncode>2</returncode><output></output>"}]
    >>> t = trajectory_from_mini({"messages": msgs}, "t.json")
    >>> [(e.type, e.data.arguments, e.data.success) for e in t.events][1:3]
    [('tool_call', {'command': 'ls'}, None), ('tool_result', None, False)]
    """
    if isinstance(value, list):
        value = {"messages": value}
    if not isinstance(value, Mapping):
        raise TrajectoryFormatError(
            source, f"a mini-swe-agent trajectory must be an object (got {type_name(value)})")
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise TrajectoryFormatError(
            source, f"must be an array (got {type_name(messages)})", position="messages")

    def calls_of(message: Mapping[str, Any], index: int) -> list[tuple[str, str | None, Any]]:
        calls = walk.openai_calls(message, index)
        if calls:
            return calls
        extra = message.get("extra")
        actions = extra.get("actions") if isinstance(extra, Mapping) else None
        if isinstance(actions, list):
            out: list[tuple[str, str | None, Any]] = []
            for action in actions:
                if isinstance(action, Mapping) and isinstance(action.get("command"), str):
                    cid = action.get("tool_call_id")
                    out.append(("bash", cid if isinstance(cid, str) else None,
                                {"command": action["command"]}))
            return out
        text = content_text(message.get("content"))
        blocks = _BLOCK.findall(text) if isinstance(text, str) else []
        return [("bash", None, {"command": blocks[0].strip()})] if len(blocks) == 1 else []

    walk = MessageWalk(prefix="action-", calls_of=calls_of, failed=_failed)
    try:
        for index, message in enumerate(messages):
            # Text mode: the first user message after an action is its observation.
            if isinstance(message, Mapping) and message.get("role") == "user":
                pending = [cid for _, cid in walk.pending() if cid.startswith("action-")]
                if pending:
                    walk.answer(pending[0], message)
                    continue
            walk.add(message, index)
    except TrajectoryFormatError as err:
        raise TrajectoryFormatError(source, err.reason, position=err.position) from None
    info = value.get("info")
    status = info.get("exit_status") if isinstance(info, Mapping) else None
    return Trajectory(
        events=walk.builder.events(), source=source, format=NAME, lenient=lenient,
        metadata={"exit_status": status} if isinstance(status, str) else {},
    )


def _read(source: Source) -> Iterator[Item]:
    try:
        value, lenient = load_document(source)
        yield trajectory_from_mini(value, source.name, lenient)
    except TrajectoryFormatError as err:
        yield err


def _sniff(head: bytes, source: Source) -> int:
    if first_char(head) == b"[":
        # A bare message list is chat-shaped; only mini-swe-agent's own action fence or
        # observation tag tells it from a plain OpenAI list (which scores 40 there).
        if has_key(head, "role", b'"') and (
                b"```mswea_bash_command" in head or b"<returncode>" in head):
            return 60
        return 0
    if first_char(head) != b"{":
        return 0
    if b'"mini-swe-agent-1' in head or has_key(head, "mini_version"):
        return 92
    if b"minisweagent." in head and has_key(head, "info", b"{"):
        return 80
    if source.name.endswith(".traj.json") and has_key(head, "info", b"{"):
        # info comes first and its submission (the whole patch) can fill the head,
        # pushing mini_version and trajectory_format out of sight.
        return 50
    return 0


READER = Reader(
    name=NAME,
    description="mini-swe-agent trajectory JSON (v1 bash-block text actions, v2 "
    "extra.actions / tool calls)",
    extensions=(".json",),
    markers=(b'```mswea_bash_command', b'<returncode>', b'"mini-swe-agent-1', b'"mini_version"',
             b'"info"'),
    top=92,
    order=180,
    sniff=_sniff,
    read=_read,
)
