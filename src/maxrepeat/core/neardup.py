"""Near-duplicate matching (opt-in): what a value becomes before it is fingerprinted.

Four config keys of a ``max-repeat`` grader, all absent by default (then nothing here
runs and every result is byte-identical to exact matching):

* ``ignore_arguments`` (``name-args``): argument keys left out, for every tool (a list)
  or per tool (a mapping from a tool-name regex, unanchored like ``tools``, to a list);
* ``normalize``: built-in rewrites of volatile text in every string of an observation
  (``observation``) or of the arguments (``name-args``), see `NORMALIZERS`;
* ``replace``: the user's own ``{pattern, with}`` regex replacements, after the built-ins;
* ``similarity`` (with ``similarity_min_length``): long strings that are similar enough
  to a recent one are replaced by that one (`Clusters`).

`Transform` applies them. It is deterministic and depends only on the values met so far,
in event order (observations: the first result of each call id, in the order the
results arrive; arguments: the watched calls, in order), so `grade()` of a prefix and the
`Monitor` after the same events agree exactly. See ``docs/design/near-duplicates.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

__all__ = [
    "NORMALIZERS",
    "VOLATILE",
    "NearDup",
    "Transform",
    "Clusters",
    "similarity",
    "expand_normalizers",
]

_Sub = tuple["re.Pattern[str]", "str | Callable[[re.Match[str]], str]"]

_TMP_PART: Final = re.compile(r"^(?:tmp|pytest-|pymp-)[\w.-]*$|^[\w.-]*\d[\w.-]*$")


def _tmp_path(m: re.Match[str]) -> str:
    # Keep the temp root and the stable parts (a file's name); hide parts made of random
    # letters and digits (tmpa1b2c3, pytest-17, 1f2e3d...).
    root, rest = m.group(1), m.group(2)
    parts = rest.split("/")
    return root + "/".join("<tmp>" if _TMP_PART.match(p) and p else p for p in parts)


_MONTH = r"(?:an|eb|ar|pr|ay|un|ul|ug|ep|ct|ov|ec)[a-z]*"
_TRAIL: Final = re.compile(r"[ \t\r]+\n")
_HEX_LETTER: Final = re.compile(r"[a-fA-F]")
_DIGIT: Final = re.compile(r"[0-9]")


def _hex(m: re.Match[str]) -> str:
    run = m.group(0)
    return "<hex>" if _HEX_LETTER.search(run) and _DIGIT.search(run) else run


def _trailing(text: str) -> str:
    return _TRAIL.sub("\n", text).rstrip() if text[-1:].isspace() or " \n" in text or \
        "\t\n" in text or "\r\n" in text else text


def _guarded(needles: tuple[str, ...], pattern: re.Pattern[str],
             repl: str | Callable[[re.Match[str]], str]) -> Callable[[str], str]:
    """A substitution run only when one of ``needles`` is in the text: an ``in`` test in
    C is far cheaper than a regex scan that finds nothing (same result either way, since
    every match contains one of the needles)."""
    sub = pattern.sub

    def apply(text: str) -> str:
        for needle in needles:
            if needle in text:
                return sub(repl, text)
        return text

    apply.pattern = pattern  # type: ignore[attr-defined]  # for tests and docs
    return apply


# Every pattern starts with a character class (a word boundary, when needed, is checked
# by a look-behind after the first character): the regex engine then skips ahead in C to
# candidate positions, which makes a scan several times cheaper than a leading \b.
#: The built-in normalizers, applied in this order (regex substitutions or functions).
NORMALIZERS: Final[dict[str, list[_Sub | Callable[[str], str]]]] = {
    "ansi": [(re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]"), "")],
    "trailing-whitespace": [_trailing],
    "timestamps": [
        (re.compile(r"[0-9](?<![\w][0-9])[0-9]{3}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}"
                    r"(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2}| ?UTC)?)?\b"),
         "<time>"),
        (re.compile(r"[MTWFS](?<![\w][MTWFS])(?:on|ue|ed|hu|ri|at|un)[a-z]*,? [0-9]{1,2} "
                    rf"[JFMASOND]{_MONTH} [0-9]{{4}}(?: [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}})?"
                    r"(?: [A-Z]{2,4}| [+-][0-9]{4})?"), "<time>"),
        (re.compile(rf"[JFMASOND](?<![\w][JFMASOND]){_MONTH} +[0-9]{{1,2}}(?:,? [0-9]{{4}})?"
                    r"(?: [0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?\b"), "<time>"),
        (re.compile(r"[0-9](?<![\w][0-9])[0-9]?:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?\b"), "<time>"),
        (re.compile(r"1(?<![\w]1)[5-9][0-9]{8}(?:\.[0-9]+|[0-9]{3})?\b"), "<time>"),  # epoch
    ],
    "durations": [
        (re.compile(r"[0-9](?<![\w.][0-9])[0-9]*m[0-9]+(?:\.[0-9]+)?s\b"), "<duration>"),
        (re.compile(r"[0-9](?<![\w.][0-9])[0-9]*(?:\.[0-9]+)? ?(?:ns|us|µs|ms|s|sec|secs|"
                    r"seconds?|min|mins|minutes?|h|hrs?|hours?|milliseconds?)\b"), "<duration>"),
    ],
    "ids": [
        (re.compile(r"[0-9a-fA-F](?<![\w][0-9a-fA-F])[0-9a-fA-F]{7}-[0-9a-fA-F]{4}-"
                    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
        # A run of 12+ hex digits of one case, with a letter and a digit in it (so not a
        # plain number or word); the mix is checked only on such runs, which are rare.
        (re.compile(r"[0-9a-f](?<![\w][0-9a-f])[0-9a-f]{11,}\b"
                    r"|[0-9A-F](?<![\w][0-9A-F])[0-9A-F]{11,}\b"), _hex),
    ],
    "addresses": [_guarded(("0x",), re.compile(r"0(?<![\w]0)x[0-9a-fA-F]{4,}\b"), "<addr>")],
    "pids": [
        _guarded(("id", "ID", "rocess", "ort", "ORT"),
                 re.compile(r"([pP](?<![\w][pP])(?:id|ID|rocess|ort|ORT))( ?[=:#]? ?)[0-9]+\b"),
                 r"\1\2<n>"),
        _guarded(("localhost", "127.0.0.1", "0.0.0.0", "::"),
                 re.compile(r"(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|::1?):[0-9]{2,5}\b"),
                 r"\1:<port>"),
        (re.compile(r"\[([0-9]{2,7})\]"), "[<pid>]"),  # syslog-style worker[12345]
    ],
    "temp-paths": [
        _guarded(("/tmp/", "/var/", "/dev/shm/"),
                 re.compile(r"((?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)/)([^\s'\"`:;,)]*)"),
                 _tmp_path),
        _guarded(("\\",),
                 re.compile(r"(?i)([a-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\)([^\s'\"]*)"),
                 lambda m: m.group(1) + "<tmp>"),
    ],
    "numbers": [(re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"), "<n>")],
}

#: ``volatile``: every built-in normalizer but ``numbers`` (counters are often progress).
VOLATILE: Final = tuple(n for n in NORMALIZERS if n != "numbers")


def expand_normalizers(names: Sequence[str]) -> tuple[str, ...]:
    """The built-in normalizers named (``volatile`` expands), in their fixed order.

    >>> expand_normalizers(["numbers", "ansi"])
    ('ansi', 'numbers')
    >>> "numbers" in expand_normalizers(["volatile"])
    False
    """
    wanted = set(names)
    if "volatile" in wanted:
        wanted.update(VOLATILE)
    return tuple(n for n in NORMALIZERS if n in wanted)


def _shingles(text: str) -> frozenset[Any]:
    words = text.split()
    if len(words) < 2:
        return frozenset(words)
    return frozenset(zip(words, words[1:]))


def similarity(a: str, b: str) -> float:
    """The documented measure: Jaccard similarity of the sets of adjacent word pairs.

    Words are runs of non-white-space; a text of one word is its one-word set. 1.0 means
    the same pairs (not necessarily the same text); an empty pair of sets is 1.0.

    >>> round(similarity("1 failed in run 7 of the suite", "1 failed in run 8 of the suite"), 3)
    0.556
    >>> similarity("a b c", "a b c")
    1.0
    """
    return _jaccard(_shingles(a), _shingles(b))


def _jaccard(x: frozenset[Any], y: frozenset[Any]) -> float:
    if not x and not y:
        return 1.0
    inter = len(x & y)
    return inter / (len(x) + len(y) - inter)


#: How many recent cluster representatives a long string is compared with.
WINDOW: Final = 8


class Clusters:
    """Long strings grouped by `similarity`, deterministically in the order they are met.

    Each string is compared with the representatives of the `WINDOW` clusters used most
    recently; it joins the most similar one at or above the threshold (ties: the most
    recently used) and is replaced by its text, or founds a new cluster and stays as it
    is. Only the representatives' texts are kept (`texts`), most recent first.

    >>> c = Clusters(0.8)
    >>> long = "pytest ran 40 tests and 1 failed: test_parse expected 3 got 4 " * 3
    >>> c.assign(long) == c.assign(long.replace("got 4", "got 5", 1))
    True
    """

    __slots__ = ("threshold", "texts", "_sets")

    def __init__(self, threshold: float, texts: list[str] | None = None) -> None:
        self.threshold = threshold
        self.texts: list[str] = texts if texts is not None else []
        self._sets: dict[str, frozenset[Any]] = {}

    def _set(self, text: str) -> frozenset[Any]:
        got = self._sets.get(text)
        if got is None:
            got = self._sets[text] = _shingles(text)
        return got

    def assign(self, text: str) -> str:
        """The representative text for ``text`` (itself when it founds a cluster)."""
        texts = self.texts
        if text in texts:
            best = texts.index(text)
        else:
            mine = _shingles(text)
            best = -1
            best_sim = -1.0
            for i, rep in enumerate(texts):
                sim = _jaccard(mine, self._set(rep))
                if sim >= self.threshold and sim > best_sim:
                    best, best_sim = i, sim
            if best < 0:
                texts.insert(0, text)
                self._sets[text] = mine
                self._trim()
                return text
        rep = texts.pop(best)
        texts.insert(0, rep)
        return rep

    def _trim(self) -> None:
        while len(self.texts) > WINDOW:
            self._sets.pop(self.texts.pop(), None)


@dataclass(frozen=True, slots=True)
class NearDup:
    """The near-duplicate settings of one grader (validated by `MaxRepeatConfig`)."""

    ignore_all: frozenset[str] = frozenset()
    ignore_by_tool: tuple[tuple[Any, frozenset[str]], ...] = ()  # (tool pattern, keys)
    normalizers: tuple[str, ...] = ()
    replace: tuple[tuple[re.Pattern[str], str], ...] = ()
    similarity: float | None = None
    min_length: int = 200

    @property
    def rewrites_strings(self) -> bool:
        """Whether strings are rewritten at all (normalizers, replacements, similarity)."""
        return bool(self.normalizers or self.replace or self.similarity is not None)

    def ignored(self, tool: str) -> frozenset[str]:
        """The argument keys left out for a tool."""
        keys = self.ignore_all
        for pattern, more in self.ignore_by_tool:
            if pattern.search(tool):
                keys = keys | more
        return keys


class Transform:
    """Applies one grader's `NearDup` settings to values, in event order (it keeps the
    similarity clusters, so the order of calls matters and must be the event order)."""

    __slots__ = ("near", "clusters", "_steps", "_ignored")

    def __init__(self, near: NearDup, clusters: list[str] | None = None) -> None:
        self.near = near
        self.clusters = (Clusters(near.similarity, clusters)
                         if near.similarity is not None else None)
        steps: list[Callable[[str], str]] = []
        for name in near.normalizers:
            for step in NORMALIZERS[name]:
                steps.append(step if callable(step) else partial(step[0].sub, step[1]))
        steps.extend(partial(pattern.sub, repl) for pattern, repl in near.replace)
        self._steps = steps
        self._ignored: dict[str, frozenset[str]] = {}

    def text(self, text: str) -> str:
        """One string, normalized, replaced, then clustered if long enough."""
        for step in self._steps:
            text = step(text)
        if self.clusters is not None and len(text) >= self.near.min_length:
            text = self.clusters.assign(text)
        return text

    def value(self, value: Any) -> Any:
        """Every string in a JSON value rewritten by `text` (depth first, keys in sorted
        order, so the order does not depend on how the JSON was spelled)."""
        if not self.near.rewrites_strings:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, Mapping):
            return {k: self._walk(value[k]) for k in sorted(value)}
        return value

    def arguments(self, tool: str, arguments: Any) -> Any:
        """A call's arguments without its ignored keys, strings rewritten."""
        if isinstance(arguments, Mapping):
            ignored = self._ignored.get(tool)
            if ignored is None:
                ignored = self._ignored[tool] = self.near.ignored(tool)
            if ignored:
                arguments = {k: v for k, v in arguments.items() if k not in ignored}
        return self.value(arguments)

    def state(self) -> list[str]:
        """The cluster representatives (to save a monitor's state)."""
        return list(self.clusters.texts) if self.clusters is not None else []
