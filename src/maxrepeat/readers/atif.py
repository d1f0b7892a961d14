"""ATIF, the Agent Trajectory Interchange Format of Harbor / Terminal-Bench (v1.0 to v1.7).

What marks a model response: one ATIF **step** that carries ``tool_calls`` is one model
call (the schema's own definition of a step), so it becomes one turn holding its calls and
their results. Steps without calls form no turn.

Read as follows:

- calls: ``steps[].tool_calls[]`` with ``tool_call_id`` (or ``id``), ``function_name`` (or
  ``name``) and ``arguments`` (decoded when it is a JSON string);
- results: ``steps[].observation.results[]`` joined on ``source_call_id``; ``content`` is a
  string, a list of parts (their text is kept) or, in some producers, an object (kept as
  it is). A result without ``source_call_id`` is bound to the step's call when the step has
  as many unanswered calls as unbound results (Terminus-2 writes the terminal screen this
  way); otherwise it belongs to no call;
- error flag: the core schema has none. ``success: false`` (on the result, in its
  ``result`` or ``extra``), ``extra.is_error: true`` and ``extra.status: "error"`` mark a
  failed call;
- ``is_copied_context: true`` steps (history copied across a summarisation boundary) are
  skipped, so repeats are not counted twice;
- the non-conformant 1.4 dialect (``schema_version: "1.4"``, calls as ``{id, name,
  arguments}``, results as separate ``source: "system"`` steps with ``observation: {type:
  "tool_result", content, result: {success, error}}`` naming the call in their message
  ``Tool result for <id>``, sometimes *before* the step that declares the call);
- the JSONL dialect: a first line ``{"__header__": true, schema_version, session_id, ...}``
  then one step per line, read line by line; and the same steps streamed without the
  header line (each line one step opening with ``step_id``), one trajectory per file;
- 1.7 ``subagent_trajectories[]`` embedded in a file: each is its own trajectory, named
  ``file#<its trajectory_id or session_id>``.

The file is the trajectory's name (session ids are often normalised or shared between a
trajectory and its continuation); the session id is kept in ``metadata``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from . import Item, Reader, Source
from ._json import CutLastLineError, decode, first_json_char, strip_bom
from ._toolevents import (
    EventBuilder,
    content_text,
    decode_arguments,
    iter_records,
    type_name,
)

__all__ = ["READER"]

_TOOL_RESULT_FOR = re.compile(r"^Tool result for (\S+)")


def _id_text(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _failed(*flags: Any) -> bool:
    for flag in flags:
        if not isinstance(flag, dict):
            continue
        if flag.get("success") is False or flag.get("is_error") is True:
            return True
        if flag.get("status") == "error":
            return True
    return False


class _Assembler:
    """Turns ATIF steps, fed one at a time, into events."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.builder = EventBuilder()

    def step(self, step: Any, where: str) -> None:
        if not isinstance(step, dict):
            raise TrajectoryFormatError(self.name, f"{where} must be an object "
                                        f"(got {type_name(step)})")
        if step.get("is_copied_context") is True:
            return
        b = self.builder
        step_calls: list[str] = []
        calls = step.get("tool_calls")
        if isinstance(calls, list) and calls:
            b.start_turn(f"step-{_id_text(step.get('step_id')) or where}")
            for j, call in enumerate(calls):
                if not isinstance(call, dict):
                    raise TrajectoryFormatError(
                        self.name, f"{where}.tool_calls[{j}] must be an object "
                        f"(got {type_name(call)})")
                name = call.get("function_name", call.get("name"))
                if not isinstance(name, str):
                    raise TrajectoryFormatError(
                        self.name, f"{where}.tool_calls[{j}].function_name must be a string "
                        f"(got {type_name(name)})")
                call_id = _id_text(call.get("tool_call_id", call.get("id")))
                b.add_call(name, call_id, decode_arguments(call.get("arguments")))
                if call_id is not None:
                    step_calls.append(call_id)
        elif calls is not None and not isinstance(calls, list):
            raise TrajectoryFormatError(
                self.name, f"{where}.tool_calls must be an array (got {type_name(calls)})")
        self._observation(step, step_calls)
        b.end_turn()

    def _observation(self, step: dict[str, Any], step_calls: list[str]) -> None:
        obs = step.get("observation")
        if not isinstance(obs, dict):
            return
        b = self.builder
        if obs.get("type") == "tool_result":
            # The 1.4 dialect: one result per system step, the call named in the message.
            call_id = _id_text(obs.get("tool_call_id", obs.get("source_call_id")))
            if call_id is None:
                match = _TOOL_RESULT_FOR.match(str(step.get("message") or ""))
                call_id = match.group(1) if match else None
            if call_id is not None:
                inner = obs.get("result")
                content = obs.get("content")
                if content is None and isinstance(inner, dict):
                    content = inner.get("output", inner.get("error"))
                b.add_result(call_id, content_text(content),
                             not _failed(obs, inner, obs.get("extra")))
            return
        results = obs.get("results")
        if not isinstance(results, list):
            return
        unbound: list[tuple[Any, bool]] = []
        for r in results:
            if not isinstance(r, dict):
                continue
            ok = not _failed(r, r.get("result"), r.get("extra"))
            value = content_text(r.get("content"))
            call_id = _id_text(r.get("source_call_id"))
            if call_id is not None:
                b.add_result(call_id, value, ok)
            elif "content" in r:
                unbound.append((value, ok))
        waiting = [c for c in step_calls if not b.has_result(c)]
        if unbound and len(unbound) == len(waiting):
            for call_id, (value, ok) in zip(waiting, unbound, strict=True):
                b.add_result(call_id, value, ok)

    def trajectory(self, root: dict[str, Any], source: str, lenient: bool) -> Trajectory:
        meta: dict[str, Any] = {}
        for key in ("session_id", "trajectory_id", "schema_version"):
            if isinstance(root.get(key), str):
                meta[key] = root[key]
        agent = root.get("agent")
        if isinstance(agent, dict) and isinstance(agent.get("name"), str):
            meta["agent"] = agent["name"]
        return Trajectory(events=self.builder.events(), source=source, format="atif",
                          lenient=lenient, metadata=meta)


