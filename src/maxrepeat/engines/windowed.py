"""Grading one large trajectory document window by window: the batch grader's machinery
(msgspec decoding, `build_step_table`, the native scan) in memory bounded by a window.

`readers._windows` hands the events a window at a time, decoded as the in-memory reader
decodes them. Here:

* **Steps** are grouped per segment: a window's events up to its last open turn (the
  events from that ``turn_start`` on wait for the next window, since more calls may join
  that step). A turn is the only thing that ties events together, so each segment's
  step table is the slice of the whole one.
* **Runs** are searched by `core.windowsearch.WindowSearch`, which carries for every
  period the stretch reaching the last step (never the steps of a long run).
* **Observation** mode gives a call the *first* result with its id anywhere in the
  document (spec §1). A first pass writes each id's first result (its JSON bytes) to a
  temporary SQLite table; each segment then gets, for its calls' ids, those results
  appended at its end and its own result events without an id (so the first result of
  each id in the segment is the document's first). Event indices are unchanged.

Near-duplicate settings (``normalize``, ``similarity``) and a config that cannot grade
take the monitor path (`engines.streamed`), as does any document `readers._windows`
refuses (`NotWindowed`). See docs/design/streaming.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from itertools import compress
from operator import attrgetter
from typing import Any, Final

import msgspec

from ..core.config import MaxRepeatConfig
from ..core.errors import MalformedValueError, TrajectoryFormatError, UnsafeMatchError
from ..core.events import TOOL_CALL, TOOL_RESULT, TURN_END, TURN_START, Trajectory
from ..core import accel
from ..core.fingerprints import StepTable, _native_keyed_table, build_step_table_pure
from ..core.grade import build_result, error_result, internal_error
from ..core.preview import step_preview
from ..core.result import GraderResult
from ..core.steps import MISSING, SingleCallSteps
from ..core.windowsearch import Described, WindowSearch
from ..readers._windows import NotWindowed, WindowedDocument
from .driver import Graded, Graders

__all__ = ["grade_windowed", "CACHE_KIB"]

#: SQLite's page cache for the first results, KiB (the rest stays on disk).
CACHE_KIB: Final = 4096
_TYPE: Final = attrgetter("type")
_DATA: Final = attrgetter("data")
_CALL_ID: Final = attrgetter("tool_call_id")
_RESULT: Final = attrgetter("result")
_IN_LIST: Final = 500  # ids per SELECT (SQLite's limit on parameters is far above)


def grade_windowed(doc: WindowedDocument, graders: Graders) -> Graded | None:
    """The results of `grade()` on the whole document for each grader, or None when the
    document (or a grader) must take the monitor path. `OSError` passes through."""
    if not all(c.near is None and not c.empty_patterns() for c in graders.configs):
        return None
    observe = any(c.match == "observation" for c in graders.configs)
    firsts: _FirstResults | None = None
    try:
        if observe:
            firsts = _FirstResults.fill(doc.windows())
        runs = [_Grader(c, n, graders.max_runs) for c, n in zip(graders.configs, graders.names)]
        for offset, events in segments(doc.windows()):
            substituted: list[Any] | None = None
            for g in runs:
                if g.error is not None:
                    continue
                if g.config.match == "observation":
                    if substituted is None:
                        assert firsts is not None
                        substituted = firsts.substitute(events)
                    g.feed(offset, substituted)
                else:
                    g.feed(offset, events)
    except NotWindowed:
        return None
    finally:
        if firsts is not None:
            firsts.close()
    traj = Trajectory(events=(), id=doc.id, source=doc.source.name)
    return Graded(tuple(g.result(traj) for g in runs))


# --- segments: windows cut after their last closed turn ---------------------------------


def _open_turn_at(events: list[Any]) -> int | None:
    """Index of the ``turn_start`` of a turn still open at the end of ``events``; None
    when the last turn boundary closes it; -1 when there is no boundary at all."""
    for i in range(len(events) - 1, -1, -1):
        etype = events[i].type
        if etype == TURN_START:
            return i
        if etype == TURN_END:
            return None
    return -1


def segments(windows: Iterable[tuple[int, list[Any]]]) -> Iterator[tuple[int, list[Any]]]:
    """(index of the first event, events) whose steps are whole: each window up to the
    turn still open at its end, which goes with the next window.

    >>> from maxrepeat import tool_call, turn_start
    >>> w = [(0, [turn_start(), tool_call("a")]), (2, [tool_call("b"), turn_start()])]
    >>> [(at, len(ev)) for at, ev in segments(w)]
    [(0, 3), (3, 1)]
    """
    held: list[Any] = []
    held_at = 0
    for first, events in windows:
        at = held_at if held else first
        combined = held + events if held else events
        k = _open_turn_at(events)
        if k == -1:
            if held:
                held = combined
                continue
            yield first, events
        elif k is None:
            held = []
            yield at, combined
        else:
            cut = len(combined) - len(events) + k
            if cut:
                yield at, combined[:cut]
            held = combined[cut:]
            held_at = at + cut
    if held:
        yield held_at, held


# --- one grader -------------------------------------------------------------------------


class _Grader:
    """One config's state across segments."""

    def __init__(self, config: MaxRepeatConfig, name: str, max_runs: int) -> None:
        self.config = config
        self.name = name
        self.search = WindowSearch(config.max_cycle_period, config.max, max_runs)
        self.calls = 0
        self.error: str | None = None
        self.internal = False

    def feed(self, offset: int, events: list[Any]) -> None:
        config = self.config
        try:
            table = _keyed_table(events, config)
        except TrajectoryFormatError:
            raise NotWindowed("checked path") from None  # its message names the event
        except RecursionError:
            self.error = "a value in the trajectory is nested too deeply to compare"
            return
        except UnsafeMatchError as err:
            self.error = str(err)
            return
        except MalformedValueError as err:
            self.error = f"malformed value in trajectory: {err}"
            return
        except Exception as err:  # grade() never raises; a bug is named as one
            self.error = internal_error(err)
            return
        steps = table.steps
        if isinstance(steps, SingleCallSteps):
            firsts = [offset + i for i in steps.calls]
            lasts = firsts
        else:
            firsts = [offset + s[0] for s in steps]
            lasts = [offset + s[-1] for s in steps]
        match = config.match
        results = table.results

        def describe(j: int) -> Described:
            calls = []
            names = set()
            for i in steps[j]:
                data = events[i].data
                cid = data.tool_call_id
                obs = (results.get(cid, MISSING)
                       if cid is not None and match == "observation" else MISSING)
                calls.append((data.tool_name, data.arguments, obs))
                names.add(data.tool_name)
            return step_preview(calls, match), tuple(sorted(names))

        self.search.push(table.keys, firsts, lasts, describe)
        self.calls += table.calls

    def result(self, traj: Trajectory) -> GraderResult:
        if self.error is not None:
            return error_result(traj.label, self.config, self.error, name=self.name,
                                trajectory=traj)
        best, tools, runs, total, covered = self.search.finish()
        return build_result(traj, self.config, self.name, best=best, best_tools=tools,
                            runs=runs, watched_steps=self.search.steps,
                            watched_calls=self.calls, empty_steps=self.search.empty,
                            loop_steps=covered, runs_total=total)


