"""The registry of input formats: `Reader`, format names to reader modules (imported on
first use), content sniffing (`detect`) and reading an input with the right reader
(`read_source`, `read_trajectories`).

>>> reader_names()[:3]
['vally', 'atif', 'claude-code']
>>> detect(Source.from_bytes(b'{"id": "r", "events": []}')).name
'vally'
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from typing import Final, Literal, overload

import msgspec

from ..core.errors import TrajectoryFormatError
from ..core.events import Trajectory
from .source import HEAD_BYTES, Source
from .walk import expand_paths, no_trajectory

__all__ = ["INTERNAL_ERROR", "Reader", "Item", "DECIDED", "SNIFF_LIMIT", "reader_names",
           "get_reader", "all_readers", "detect", "read_source", "read_trajectories"]

#: format name -> module (imported on first use, so start-up stays cheap)
_MODULES: Final[dict[str, str]] = {
    "vally": "maxrepeat.readers.vally",
    "atif": "maxrepeat.readers.atif",
    "claude-code": "maxrepeat.readers.claude_code",
    "codex": "maxrepeat.readers.codex",
    "codex-exec": "maxrepeat.readers.codex_exec",
    "gemini-cli": "maxrepeat.readers.gemini_cli",
    "copilot-cli": "maxrepeat.readers.copilot_cli",
    "cline": "maxrepeat.readers.cline",
    "openclaw": "maxrepeat.readers.openclaw",
    "opencode": "maxrepeat.readers.opencode",
    "pi": "maxrepeat.readers.pi",
    "qwen-code": "maxrepeat.readers.qwen_code",
    "otel": "maxrepeat.readers.otel",
    "mlflow-trace": "maxrepeat.readers.mlflow_trace",
    "langsmith": "maxrepeat.readers.langsmith",
    "openinference": "maxrepeat.readers.openinference",
    "swe-agent": "maxrepeat.readers.swe_agent",
    "mini-swe-agent": "maxrepeat.readers.mini_swe_agent",
    "openhands": "maxrepeat.readers.openhands",
    "inspect": "maxrepeat.readers.inspect_log",
    "openai-messages": "maxrepeat.readers.openai_messages",
    "anthropic-messages": "maxrepeat.readers.anthropic_messages",
}

#: format name -> (the highest score its sniffer gives, byte strings one of which is in
#: every head it scores above 0). Detection consults these before importing a reader: a
#: reader that cannot score (none of its markers) or cannot win (its highest score does
#: not beat the best so far; ties go to the earlier reader) is never imported, so grading
#: one native file imports one reader, not fourteen (start-up is measured:
#: bench/RESULTS.md). Derived from each ``_sniff``; tests/test_sniff_markers.py checks
#: them against the sniffers' return values and real files of every format.
_SNIFF_HINTS: Final[dict[str, tuple[int, tuple[bytes, ...]]]] = {
    "vally": (90, (b'"events"',)),
    "atif": (95, (b'"schema_version"', b'"step_id"')),
    "claude-code": (92, (b'"sessionId"', b'"session_id"', b'"parentUuid"')),
    "codex": (90, (b'"payload"',)),
    "codex-exec": (92, (b'"thread.started"', b'"turn.started"', b'"item.started"',
                        b'"item.completed"')),
    "gemini-cli": (85, (b'"projectHash"',)),
    "copilot-cli": (90, (b'"session.', b'"user.message"', b'"assistant.', b'"tool.execution_')),
    "cline": (96, (b'"updated_at"',)),
    "openclaw": (95, (b"session_nodes",)),
    "opencode": (90, (b"SQLite format 3\x00",)),
    "pi": (95, (b'"session"', b'"toolCall"')),
    "qwen-code": (95, (b'"parts"',)),
    "otel": (90, (b'"resourceSpans"',)),
    "mlflow-trace": (95, (b'"spans"',)),
    "langsmith": (92, (b'"child_runs"',)),
    "openinference": (92, (b'"openinference.span.kind"', b'"span_kind"')),
    "swe-agent": (90, (b'"trajectory"', b'"history"')),
    "mini-swe-agent": (92, (b"```mswea_bash_command", b"<returncode>", b'"mini-swe-agent-1',
                            b'"mini_version"', b'"info"')),
    "openhands": (90, (b'"instance_id"', b'"source"', b'"kind"')),
    "inspect": (95, (b"PK\x03\x04", b'"eval"')),
    "openai-messages": (88, (b'"tool_use"', b'"tool_result"', b'"traj"', b'"task_id"',
                             b'"role"')),
    "anthropic-messages": (85, (b'"role"',)),
}

Item = Trajectory | TrajectoryFormatError


# A msgspec Struct, not a dataclass: a dataclass compiles its methods from source when
# the module is imported (~0.5 ms each), and every ``maxrepeat grade`` imports this one.
class Reader(msgspec.Struct, frozen=True):
    """One input format.

    ``sniff(head, source)`` scores how sure the reader is that the input is its format
    (0: not mine; 100: certain); ``read(source)`` yields trajectories and per-record
    errors. ``extensions`` are the file endings a directory walk picks up.
    """

    name: str
    description: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes, Source], int]
    read: Callable[[Source], Iterator[Item]]


_LOADED: dict[str, Reader] = {}


def reader_names() -> list[str]:
    """The names of every known format, in registry order."""
    return list(_MODULES)


def get_reader(name: str) -> Reader:
    """The reader of one format; `TrajectoryFormatError` for an unknown name."""
    reader = _LOADED.get(name)
    if reader is None:
        module = _MODULES.get(name)
        if module is None:
            raise TrajectoryFormatError(
                None, f"format must be one of {', '.join(['auto', *_MODULES])} (got {name!r})"
            )
        reader = _LOADED[name] = importlib.import_module(module).READER
    return reader


def all_readers() -> list[Reader]:
    """Every reader, in registry order."""
    return [get_reader(n) for n in _MODULES]


#: A sniffing score from which the bytes read so far decide the format; below it detection
#: reads further (an undecided head is never a guess).
DECIDED: Final = 80
#: The most detection reads of one input before it decides on what it has read.
SNIFF_LIMIT: Final = 64 * 1024 * 1024


def _best(head: bytes, source: Source) -> tuple[int, Reader] | None:
    best: tuple[int, Reader] | None = None
    for name in _MODULES:
        top, markers = _SNIFF_HINTS[name]
        if (best is not None and top <= best[0]) or not any(m in head for m in markers):
            continue  # it would score 0, or could not win: not imported (see _SNIFF_HINTS)
        reader = get_reader(name)
        score = reader.sniff(head, source)
        if score > 0 and (best is None or score > best[0]):
            best = (score, reader)
    return best


def detect(source: Source) -> Reader:
    """The reader whose sniffing is most confident about ``source``.

    Sniffing starts on the first `HEAD_BYTES`. When no reader is sure (a score below
    `DECIDED`: a long first prompt or patch, keys that come late such as tau2's
    ``simulations``), it reads eight times as much and asks again, up to the whole input
    or `SNIFF_LIMIT`, and decides on the most it read.

    Raises `TrajectoryFormatError` listing the known formats when none recognises it.
    """
    size = HEAD_BYTES
    while True:
        head = source.prefix(size)
        best = _best(head, source)
        if (best is not None and best[0] >= DECIDED) or len(head) < size \
                or size >= SNIFF_LIMIT:
            break
        size = min(size * 8, SNIFF_LIMIT)
    if best is None:
        what = "an empty file" if not head.strip() else "a shape no reader knows"
        raise TrajectoryFormatError(
            source.name,
            f"cannot tell the format: {what}; known formats: {', '.join(_MODULES)} "
            "(force one with --format)",
        )
    return best[1]


def read_source(source: Source, format: str = "auto") -> Iterator[Item]:
    """Every trajectory in ``source`` (and an error in place of each unreadable record)."""
    if source.path is not None and os.path.isdir(source.path):
        yield no_trajectory(source.path)  # what a walk that found nothing leaves
        return
    try:
        reader = detect(source) if format == "auto" else get_reader(format)
    except TrajectoryFormatError as err:
        yield err if err.source else err.with_source(source.name)
        return
    except OSError as exc:
        yield TrajectoryFormatError(source.name, f"cannot read: {exc.strerror or exc}")
        return
    except Exception as exc:  # a sniffing bug must not end a batch: report it in place
        yield _internal_error(source, "detecting the format", exc)
        return
    try:
        yield from reader.read(source)
    except OSError as exc:
        yield TrajectoryFormatError(source.name, f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a reader bug must not end a batch: report it in place
        yield _internal_error(source, f"reading it as {reader.name}", exc)


#: marks errors that are bugs of maxrepeat, not faults of the input (fuzz tests look for it)
INTERNAL_ERROR: Final = "internal error"


def _internal_error(source: Source, doing: str, exc: Exception) -> TrajectoryFormatError:
    detail = str(exc)[:200]
    return TrajectoryFormatError(
        source.name,
        f"{INTERNAL_ERROR} while {doing}: {type(exc).__name__}"
        + (f": {detail}" if detail else "")
        + " (a maxrepeat bug: please report it with this file)",
    )


@overload
def read_trajectories(
    path: str | os.PathLike[str], *, format: str = ..., errors: Literal["raise"] = ...
) -> Iterator[Trajectory]: ...


@overload
def read_trajectories(
    path: str | os.PathLike[str], *, format: str = ..., errors: Literal["yield"]
) -> Iterator[Item]: ...


def read_trajectories(
    path: str | os.PathLike[str],
    *,
    format: str = "auto",
    errors: Literal["raise", "yield"] = "raise",
) -> Iterator[Trajectory] | Iterator[Item]:
    """The trajectories in a file, a directory (recursively) or standard input (``-``).

    Streams: one trajectory is read at a time. With ``errors="raise"`` (the default) an
    unreadable record raises `TrajectoryFormatError`; with ``errors="yield"`` the error is
    yielded in its place and reading goes on.

    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> _ = p.write_text(json.dumps({"id": "run-1", "events": []}))
    >>> [t.label for t in read_trajectories(p)]
    ['run-1']
    """
    def gen() -> Iterator[Item]:
        for p in expand_paths([os.fspath(path)]):
            try:
                source = Source.from_path(p)
            except OSError as exc:
                yield TrajectoryFormatError(p, f"cannot read: {exc.strerror or exc}")
                continue
            with source:
                for item in read_source(source, format):
                    if isinstance(item, TrajectoryFormatError) and errors == "raise":
                        raise item
                    yield item

    return gen()
