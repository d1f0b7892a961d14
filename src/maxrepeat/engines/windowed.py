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
refuses (`_NotWindowed`). See docs/design/streaming.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Any, Final

from ..core.config import MaxRepeatConfig
from ..core.errors import MalformedValueError, TrajectoryFormatError, UnsafeMatchError
from ..core.events import TOOL_RESULT, TURN_END, TURN_START, Trajectory
from ..core.fingerprints import build_step_table
from ..core.grade import build_result, error_result, internal_error
from ..core.result import GraderResult, Watched
from ..core.search import step_view
from ..core.steps import MISSING, SingleCallSteps
from ..core.windowsearch import Described, WindowSearch
from ..readers._windows import WindowedDocument, _NotWindowed
from ._firstresults import FirstResults, structs
from .driver import Graded, Graders
from .scratch import CACHE_KIB

__all__ = ["grade_windowed", "segments", "CACHE_KIB"]

_TYPE: Final = attrgetter("type")
_DATA: Final = attrgetter("data")


def grade_windowed(doc: WindowedDocument, graders: Graders) -> Graded | None:
    """The results of `grade()` on the whole document for each grader, or None when the
    document (or a grader) must take the monitor path. `OSError` passes through."""
    if not all(c.near is None and not c.empty_patterns() for c in graders.configs):
        return None
    observe = any(c.match == "observation" for c in graders.configs)
    firsts: FirstResults | None = None
    try:
        if observe:
            firsts = FirstResults.fill(segments(doc.windows(light=True)))
        runs = [_Grader(c, n, graders.max_runs)
                for c, n in zip(graders.configs, graders.names, strict=True)]
        for offset, events in segments(doc.windows()):
            substituted: list[Any] | None = None
            for g in runs:
                if g.error is not None:
                    continue
                if g.config.match == "observation":
                    if substituted is None:
                        assert firsts is not None
                        substituted = firsts.substitute(offset, events)
                    g.feed(offset, substituted)
                else:
                    g.feed(offset, events)
    except _NotWindowed:
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
    """One config's state across segments.

    Each segment's table is built (`build_step_table`, the native ``build_ids`` when
    active) over the carried steps followed by the segment: each carried step as a turn
    of its own holding its calls and, in observation mode, their first results. Its ids
    then number the carried steps and the new ones alike (ids number one table's steps
    only), and `WindowSearch.push_ids` compares them across the window's edge."""

    def __init__(self, config: MaxRepeatConfig, name: str, max_runs: int) -> None:
        self.config = config
        self.name = name
        self.search = WindowSearch(config.max_cycle_period, config.max, max_runs)
        self.calls = 0
        self.error: str | None = None
        self.carried: list[list[Any]] = []  # the events of the carried steps

    def feed(self, offset: int, segment: list[Any]) -> None:
        config = self.config
        prefix = [e for step in self.carried for e in step]
        events = prefix + segment if prefix else segment
        try:
            table = build_step_table(events, config)
        except TrajectoryFormatError:
            raise _NotWindowed("checked path") from None  # its message names the event
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
        t = len(self.carried)
        steps = table.steps
        if len(steps) < t:  # pragma: no cover - each carried step is a turn of its own
            raise _NotWindowed("carried steps")
        shift = offset - len(prefix)  # event index in the document of events[i]
        new = range(t, len(steps))
        if isinstance(steps, SingleCallSteps):
            firsts = [shift + i for i in steps.calls[t:]]
            lasts = firsts
        else:
            firsts = [shift + steps[j][0] for j in new]
            lasts = [shift + steps[j][-1] for j in new]
        results = table.results

        def describe(w: int) -> Described:
            return step_view(events, table, t + w, config.match)

        self.search.push_ids(table.ids, firsts, lasts, describe)
        self.calls += table.calls - sum(len(steps[j]) for j in range(t))
        keep = self.search.carried
        start = max(t, len(steps) - keep)
        carried = self.carried[len(self.carried) - (keep - (len(steps) - start)):]
        carried += [self._as_turn(events, steps[j], results) for j in range(start, len(steps))]
        self.carried = carried[len(carried) - keep:] if keep else []

    def _as_turn(self, events: list[Any], step: list[int], results: Any) -> list[Any]:
        """A step's calls as a turn of its own, with their first results in observation
        mode (the first with their id in any table they are put in: see the class)."""
        calls = [events[i] for i in step]
        out = [_TURN_START, *calls]
        if self.config.match == "observation":
            for call in calls:
                cid = call.data.tool_call_id
                if cid is not None:
                    value = results.get(cid, MISSING)
                    if value is not MISSING:
                        out.append(_Event(TOOL_RESULT, _Data(tool_call_id=cid, result=value)))
        out.append(_TURN_END)
        return out

    def result(self, traj: Trajectory) -> GraderResult:
        if self.error is not None:
            return error_result(traj.label, self.config, self.error, name=self.name,
                                trajectory=traj)
        watched = Watched(steps=self.search.steps, calls=self.calls,
                          empty=self.search.empty)
        return build_result(traj, self.config, self.name, self.search.finish(), watched)


_Data, _Event = structs()
_TURN_START: Final = _Event(TURN_START, _Data())
_TURN_END: Final = _Event(TURN_END, _Data())
