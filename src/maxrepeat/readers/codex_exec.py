"""The event stream of ``codex exec --json`` (what CI jobs running Codex keep).

Every line is one thread event: ``thread.started`` (``thread_id``), ``turn.started``,
``turn.completed`` / ``turn.failed``, ``item.started`` / ``item.updated`` /
``item.completed`` (``item``: ``{id, type, ...}``) and ``error``. One ``thread.started``
begins one run; a file holding several (CI logs appended run after run) gives one
trajectory per thread, named ``<file>#<thread_id>``; a file of one thread is named by the
file, with the thread id in ``metadata``.

What marks a model response: the stream has none. A ``turn`` here is a whole user prompt,
which may hold hundreds of model responses, so it is not used as a step. Codex runs the
calls of one response side by side, so an item that starts while another is still running
joins its step; an item that starts when none is running opens a new one. Parallel calls
whose executions do not overlap are therefore counted as separate steps.

Read as follows (the item types of ``codex-rs/exec/src/exec_events.rs``):

- ``command_execution``: tool ``command_execution``, arguments ``{"command": ...}``, result
  ``aggregated_output``; failed when ``exit_code`` is not 0 or ``status`` is ``failed``;
- ``file_change``: tool ``file_change``, arguments ``{"changes": [...]}`` (path and kind of
  each change), result its ``status``; failed when ``status`` is ``failed``;
- ``mcp_tool_call``: tool ``<server>.<tool>``, arguments ``arguments``, result ``result``
  (content blocks become their text) or ``error.message``; failed on ``error`` or
  ``status: failed``;
- ``web_search``: tool ``web_search``, arguments ``{"query": ...}``;
- ``agent_message``, ``reasoning``, ``todo_list`` and ``error`` items are not tool calls.

An item's arguments are taken when it first appears (``item.started``, else
``item.completed``); its result from ``item.completed``. An item that never completes
(the run was cut off) is a call without a result.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import CutLastLineError, first_json_char, strip_bom
from ._toolevents import EventBuilder, content_text, iter_records

__all__ = ["READER"]

NAME: Final = "codex-exec"
_NOT_CALLS: Final = frozenset({"agent_message", "reasoning", "todo_list", "error"})


def _call(item: dict[str, Any]) -> tuple[str, Any] | None:
    """(tool name, arguments) of a tool-like item, or None."""
    kind = item.get("type")
    if kind == "command_execution":
        return "command_execution", {"command": item.get("command")}
    if kind == "file_change":
        return "file_change", {"changes": item.get("changes")}
    if kind == "mcp_tool_call":
        server, tool = item.get("server"), item.get("tool")
        if isinstance(tool, str):
            return (f"{server}.{tool}" if isinstance(server, str) else tool,
                    item.get("arguments"))
        return None
    if kind == "web_search":
        return "web_search", {"query": item.get("query")}
    return None


def _result(item: dict[str, Any]) -> tuple[Any, bool]:
    """(the result, ok) of a completed item."""
    kind = item.get("type")
    failed = item.get("status") == "failed"
    if kind == "command_execution":
        code = item.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            failed = True
        return item.get("aggregated_output"), not failed
    if kind == "mcp_tool_call":
        error = item.get("error")
        if isinstance(error, dict):
            return error.get("message"), False
        result = item.get("result")
        if isinstance(result, dict) and "content" in result:
            return content_text(result.get("content")), not failed
        return content_text(result), not failed
    return item.get("status"), not failed


class _Thread:
    """One ``thread.started`` and what follows it."""

    def __init__(self, thread_id: str | None) -> None:
        self.thread_id = thread_id
        self.b = EventBuilder()
        self.running: set[str] = set()
        self.steps = 0

    def item(self, event: str, item: dict[str, Any]) -> None:
        raw_id = item.get("id")
        kind = item.get("type")
        if not isinstance(raw_id, str) or not isinstance(kind, str) or kind in _NOT_CALLS:
            return  # an item of no known shape (a list or null as its type) is no call
        call = _call(item)
        if call is None:
            return
        if not self.b.has_call(raw_id):
            if not self.running:
                # nothing in flight: a new model response, so a new step
                self.steps += 1
                self.b.start_turn(f"step-{self.steps}")
            self.b.add_call(call[0], raw_id, call[1])
            self.running.add(raw_id)
        if event == "item.completed":
            value, ok = _result(item)
            self.b.add_result(raw_id, value, ok)
            self.running.discard(raw_id)
            if not self.running:
                self.b.end_turn()


def _read(source: Source) -> Iterator[Item]:
    threads: list[_Thread] = []
    current: _Thread | None = None
    lenient = False
    cut: CutLastLineError | None = None
    try:
        for _n, rec, loose in iter_records(source):
            lenient = lenient or loose
            kind = rec.get("type")
            if kind == "thread.started":
                tid = rec.get("thread_id")
                current = _Thread(tid if isinstance(tid, str) else None)
                threads.append(current)
            elif isinstance(kind, str) and kind.startswith("item."):
                item = rec.get("item")
                if isinstance(item, dict):
                    if current is None:  # a stream cut before its thread.started line
                        current = _Thread(None)
                        threads.append(current)
                    current.item(kind, item)
    except CutLastLineError as err:
        cut = err  # a crashed or live run: the complete lines before it are graded
    except TrajectoryFormatError as err:
        yield err
        return
    for index, thread in enumerate(threads):
        meta = {"thread_id": thread.thread_id} if thread.thread_id else {}
        name = source.name
        if len(threads) > 1:
            name = f"{source.name}#{thread.thread_id or index}"
        yield Trajectory(events=thread.b.events(), source=name, format=NAME,
                         lenient=lenient, metadata=meta)
    if cut is not None:
        yield cut


_KIND: Final = re.compile(
    rb'^\{\s*"type"\s*:\s*"(thread\.started|turn\.started|item\.(started|completed))"')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) != b"{":
        return 0
    return 92 if _KIND.match(strip_bom(head).lstrip()[:256]) else 0


READER: Final = Reader(
    name=NAME,
    description="codex exec --json event stream (thread.started, item.started/"
    "item.completed with command_execution, file_change, mcp_tool_call, web_search)",
    extensions=(".jsonl",),
    markers=(b'"thread.started"', b'"turn.started"', b'"item.started"', b'"item.completed"'),
    top=92,
    order=50,
    sniff=_sniff,
    read=_read,
)
