"""Helpers for the readers of chat-shaped logs (swe-agent, mini-swe-agent, openhands,
inspect, openai-messages, anthropic-messages).

`load_document` decodes one whole JSON file with positions; `find_key`/`starts_with` are the
cheap byte tests the sniffers use; `MessageWalk` turns an OpenAI-style message list
(assistant ``tool_calls``, ``role: tool`` results, legacy ``function_call``) into turns,
which the openai-messages, mini-swe-agent and swe-agent readers share. Finding the
conversations in a file (`Run`, `read_runs`) is `_chatruns`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core.errors import TrajectoryFormatError
from . import Source
from ._json import decode, first_json_char, strip_bom
from ._toolevents import EventBuilder, content_text, decode_arguments, type_name

__all__ = [
    "is_jsonl",
    "load_document",
    "has_key",
    "any_key",
    "all_keys",
    "first_char",
    "tool_call_parts",
    "MessageWalk",
]


def is_jsonl(source: Source) -> bool:
    """Whether the input is JSONL (`Source.is_jsonl`: lines are read whole, however long)."""
    return source.is_jsonl()


def load_document(source: Source) -> tuple[Any, bool]:
    """(value, lenient) of a whole JSON file; `TrajectoryFormatError` with line and column."""
    return decode(source.read_bytes(), source.name)


def has_key(head: bytes, key: str, value_start: bytes = b"") -> bool:
    """Whether ``"key":`` (any spacing) occurs in ``head``, followed by ``value_start``.

    >>> has_key(b'{"traj" : [1]}', "traj", b"[")
    True
    """
    pattern = rb'"' + re.escape(key.encode()) + rb'"\s*:\s*' + re.escape(value_start)
    return re.search(pattern, head) is not None


def any_key(head: bytes, *keys: str | tuple[str, bytes]) -> bool:
    """Whether one of ``keys`` (a key, or a key and its value's start) is in ``head``
    (`has_key`).

    >>> any_key(b'{"role": "tool"}', ("role", b'"user"'), "tool_calls")
    False
    """
    return any(has_key(head, k) if isinstance(k, str) else has_key(head, *k) for k in keys)


def all_keys(head: bytes, *keys: str | tuple[str, bytes]) -> bool:
    """Whether every one of ``keys`` (as in `any_key`) is in ``head``.

    >>> all_keys(b'{"task_id": 1, "traj": []}', "task_id", ("traj", b"["))
    True
    """
    return all(has_key(head, k) if isinstance(k, str) else has_key(head, *k) for k in keys)


def first_char(head: bytes) -> bytes:
    """The first JSON character of the input (``{``, ``[``, ...) or ``b""``."""
    return first_json_char(strip_bom(head))


def tool_call_parts(call: Any, where: str) -> tuple[str, str | None, Any]:
    """(name, id, arguments) of one OpenAI-shaped tool call.

    Accepts ``{"id", "function": {"name", "arguments"}}`` and the flat
    ``{"id", "name", "arguments"}`` of tau2-bench; string arguments are decoded.

    >>> tool_call_parts({"id": "c1", "function": {"name": "f", "arguments": '{"a": 1}'}}, "x")
    ('f', 'c1', {'a': 1})
    """
    if not isinstance(call, Mapping):
        raise TrajectoryFormatError(
            None, f"must be an object (got {type_name(call)})", position=where)
    function = call.get("function")
    if isinstance(function, Mapping):
        name, args = function.get("name"), function.get("arguments")
    else:
        # Inspect writes the name as a string under "function"; tau2 flat under "name".
        name = function if isinstance(function, str) else call.get("name")
        args = call.get("arguments")
    if not isinstance(name, str):
        name = call.get("name")
    if not isinstance(name, str):
        raise TrajectoryFormatError(
            None, f"must be a string (got {type_name(name)})", position=f"{where}.function.name")
    cid = call.get("id")
    return name, cid if isinstance(cid, str) else None, decode_arguments(args)


class MessageWalk:
    """Turns an OpenAI-style message list into events, one assistant message per turn.

    A turn opens at each assistant message that asks for tools and stays open over the
    tool (or legacy ``function``) messages that follow, closing at the next message of any
    other role. Calls without an id get ``<prefix><message index>.<n>``; a legacy
    ``function`` message answers the oldest unanswered call of the same name.

    ``path`` names the list in error positions (``messages[3].tool_calls[0]``).
    ``calls_of(message, index)`` may replace the tool-call extraction (mini-swe-agent's
    text actions); ``failed(message)`` says whether a result message carries an error flag.
    """

    def __init__(
        self,
        *,
        path: str = "messages",
        prefix: str = "call-",
        calls_of: Callable[[Mapping[str, Any], int], list[tuple[str, str | None, Any]]]
        | None = None,
        failed: Callable[[Mapping[str, Any]], bool] | None = None,
        result_roles: Sequence[str] = ("tool", "function"),
    ) -> None:
        self.builder = EventBuilder()
        self._path = path
        self._prefix = prefix
        self._calls_of = calls_of or self.openai_calls
        self._failed = failed or (lambda m: m.get("error") not in (None, False))
        self._result_roles = tuple(result_roles)
        self._unanswered: list[tuple[str, str]] = []  # (name, id) in call order
        self._latest: dict[str, str] = {}  # id in the log -> id of its newest call

    def openai_calls(self, message: Mapping[str, Any], index: int) -> list[
            tuple[str, str | None, Any]]:
        """The calls an assistant message asks for (``tool_calls``, else ``function_call``)."""
        calls = message.get("tool_calls")
        out = []
        if isinstance(calls, list):
            for n, call in enumerate(calls):
                out.append(tool_call_parts(call, f"{self._path}[{index}].tool_calls[{n}]"))
        legacy = message.get("function_call")
        if not out and isinstance(legacy, Mapping):
            out.append(tool_call_parts({"function": legacy},
                                       f"{self._path}[{index}].function_call"))
        return out

    def add(self, message: Any, index: int) -> None:
        """Take the next message of the list."""
        if not isinstance(message, Mapping):
            raise TrajectoryFormatError(
                None, f"must be a message object (got {type_name(message)})",
                position=f"{self._path}[{index}]")
        role = message.get("role")
        if role == "assistant":
            self.builder.end_turn()
            calls = self._calls_of(message, index)
            if calls:
                self.builder.start_turn()
                for n, (name, cid, args) in enumerate(calls):
                    own = cid if cid is not None else f"{self._prefix}{index}.{n}"
                    if self.builder.has_call(own):
                        # Hand-written logs reuse ids; the list still shows a new call,
                        # and later results with that id answer the newest one.
                        own = f"{own}@{index}.{n}"
                    self.builder.add_call(name, own, args)
                    if cid is not None:
                        self._latest[cid] = own
                    self._unanswered.append((name, own))
            return
        if role in self._result_roles:
            for cid in self._answered_ids(message):
                self.answer(cid, message)
            return
        self.builder.end_turn()

    def answer(self, cid: str, message: Mapping[str, Any], result: Any = None) -> None:
        """Record ``message`` (or ``result``) as the result of call ``cid``."""
        self._unanswered = [u for u in self._unanswered if u[1] != cid]
        value = content_text(message.get("content")) if result is None else result
        self.builder.add_result(cid, value, not self._failed(message))

    def pending(self) -> list[tuple[str, str]]:
        """The (name, id) of calls without a result yet, oldest first."""
        return list(self._unanswered)

    def _answered_ids(self, message: Mapping[str, Any]) -> list[str]:
        cid = message.get("tool_call_id")
        if isinstance(cid, str):
            return [self._latest.get(cid, cid)]
        ids = message.get("tool_call_ids")
        if isinstance(ids, list) and ids:
            return [self._latest.get(i, i) for i in ids if isinstance(i, str)]
        name = message.get("name")
        for pending_name, pending_id in self._unanswered:
            if name is None or pending_name == name:
                return [pending_id]
        return []
