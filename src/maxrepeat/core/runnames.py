"""Run names that stay unique within one invocation.

Readers name a run by what the log calls it (an ``instance_id``, a session id, an Inspect
``task/sample/epoch``, a tau-bench ``taskN-trialM``) and, failing that, by where it was
read. Two files of one directory can therefore hold runs of the same name with different
results. `RunNames` keeps the first name as it is and gives a later, different run of
the same name its source: ``run-1 (logs/b.jsonl:3)`` (then `` #2``, `` #3`` should even
that repeat, as when one file is given twice). The results of one run (one per grader)
keep one name.
"""

from __future__ import annotations

import msgspec

from .result import GraderResult

try:  # hashlib's own C module: hashlib would load OpenSSL too (start-up is measured)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["RunNames"]


class RunNames:
    """Assigns each run a name not given to another run before.

    The results of one run (one per grader) come one after another: a result continues
    the current run while its name and source are the same and its grader has not been
    seen in that run yet.

    Only 64-bit digests of the names given are kept (a few dozen bytes per run, for
    batches of millions); two names with one digest (about one chance in 10^7 for ten
    million runs) merely make the later one longer, the same way on every run.

    >>> names = RunNames()
    >>> names.name("run-1", "a.jsonl:1", "g1"), names.name("run-1", "a.jsonl:1", "g2")
    ('run-1', 'run-1')
    >>> names.name("run-1", "b.jsonl:1", "g1")
    'run-1 (b.jsonl:1)'
    >>> names.name("run-1", "b.jsonl:1", "g1"), names.name("run-1", None, "g1")
    ('run-1 (b.jsonl:1) #2', 'run-1 #2')
    """

    def __init__(self) -> None:
        self._given: set[int] = set()
        self._run: tuple[str, str | None] | None = None
        self._graders: set[str] = set()
        self._current = ""

    def name(self, label: str, source: str | None, grader: str = "") -> str:
        """The name of the run called ``label``, read from ``source``."""
        if self._run == (label, source) and grader not in self._graders:
            self._graders.add(grader)
            return self._current
        name = label
        if _digest(name) in self._given:
            base = f"{label} ({source})" if source and source != label else label
            name, n = base, 2
            while _digest(name) in self._given:
                name, n = f"{base} #{n}", n + 1
        self._given.add(_digest(name))
        self._run, self._graders, self._current = (label, source), {grader}, name
        return name

    def rename(self, result: GraderResult) -> GraderResult:
        """``result`` under the unique name of its run.

        >>> from maxrepeat import MaxRepeatConfig, Trajectory, grade
        >>> runs = [Trajectory([], id="r", source=f) for f in ("a.json", "b.json")]
        >>> names = RunNames()
        >>> [names.rename(grade(t, MaxRepeatConfig(3))).trajectory for t in runs]
        ['r', 'r (b.json)']
        """
        name = self.name(result.trajectory, result.metadata.source, result.name)
        return result if name == result.trajectory else msgspec.structs.replace(
            result, trajectory=name)


def _digest(name: str) -> int:
    data = name.encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")
