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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .normalizers import NORMALIZERS, VOLATILE, expand_normalizers, rewriter

__all__ = [
    "NORMALIZERS",
    "VOLATILE",
    "NearDup",
    "Transform",
    "Clusters",
    "similarity",
    "expand_normalizers",
]


def _shingles(text: str) -> frozenset[Any]:
    words = text.split()
    if len(words) < 2:
        return frozenset(words)
    return frozenset(zip(words, words[1:], strict=False))


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


#: At most this many distinct strings, of this many characters in all, whose rewrite a
#: `Transform` keeps.
_CACHE_SIZE: Final = 4096
_CACHE_CHARS: Final = 4_000_000

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
    observation: bool = False  # with_observation (name-args): the answer is compared too

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

    __slots__ = ("near", "clusters", "_rewrite", "_ignored", "_cache", "_cached_chars")

    def __init__(self, near: NearDup, clusters: list[str] | None = None) -> None:
        self.near = near
        self.clusters = (Clusters(near.similarity, clusters)
                         if near.similarity is not None else None)
        self._rewrite = rewriter(near.normalizers, near.replace)
        self._ignored: dict[str, frozenset[str]] = {}
        # The rewrite of each distinct string met recently (a loop repeats its values):
        # pure, so caching it never changes a result; cleared when full to bound memory.
        self._cache: dict[str, str] = {}
        self._cached_chars = 0

    def text(self, text: str) -> str:
        """One string, normalized, replaced, then clustered if long enough."""
        cache = self._cache
        out = cache.get(text)
        if out is None:
            out = self._rewrite(text)
            size = len(text) + len(out)
            if len(cache) >= _CACHE_SIZE or self._cached_chars + size > _CACHE_CHARS:
                cache.clear()
                self._cached_chars = 0
            if size <= _CACHE_CHARS:
                cache[text] = out
                self._cached_chars += size
        if self.clusters is not None and len(out) >= self.near.min_length:
            out = self.clusters.assign(out)
        return out

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
            if self.clusters is None:  # the order matters only to the clusters
                return {k: self._walk(v) for k, v in value.items()}
            return {k: self._walk(value[k]) for k in sorted(value)}
        return value

    def arguments(self, tool: str, arguments: Any) -> Any:
        """A call's arguments without its ignored keys, strings rewritten."""
        if isinstance(arguments, Mapping):
            ignored = self._ignored.get(tool)
            if ignored is None:
                ignored = self._ignored[tool] = self.near.ignored(tool)
            if ignored and not ignored.isdisjoint(arguments):
                arguments = {k: v for k, v in arguments.items() if k not in ignored}
        return self.value(arguments)

    def state(self) -> list[str]:
        """The cluster representatives (to save a monitor's state)."""
        return list(self.clusters.texts) if self.clusters is not None else []
