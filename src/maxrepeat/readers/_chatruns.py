"""The conversations in a chat-shaped log (openai-messages, anthropic-messages): a bare
message list, an object holding one, an array or JSON Lines of such (`iter_runs`), each a
`Run` with its messages and how to name it; `read_runs` converts each, an unreadable one
becoming an error in its place."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..core.errors import TrajectoryFormatError
from . import Source
from ._chat import is_jsonl, load_document
from ._json import decode, iter_lines
from ._toolevents import type_name

__all__ = ["Run", "iter_runs", "read_runs", "iter_json_lines"]


class Run:
    """One conversation found in a file: its messages and how to name it."""

    __slots__ = ("id", "source", "messages", "path", "metadata")

    def __init__(self, id: str | None, source: str, messages: list[Any], path: str,
                 metadata: dict[str, Any] | None = None) -> None:
        self.id = id
        self.source = source
        self.messages = messages
        self.path = path
        self.metadata = metadata or {}


def _scalar_id(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _tau_id(run: Mapping[str, Any]) -> str | None:
    task = _scalar_id(run.get("task_id"))
    if task is None:
        return _scalar_id(run.get("id"))
    trial = _scalar_id(run.get("trial"))
    return f"task{task}" if trial is None else f"task{task}-trial{trial}"


def _run_of(obj: Mapping[str, Any], source: str, path: str) -> Run | None:
    if isinstance(obj.get("traj"), list):
        # tau-bench result: {task_id, reward, info, traj, trial}
        meta = {k: obj[k] for k in ("reward",) if k in obj}
        return Run(_tau_id(obj), source, obj["traj"], f"{path}traj", meta)
    if isinstance(obj.get("messages"), list):
        ident = _tau_id(obj) if "task_id" in obj else _scalar_id(obj.get("id"))
        return Run(ident, source, obj["messages"], f"{path}messages")
    return None


def iter_runs(value: Any, source: str) -> Iterator[Run | TrajectoryFormatError]:
    """The conversations in a decoded document: a bare message list; an object with
    ``messages``; a tau-bench result ``{task_id, traj, trial, ...}``; a tau2 file with
    ``simulations``; or a list of such objects (one run per element)."""
    if isinstance(value, list):
        first = next((m for m in value if isinstance(m, Mapping)), None)
        if first is None or "role" in first:
            yield Run(None, source, value, "")
            return
        for i, obj in enumerate(value):
            run = _run_of(obj, f"{source}[{i}]", f"[{i}].") if isinstance(obj, Mapping) else None
            yield run if run is not None else TrajectoryFormatError(
                f"{source}[{i}]", "expected an object with messages or traj (a conversation)",
                position=f"[{i}]")
        return
    if isinstance(value, Mapping):
        sims = value.get("simulations")
        if isinstance(sims, list):
            for i, obj in enumerate(sims):
                run = _run_of(obj, f"{source}[{i}]", f"simulations[{i}].") \
                    if isinstance(obj, Mapping) else None
                yield run if run is not None else TrajectoryFormatError(
                    source, "expected an object with messages", position=f"simulations[{i}]")
            return
        run = _run_of(value, source, "")
        if run is not None:
            yield run
            return
    yield TrajectoryFormatError(
        source, f"expected a message list or an object with messages (got {type_name(value)})")


def read_runs(source: Source, convert: Callable[[Run, bool], Any]) -> Iterator[Any]:
    """Every run of a JSON document, or of each JSONL line, converted by ``convert``.

    Errors (bad JSON with line and column, bad shapes with key paths) are yielded in place
    of the run they spoil; JSONL is streamed line by line.
    """
    if is_jsonl(source):
        for n, record, lenient in iter_json_lines(source):
            if isinstance(record, TrajectoryFormatError):
                yield record
                continue
            for run in iter_runs(record, f"{source.name}:{n}"):
                yield _convert(run, convert, lenient)
        return
    try:
        value, lenient = load_document(source)
    except TrajectoryFormatError as err:
        yield err
        return
    for run in iter_runs(value, source.name):
        yield _convert(run, convert, lenient)


def iter_json_lines(source: Source) -> Iterator[tuple[int, Any, bool]]:
    """(line number, value or error, lenient) for each non-blank JSONL line, streamed; a
    bad line becomes an error with its line and column and reading goes on."""
    with source.open() as fh:
        for n, line in iter_lines(fh):
            try:
                # without its newline, a cut line's fault is placed on the line itself
                value, lenient = decode(line.rstrip(b"\r\n"), source.name, line0=n - 1)
            except TrajectoryFormatError as err:
                yield n, err, False
                continue
            yield n, value, lenient


def _convert(run: Run | TrajectoryFormatError, convert: Callable[[Run, bool], Any],
             lenient: bool) -> Any:
    if isinstance(run, TrajectoryFormatError):
        return run
    try:
        return convert(run, lenient)
    except TrajectoryFormatError as err:
        position = err.position
        if position is not None and run.path and not position.startswith(run.path):
            position = run.path + position
        return TrajectoryFormatError(run.source, err.reason, position=position)