def _from_document(doc: Any, source: str, lenient: bool) -> Iterator[Item]:
    if not isinstance(doc, dict):
        yield TrajectoryFormatError(source, f"an ATIF trajectory must be an object "
                                    f"(got {type_name(doc)})")
        return
    steps = doc.get("steps")
    if not isinstance(steps, list):
        yield TrajectoryFormatError(source, f"steps must be an array (got {type_name(steps)})")
        return
    asm = _Assembler(source)
    try:
        for i, step in enumerate(steps):
            asm.step(step, f"steps[{i}]")
    except TrajectoryFormatError as err:
        yield err
    else:
        yield asm.trajectory(doc, source, lenient)
    subs = doc.get("subagent_trajectories")
    if isinstance(subs, list):
        for i, sub in enumerate(subs):
            key = None
            if isinstance(sub, dict):
                key = _id_text(sub.get("trajectory_id")) or _id_text(sub.get("session_id"))
            yield from _from_document(sub, f"{source}#{key or f'subagent[{i}]'}", lenient)


def _read_jsonl(source: Source) -> Iterator[Item]:
    asm = _Assembler(source.name)
    root: dict[str, Any] = {}
    lenient = False
    try:
        for n, record, loose in iter_records(source):
            lenient = lenient or loose
            if record.get("__header__") is True:
                root = record
            elif "step_id" in record or "source" in record:
                asm.step(record, f"line {n}")
    except CutLastLineError as err:
        yield err  # a crashed or live session: the complete lines before it are graded
    except TrajectoryFormatError as err:
        yield err
        return
    yield asm.trajectory(root, source.name, lenient)


def _read(source: Source) -> Iterator[Item]:
    opening = strip_bom(source.head[:4096])
    if _HEADER.search(opening) or (_STEP.match(opening) and source.is_jsonl()):
        yield from _read_jsonl(source)
        return
    try:
        doc, lenient = decode(source.read_bytes(), source.name)
    except TrajectoryFormatError as err:
        yield err
        return
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from _from_document(item, f"{source.name}[{i}]", lenient)
        return
    yield from _from_document(doc, source.name, lenient)


_HEADER = re.compile(rb'^\s*\{\s*"__header__"\s*:\s*true')
_VERSION = re.compile(rb'"schema_version"\s*:\s*"(ATIF-v)?1\.\d+"')


#: a headerless stream of ATIF steps: each line one step, opening with its step_id
_STEP = re.compile(rb'\s*\{\s*"step_id"\s*:\s*\d+\s*,')
_STEP_SOURCE = re.compile(rb'"source"\s*:\s*"(agent|user|system)"')


def _sniff(head: bytes, source: Source) -> int:
    if first_json_char(head) not in (b"{", b"["):
        return 0
    body = strip_bom(head)
    match = _VERSION.search(body)
    if match is None:
        # Step fragments streamed without a header line: the step's own keys, in the
        # order ATIF writers put them (step_id first, then timestamp/source).
        first = body.lstrip().split(b"\n", 1)[0][:4096]
        return 85 if _STEP.match(body) and _STEP_SOURCE.search(first) else 0
    if match.group(1):
        return 95
    # The bare "1.4" dialect: only with ATIF's step keys beside it.
    return 80 if b'"steps"' in body or b'"step_id"' in body or _HEADER.search(body) else 0


READER = Reader(
    name="atif",
    description="Agent Trajectory Interchange Format v1.0-v1.7 (Harbor / Terminal-Bench), "
    "incl. the JSONL header dialect",
    extensions=(".json", ".jsonl"),
    markers=(b'"schema_version"', b'"step_id"'),
    top=95,
    order=20,
    sniff=_sniff,
    read=_read,
)
