"""Grading one large native trajectory document without loading it: memory bounded in
every match mode.

A document above the streaming threshold (`readers._vally_stream`) reaches the batch
engine as a `StreamedTrajectory`: passes over its events, never all of them at once. Each
grader is one `Monitor` fed one pass. In ``name`` and ``name-args`` mode the monitor's
state does not grow with the trajectory. In ``observation`` mode it would: spec §1 gives a
call the *first* result with its id wherever it stands (before the call, long after it,
shared by several calls), so a monitor keeps every answered id.

So ``observation`` mode resolves the results first, on disk. One pass writes each call's
id and each result's id with its reduced value (digest and preview, `reduce_answer`) to
a temporary SQLite database whose cache is capped (`CACHE_KIB`); the first result of an
id wins, as in `grade()`. Then the grading pass reads back, in event order, each call's
first result and hands it to the monitor right before the call (`Monitor.answer_ahead`)
under an id of its own (the call's event index), and the result events are fed without
their values. No call ever waits and no id is shared, so a ``forget_answers`` monitor
is exact and drops each answer once its step is final. Calls with no result get no id
(a missing observation either way). A result that makes grading fail (too deep to
compare) and comes after its call is handed over where it stands, as the event would
have been, so the same error is reported at the same point.

Near-duplicate settings (``normalize``, ``similarity``) reduce results in event order
with a state of their own; with them the monitor keeps its answers as before (not
bounded). If the temporary database cannot be used, the same happens.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from typing import Any, Final

import msgspec

from ..core.config import MaxRepeatConfig
from ..core.errors import TrajectoryFormatError
from ..core.events import TOOL_CALL, TOOL_RESULT
from ..core.monitor import Monitor
from ..core.monitor.reduce import reduce_answer
from ..core.monitor.state import Answer
from ..core.result import GraderResult
from ..core.steps import watcher
from ..core.toolmatch import UnsafeMatchError
from .driver import Graded, Graders
from .scratch import CACHE_KIB, ScratchDB

__all__ = ["grade_streamed", "CACHE_KIB"]

_BATCH: Final = 4096
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Answer).decode


def grade_streamed(streamed: Any, graders: Graders) -> Graded:
    """Grade a `StreamedTrajectory` with one `Monitor` per config, one pass each: the
    results of `grade()` on the whole document, in memory that does not grow with it;
    a malformed event gives the reader's error."""
    out: list[GraderResult] = []
    answers: _Answers | None = None
    try:
        for cfg, name in zip(graders.configs, graders.names, strict=True):
            resolve = cfg.match == "observation" and cfg.near is None
            try:
                if resolve and answers is None:
                    answers = _Answers.resolve(streamed.events())
                resolved = resolve and answers is not None and answers.ok
                monitor = Monitor(cfg, name=name, id=streamed.id, source=streamed.source,
                                  max_runs=graders.max_runs, forget_answers=resolved)
                if resolved:
                    assert answers is not None
                    monitor.extend(_answered(monitor, cfg, streamed.events(), answers))
                else:
                    monitor.extend(streamed.events())
                out.append(monitor.result())
            except TrajectoryFormatError as err:
                message = str(err.with_source(streamed.source))
            except OSError as exc:
                message = f"{streamed.source}: cannot read: {exc.strerror or exc}"
            else:
                continue
            return Graded(graders.errors(streamed.source, message, source=streamed.source),
                          message)
    finally:
        if answers is not None:
            answers.close()
    return Graded(tuple(out))


