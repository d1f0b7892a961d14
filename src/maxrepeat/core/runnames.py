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

    Only 64-bit digests of the names given are kept, in one flat table (11 to 21 bytes
    a run, 32 while it doubles: 5 million runs hold 64 MB, where a ``set`` of ints held
    ~80 bytes a run); two names with one digest (about one chance in 10^7 for ten
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
        self._given = _DigestSet()
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
    # 0 marks an empty slot of `_DigestSet`
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little") or 1


class _DigestSet:
    """A set of non-zero 64-bit ints in one open-addressing table (linear probing, at
    most three quarters full): 8 bytes a slot instead of an int object and a set entry.

    >>> s = _DigestSet()
    >>> for d in range(1, 100): s.add(d * 2**40)
    >>> 2**40 in s, 3 in s, len(s)
    (True, False, 99)
    """

    def __init__(self) -> None:
        self._slots = memoryview(bytearray(8 * 16)).cast("Q")
        self._mask = 15
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def _find(self, digest: int) -> int:
        slots, mask = self._slots, self._mask
        i = (digest ^ (digest >> 29)) & mask
        while True:
            held = slots[i]
            if held == digest or held == 0:
                return i
            i = (i + 1) & mask

    def __contains__(self, digest: int) -> bool:
        return bool(self._slots[self._find(digest)])

    def add(self, digest: int) -> None:
        i = self._find(digest)
        if self._slots[i]:
            return
        self._slots[i] = digest
        self._count += 1
        if 4 * self._count > 3 * self._mask:
            self._grow()

    def _grow(self) -> None:
        old = self._slots
        self._mask = 2 * self._mask + 1
        self._slots = memoryview(bytearray(8 * (self._mask + 1))).cast("Q")
        for digest in old:
            if digest:
                self._slots[self._find(digest)] = digest
        old.release()