def _keyed_table(events: list[Any], config: MaxRepeatConfig) -> StepTable:
    """`build_step_table` with the steps' keys made: a window's steps are compared with
    the previous window's by key (the ids number the steps of one table only)."""
    native = accel.native
    if native is not None:
        table = _native_keyed_table(native, events, config)
        if table is not None:
            return table
    return build_step_table_pure(events, config)


# --- observation mode: each id's first result, on disk ----------------------------------


class _FirstResults:
    """The first result of every call id of the document, in a temporary SQLite table."""

    def __init__(self) -> None:
        import sqlite3
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix="maxrepeat-results-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, "results.sqlite"))
        for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}",
                       "temp_store=FILE", "locking_mode=EXCLUSIVE"):
            self.db.execute("PRAGMA " + pragma)
        self.db.execute("CREATE TABLE results (cid TEXT PRIMARY KEY, ans BLOB)"
                        " WITHOUT ROWID")

    @classmethod
    def fill(cls, windows: Iterable[tuple[int, list[Any]]]) -> _FirstResults:
        """One pass: each id's first result (in event order; the first one wins)."""
        import sqlite3

        try:
            self = cls()
        except (sqlite3.Error, OSError):
            raise NotWindowed("no database") from None
        try:
            add = "INSERT OR IGNORE INTO results VALUES (?, ?)"
            for _, events in windows:
                rows = _result_rows(events)
                self.db.executemany(add, rows)
            self.db.commit()
        except (sqlite3.Error, MemoryError, UnicodeEncodeError):
            self.close()
            raise NotWindowed("database") from None
        except BaseException:
            self.close()
            raise
        return self

    def substitute(self, events: list[Any]) -> list[Any]:
        """``events`` with their results' ids taken away and, at the end, the first
        result of each id their calls carry."""
        types = list(map(_TYPE, events))
        cids = {d.tool_call_id for d in map(_DATA, compress(events, map(TOOL_CALL.__eq__,
                                                                          types)))
                if d is not None and d.tool_call_id is not None}
        out = [_BARE if t == TOOL_RESULT else e for e, t in zip(events, types)]
        wanted = list(cids)
        for a in range(0, len(wanted), _IN_LIST):
            part = wanted[a:a + _IN_LIST]
            query = ("SELECT cid, ans FROM results WHERE cid IN ("
                     + ",".join("?" * len(part)) + ")")
            for cid, ans in self.db.execute(query, part):
                out.append(_Event(TOOL_RESULT, _Data(
                    tool_call_id=cid, result=None if ans is None else msgspec.Raw(ans))))
        return out

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            self._dir.cleanup()


def _result_rows(events: list[Any]) -> Iterator[tuple[str, Any]]:
    """(id, result bytes or None) of each result event with an id, in order."""
    datas = [d for d in map(_DATA, compress(events, map(TOOL_RESULT.__eq__,
                                                        map(_TYPE, events))))
             if d is not None and d.tool_call_id is not None]
    return zip(map(_CALL_ID, datas), map(_RESULT, datas))


def _structs() -> tuple[Any, Any]:
    from ..readers.vally import _Data, _Event

    return _Data, _Event


_Data, _Event = _structs()
_BARE: Final = _Event(TOOL_RESULT, _Data())