class _Answers(ScratchDB):
    """Each call's first result, resolved on disk (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__("answers")
        self.ok = True
        # ids as UTF-8 bytes: compared exactly, as the monitor's dict compares them
        self.db.execute("CREATE TABLE results (cid BLOB PRIMARY KEY, idx INTEGER NOT NULL,"
                        " ans BLOB NOT NULL) WITHOUT ROWID")
        self.db.execute("CREATE TABLE calls (idx INTEGER PRIMARY KEY, cid BLOB NOT NULL)")

    @classmethod
    def resolve(cls, events: Iterable[Any]) -> _Answers:
        """One pass over ``events``: every call id and every id's first result.
        `TrajectoryFormatError` and `OSError` from the events pass through; a failing
        database gives an instance with ``ok`` false (grade without it)."""
        import sqlite3

        try:
            answers = cls()
        except (sqlite3.Error, OSError):
            return _Failed()
        try:
            answers._fill(events)
        except (sqlite3.Error, MemoryError):
            answers.close()
            return _Failed()
        except BaseException:
            answers.close()
            raise
        return answers

    def _fill(self, events: Iterable[Any]) -> None:
        db = self.db
        results: list[tuple[bytes, int, bytes]] = []
        calls: list[tuple[int, bytes]] = []
        add_result = "INSERT OR IGNORE INTO results VALUES (?, ?, ?)"  # the first one wins
        add_call = "INSERT INTO calls VALUES (?, ?)"
        for i, event in enumerate(events):
            etype = event.type
            if etype == TOOL_RESULT:
                data = event.data
                cid = data.tool_call_id if data is not None else None
                if cid is not None:
                    value = data.result if data is not None else None
                    results.append((_key(cid), i, _encode(reduce_answer(value))))
                    if len(results) >= _BATCH:
                        db.executemany(add_result, results)
                        results.clear()
            elif etype == TOOL_CALL:
                data = event.data
                cid = data.tool_call_id if data is not None else None
                if isinstance(cid, str):
                    calls.append((i, _key(cid)))
                    if len(calls) >= _BATCH:
                        db.executemany(add_call, calls)
                        calls.clear()
        db.executemany(add_result, results)
        db.executemany(add_call, calls)
        db.commit()

    def rows(self) -> Iterator[tuple[int, int, bytes]]:
        """(call's event index, its first result's event index, the reduced result), in
        call order; calls without a result are left out."""
        return iter(self.db.execute(
            "SELECT c.idx, r.idx, r.ans FROM calls AS c JOIN results AS r ON r.cid = c.cid"
            " ORDER BY c.idx"))


class _Failed(_Answers):
    def __init__(self) -> None:  # no database
        self.ok = False

    def close(self) -> None:
        pass


def _key(cid: str) -> bytes:
    return cid.encode("utf-8", "surrogatepass")


def _answered(monitor: Monitor, config: MaxRepeatConfig, events: Iterable[Any],
              answers: _Answers) -> Iterator[Any]:
    """``events`` as the monitor is fed them once the results are resolved: each call
    with a result gets its own id (its event index) and its answer just before it; result
    events come without their values (they take their place in the count)."""
    watches = watcher(config)
    rows = answers.rows()
    row = next(rows, None)
    late: list[tuple[int, str, Answer]] = []  # error results due after their call
    for i, event in enumerate(events):
        etype = event.type
        if etype == TOOL_CALL and event.data is not None:
            data = event.data
            cid = None
            if row is not None and row[0] == i:
                _, at, blob = row
                row = next(rows, None)
                cid = str(i)
                if _watched(watches, data.tool_name):
                    answer = _decode(blob)
                    if answer.error is not None and at > i:
                        heapq.heappush(late, (at, cid, answer))
                    else:
                        monitor.answer_ahead(cid, answer)
            if cid != data.tool_call_id:
                event = msgspec.structs.replace(
                    event, data=msgspec.structs.replace(data, tool_call_id=cid))
            yield event
        elif etype == TOOL_RESULT:
            yield _BARE_RESULT
            while late and late[0][0] == i:
                _, cid, answer = heapq.heappop(late)
                monitor.answer_ahead(cid, answer)
        else:
            yield event


def _watched(watches: Any, name: Any) -> bool:
    if not isinstance(name, str):
        return False  # the monitor refuses the call itself
    try:
        return bool(watches(name))
    except UnsafeMatchError:
        return False  # likewise


def _bare_result() -> Any:
    from ..readers.vally import _Data, _Event

    return _Event(TOOL_RESULT, _Data())


_BARE_RESULT: Final = _bare_result()
