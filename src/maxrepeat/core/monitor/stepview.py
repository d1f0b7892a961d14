"""Incremental step state: how the monitor sees a step, pushed or still open.

A pushed step is reduced once to a `DoneStep` (its key, preview and tool names). The open
turn's step may hold thousands of parallel calls and changes with every call and result,
so it is summarised incrementally (`Live`: call count, calls lacking an observation, tool
names, an order-free sum of the call digests) and its exact key is built only when count
and sum match an earlier step's.
"""

from __future__ import annotations

from typing import Final

from ..fingerprints import digest, step_key
from ..preview import STEP_CALL_LIMIT
from ..rules import step_is_empty
from .state import Answer, Call, DoneStep, OpenStep

__all__ = ["observed", "join_previews", "Live", "StepViews"]

_NO_OBSERVATION: Final = b"\x00no-observation"
_MASK: Final = (1 << 128) - 1


def observed(name_digest: bytes, answer: Answer | None) -> bytes:
    """An observation-mode call fingerprint: the tool name and its observation."""
    if answer is None or answer.key is None:
        return digest(name_digest + _NO_OBSERVATION)
    return digest(name_digest + b"\x01" + answer.key)


def join_previews(previews: list[str], total: int) -> str:
    """``step_preview``'s layout, from call previews made when each call arrived."""
    if total > STEP_CALL_LIMIT:
        more = total - STEP_CALL_LIMIT
        previews = [*previews[:STEP_CALL_LIMIT], f"… ({more} more calls)"]
    return " + ".join(previews)


def _h(d: bytes) -> int:
    return int.from_bytes(d if len(d) == 16 else digest(d), "little")


def _sum_bytes(total: int) -> bytes:
    return (total & _MASK).to_bytes(16, "little")


class Live:
    """The open turn's step, kept up to date call by call: its size, how many calls lack
    an observation, the sum of its call digests and its tool names. Comparing it with an
    earlier step then costs O(1) unless the sums agree (then the exact key decides)."""

    __slots__ = ("step", "absorbed", "mhash", "empties", "names", "waiting", "done")

    def __init__(self, step: OpenStep) -> None:
        self.step = step
        self.absorbed = 0
        self.mhash = 0
        self.empties = 0
        self.names: set[str] = set()
        self.waiting: dict[str, list[bytes]] = {}  # call id -> name bytes of its calls
        self.done: DoneStep | None = None  # the exact view, made only when needed


class StepViews:
    """Makes `DoneStep` views of steps for one match mode and period bound; keeps the
    `Live` summary of the open step (not saved: rebuilt from the tail on demand)."""

    __slots__ = ("observation", "period", "live", "empties")

    def __init__(self, observation: bool, period: int, empties: bool = True) -> None:
        self.observation = observation
        self.period = period
        self.live: Live | None = None
        # observation mode: a step whose calls all lack an observation is empty; with
        # name-args + with_observation a call keeps its action, so no step is empty
        self.empties = observation and empties

    def done(self, step: OpenStep, answers: dict[str, Answer]) -> DoneStep:
        """The step as the search sees it now (final once the step is settled)."""
        calls = step.calls
        if self.observation:
            digests = []
            empties = 0
            for c in calls:
                answer = answers.get(c.cid) if c.cid is not None else None
                if answer is None or answer.key is None:
                    empties += 1
                digests.append(observed(c.digest, answer))
            empty = self.empties and step_is_empty(empties, len(calls), self.period)
        else:
            digests = [c.digest for c in calls]
            empty = False
        mhash = _sum_bytes(sum(map(_h, digests)))
        key = None if empty else step_key(digests)
        return DoneStep(step.index, calls[0].event, calls[-1].event, key,
                        self.preview(calls, answers), sorted({c.name for c in calls}),
                        len(calls), mhash)

    def preview(self, calls: list[Call], answers: dict[str, Answer]) -> str:
        """The step preview, as ``step_preview`` makes it in `grade()`."""
        shown = calls[:STEP_CALL_LIMIT]
        if self.observation:
            texts = []
            for c in shown:
                answer = answers.get(c.cid) if c.cid is not None else None
                texts.append(
                    c.head + " -> " + ("(no result)" if answer is None else answer.preview)
                )
        else:
            texts = [c.head for c in shown]
        return join_previews(texts, len(calls))

    def live_view(self, step: OpenStep, answers: dict[str, Answer]) -> tuple[DoneStep, Live]:
        """The open step as the search sees it, from its incremental summary (its key is
        ``b""`` when not empty: compare it with `live_equals`, never by key)."""
        live = self.live
        if live is None or live.step is not step:
            live = self.live = Live(step)
        calls = step.calls
        if live.absorbed < len(calls):
            for c in calls[live.absorbed:]:
                answer = answers.get(c.cid) if c.cid is not None else None
                fp = observed(c.digest, answer) if self.observation else c.digest
                live.mhash += _h(fp)
                live.names.add(c.name)
                if self.observation and (answer is None or answer.key is None):
                    live.empties += 1
                    if answer is None and c.cid is not None:
                        live.waiting.setdefault(c.cid, []).append(c.digest)
            live.absorbed = len(calls)
            live.done = None
        n = len(calls)
        empty = self.empties and step_is_empty(live.empties, n, self.period)
        view = DoneStep(step.index, calls[0].event, calls[-1].event, None if empty else b"",
                        self.preview(calls, answers), sorted(live.names), n)
        return view, live

    def live_answered(self, cid: str, answer: Answer) -> None:
        """A first result arrived: update the open step's summary if it waits for it."""
        live = self.live
        if live is None:
            return
        live.done = None  # its preview changes, whatever the value
        names = live.waiting.pop(cid, None)
        if names is None or answer.key is None:
            return
        for nb in names:
            live.mhash += _h(observed(nb, answer)) - _h(observed(nb, None))
            live.empties -= 1

    def live_equals(self, live: Live, other: DoneStep, answers: dict[str, Answer]) -> bool:
        """Whether the open step's fingerprint equals a pushed step's (not empty)."""
        if other.key is None or other.calls != live.absorbed:
            return False
        if other.mhash != _sum_bytes(live.mhash):
            return False
        if live.done is None:
            live.done = self.done(live.step, answers)
        return live.done.key == other.key
