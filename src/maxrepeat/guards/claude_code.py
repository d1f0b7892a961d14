"""``maxrepeat hook claude-code``: the max-repeat grader as a live Claude Code guard.

Claude Code runs the command after each tool call (a ``PostToolUse`` hook) with a JSON
object on standard input that names the session (``session_id``) and its transcript
(``transcript_path``). The hook grades the transcript so far with the ``claude-code``
reader and `Monitor` (the same figure ``maxrepeat grade`` gives that transcript) and,
while the model keeps repeating itself beyond ``max``, answers
``{"decision": "block", "reason": ...}``: Claude Code shows the reason to the model,
which then changes course. Otherwise it prints nothing and exits 0.

Each call reads only the lines added since the previous one: the conversion state and the
monitors are kept per session in a cache file (``$XDG_CACHE_HOME/maxrepeat/hook/`` or
``--cache-dir``). A cache that is missing, unreadable, of another version or config, or
that no longer fits the transcript (shorter, or different bytes before the saved offset)
is ignored and the transcript read from its start.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import msgspec

from .. import __version__
from ..core.config import MaxRepeatConfig, unique_names
from ..core.errors import TrajectoryFormatError
from ..core.monitor import STATE_VERSION, Monitor
from ..core.preview import shorten
from ..core.result import GraderResult, Run
from ..readers.claude_code import SessionStream, record_of_line
from .session import prefix_digest, seal, unseal

__all__ = ["HookVerdict", "guard", "looping_run", "decide", "default_cache_dir", "WHEN_CHOICES"]

#: Changes whenever the cache layout changes; part of every cache file.
CACHE_FORMAT: Final = 2
_CHECK_BYTES: Final = 4096
WHEN_CHOICES: Final = ("looping", "failed")


class _Cache(msgspec.Struct):
    version: str
    signature: str
    path: str
    offset: int
    lines: int
    head: bytes
    before: bytes
    stream: SessionStream
    monitors: list[bytes]


@dataclass(frozen=True)
class HookVerdict:
    """What one hook call decided, and on what.

    ``results`` are the graders' results for the transcript so far; ``block`` whether the
    hook blocks; ``reason`` the message for the model; ``read_from`` the byte offset the
    call started reading at (0: a full read).
    """

    block: bool
    reason: str | None
    results: tuple[GraderResult, ...]
    read_from: int
    cache_used: bool

    def output(self) -> dict[str, Any] | None:
        """The JSON object to print for Claude Code (None: print nothing)."""
        if not self.block or self.reason is None:
            return None
        return {"decision": "block", "reason": self.reason}


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/maxrepeat/hook`` (``~/.cache/maxrepeat/hook`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "maxrepeat" / "hook"


def looping_run(result: GraderResult) -> Run | None:
    """The run above ``max`` that reaches the last watched step (the loop still going on),
    the longest one when several do; None when the model is not looping now."""
    last = result.metadata.watched_steps - 1
    live = [r for r in result.metadata.runs if r.end_step + r.period > last]
    if not live:
        return None
    return max(live, key=lambda r: (r.occurrences, -r.period))


def _describe(run: Run) -> str:
    if run.period == 1:
        return f"{run.pattern[0]} {run.occurrences} times in a row"
    return (f"the cycle of {run.period} steps [{' | '.join(run.pattern)}] "
            f"{run.occurrences} times in a row")


def decide(results: Sequence[GraderResult], when: str = "looping") -> str | None:
    """The reason to block, or None. ``when="looping"`` blocks while a run above ``max``
    is still growing; ``when="failed"`` blocks on every call once a grader fails."""
    lines = []
    for r in results:
        if not r.failed:
            continue
        if when == "failed":
            lines.append(f"{r.name}: {r.evidence}")
            continue
        run = looping_run(r)
        if run is not None:
            lines.append(f"{r.name}: you repeated {_describe(run)} "
                         f"(at most {r.metadata.max} allowed)")
    if not lines:
        return None
    return shorten(
        "maxrepeat loop guard: you are repeating the same actions without progress.\n"
        + "\n".join(lines)
        + "\nDo not run this again. Change course: read the error, try a different approach, "
        "or stop and ask the user.",
        4000,
    )


def _signature(configs: Sequence[MaxRepeatConfig], names: Sequence[str]) -> str:
    return json.dumps([[c.to_dict(), n] for c, n in zip(configs, names)], sort_keys=True)


def _cache_file(cache_dir: Path, session: str, path: str) -> Path:
    key = hashlib.sha256(f"{session}\0{path}".encode("utf-8", "surrogatepass")).hexdigest()
    return cache_dir / f"{key[:40]}.state"


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _load(file: Path, fh: IO[bytes], size: int, version: str, signature: str,
          path: str) -> _Cache | None:
    """The cache when it still fits the transcript; None otherwise (a full read follows)."""
    try:
        payload = unseal(file.read_bytes())
        if payload is None:
            return None  # a damaged file is never decoded (issue 18)
        cache = msgspec.msgpack.decode(payload, type=_Cache)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if cache.version != version or cache.signature != signature or cache.path != path:
        return None
    if not 0 < cache.offset <= size:
        return None
    # The whole transcript up to the offset, not its first and last 4 KiB: a rewrite in
    # the middle (same length) must not keep the old answer.
    if prefix_digest(fh, cache.offset) != cache.head:
        return None
    return cache


def _save(file: Path, cache: _Cache) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-", suffix=".state")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(seal(msgspec.msgpack.encode(cache)))
            # Atomic: parallel tool calls may run the hook at once; last writer wins.
            os.replace(tmp, file)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a cache we cannot write only costs a full read next time


def guard(
    payload: Mapping[str, Any],
    configs: Sequence[MaxRepeatConfig],
    *,
    cache_dir: Path | None = None,
    when: str = "looping",
) -> HookVerdict:
    """Grade the transcript named by a hook payload, reading only what is new.

    Raises `TrajectoryFormatError` when the transcript cannot be read or a complete line
    of it is not JSON (the cache then stays where it was).
    """
    session = payload.get("session_id")
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise TrajectoryFormatError("<hook input>", "transcript_path must be a non-empty string")
    session_id = session if isinstance(session, str) and session else None
    names = unique_names(configs)
    version = f"{__version__}/{STATE_VERSION}/{CACHE_FORMAT}"
    signature = _signature(configs, names)
    cache_file = _cache_file(cache_dir or default_cache_dir(), session_id or "", path)

    def fresh_monitors() -> list[Monitor]:
        return [Monitor(c, name=n, id=session_id, source=path, format="claude-code")
                for c, n in zip(configs, names)]

    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise TrajectoryFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        cache = _load(cache_file, fh, size, version, signature, path)
        monitors: list[Monitor] = []
        if cache is not None:
            primary = cache.stream.primary
            lenient = primary is not None and cache.stream.lenient(primary)
            try:
                monitors = [
                    Monitor.from_bytes(data, c, name=n, id=session_id, source=path,
                                       format="claude-code", lenient=lenient)
                    for data, c, n in zip(cache.monitors, configs, names)
                ]
            except Exception:  # a state this version cannot restore: read afresh
                cache = None
        if cache is None or len(monitors) != len(configs):
            cache = _Cache(version, signature, path, 0, 0, b"", b"", SessionStream(), [])
            monitors = fresh_monitors()
        read_from = offset = cache.offset
        stream = cache.stream
        lines = cache.lines
        partial = b""
        fh.seek(read_from)
        for raw in fh:  # streamed: a first read of a long transcript stays small
            if not raw.endswith(b"\n"):
                partial = raw
                break
            offset += len(raw)
            lines += 1
            if raw.strip():
                _feed(stream, monitors, *record_of_line(raw, path, lines))
        if offset > read_from:
            head = prefix_digest(fh, offset)
            _save(cache_file, _Cache(version, signature, path, offset, lines, head, b"",
                                     stream, [m.to_bytes() for m in monitors]))
    if partial.strip():
        # The last line is still being written: use it when it is already whole JSON,
        # without saving it (the next call reads it again, with its newline).
        try:
            _feed(stream, monitors, *record_of_line(partial, path, lines + 1))
        except TrajectoryFormatError:
            pass
    results = tuple(m.result() for m in monitors)
    reason = decide(results, when)
    return HookVerdict(reason is not None, reason, results, read_from, read_from > 0)


def _feed(stream: SessionStream, monitors: list[Monitor], record: dict[str, Any],
          lenient: bool) -> None:
    key, events = stream.record(record, lenient)
    if key == stream.primary:
        for m in monitors:
            m.lenient = stream.lenient(key)
            if events:
                m.feed_all(events)
