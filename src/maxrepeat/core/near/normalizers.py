"""The built-in normalizers of near-duplicate matching (``normalize: [...]``): regex
rewrites of volatile text, in a fixed order, and the cheap checks that let a text skip
the ones that cannot match it.

`NORMALIZERS` is the definition: a text goes through every substitution of every named
normalizer, in order. `rewriter` builds the function that does exactly that, faster:
each normalizer (or a single substitution) has a *pre-check* that is true for every text
in which one of its patterns could match, so a text failing it comes out unchanged and
the scan is skipped. A pre-check is a C-level ``in`` test for a substring that every match
contains, or one regex scan that accepts a superset of what the normalizer's patterns
accept; it is run on the text as the earlier normalizers left it, so the result is the
same as applying every substitution (`tests/core/near/test_neardup.py` checks it on
generated texts).
The pre-checks are in `_prechecks`, the table's functions and shared pattern parts in
`_rewrites`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Final

from ._prechecks import BLOCK, BLOCK_SCAN, PRECHECKS, block_check
from ._rewrites import (
    DUR_BEFORE,
    KEYED,
    MONTH,
    TRAIL,
    escaped_check,
    hex_run,
    keyed_check,
    keyed_durations,
    tmp_path,
    trailing,
)

__all__ = ["NORMALIZERS", "VOLATILE", "NATIVE", "NATIVE_BITS", "PATTERN_OF",
           "expand_normalizers", "native_mask", "rewriter"]

_Sub = tuple["re.Pattern[str]", "str | Callable[[re.Match[str]], str]"]

# Every pattern starts with a character class (a word boundary, when needed, is checked
# by a look-behind after the first character): the regex engine then skips ahead in C to
# candidate positions, which makes a scan several times cheaper than a leading \b.
#: The built-in normalizers, applied in this order (regex substitutions or functions).
NORMALIZERS: Final[dict[str, list[_Sub | Callable[[str], str]]]] = {
    "ansi": [(re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]"), "")],
    "trailing-whitespace": [trailing],
    "timestamps": [
        (re.compile(r"[0-9](?<![\w][0-9])[0-9]{3}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}"
                    r"(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2}| ?UTC)?)?\b"),
         "<time>"),
        (re.compile(r"[MTWFS](?<![\w][MTWFS])(?:on|ue|ed|hu|ri|at|un)[a-z]*,? [0-9]{1,2} "
                    rf"[JFMASOND]{MONTH} [0-9]{{4}}(?: [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}})?"
                    r"(?: [A-Z]{2,4}| [+-][0-9]{4})?"), "<time>"),
        (re.compile(rf"[JFMASOND](?<![\w][JFMASOND]){MONTH} +[0-9]{{1,2}}(?:,? [0-9]{{4}})?"
                    r"(?: [0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?\b"), "<time>"),
        (re.compile(r"[0-9](?<![\w][0-9])[0-9]?:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?\b"), "<time>"),
        # epoch seconds, with a fraction or in ms, µs or ns (date +%s%N)
        (re.compile(r"1(?<![\w]1)[5-9][0-9]{8}(?:\.[0-9]+|[0-9]{9}|[0-9]{6}|[0-9]{3})?\b"),
         "<time>"),
    ],
    # After no \w and no '.', or after an escaped newline, tab or carriage return written
    # out (`\t0.205s`: go test's time in output that is itself JSON text, Codex <= 0.4x).
    "durations": [
        (re.compile(rf"[0-9]{DUR_BEFORE}[0-9]*m[0-9]+(?:\.[0-9]+)?s\b"), "<duration>"),
        (re.compile(rf"[0-9]{DUR_BEFORE}[0-9]*(?:\.[0-9]+)? ?(?:ns|us|µs|ms|s|sec|secs|"
                    r"seconds?|min|mins|minutes?|h|hrs?|hours?|milliseconds?)\b"), "<duration>"),
        keyed_durations,
    ],
    "ids": [
        (re.compile(r"[0-9a-fA-F](?<![\w][0-9a-fA-F])[0-9a-fA-F]{7}-[0-9a-fA-F]{4}-"
                    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
        # A run of 12+ hex digits of one case, with a letter and a digit in it (so not a
        # plain number or word); the mix is checked only on such runs, which are rare.
        (re.compile(r"[0-9a-f](?<![\w][0-9a-f])[0-9a-f]{11,}\b"
                    r"|[0-9A-F](?<![\w][0-9A-F])[0-9A-F]{11,}\b"), hex_run),
    ],
    "addresses": [(re.compile(r"0(?<![\w]0)x[0-9a-fA-F]{4,}\b"), "<addr>")],
    "pids": [
        # pid, PGID (Gemini CLI), process, port; Copilot CLI's shellId counter
        (re.compile(r"([pP](?<![\w][pP])(?:id|ID|gid|GID|rocess|ort|ORT)|shellId)"
                    r"( ?[=:#]? ?)[0-9]+\b"), r"\1\2<n>"),
        (re.compile(r"(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|::1?):[0-9]{2,5}\b"),
         r"\1:<port>"),
        (re.compile(r"\[([0-9]{2,7})\]"), "[<pid>]"),  # syslog-style worker[12345]
    ],
    "temp-paths": [
        (re.compile(r"((?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)/)([^\s'\"`:;,)]*)"),
         tmp_path),
        (re.compile(r"(?i)([a-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\)([^\s'\"]*)"),
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


def _apply(step: _Sub | Callable[[str], str]) -> Callable[[str], str]:
    return step if callable(step) else partial(step[0].sub, step[1])


Stage = tuple["Callable[[str], bool] | None", tuple["Callable[[str], str]", ...]]


def stages(names: Sequence[str], extra: Sequence[_Sub] = ()) -> list[Stage]:
    """The normalizers ``names`` (already expanded and ordered) and the ``extra``
    substitutions after them, as (pre-check or None, substitutions) stages."""
    out: list[Stage] = []
    for name in names:
        steps = NORMALIZERS[name]
        whole = PRECHECKS.get((name, None))
        if whole is not None:
            out.append((whole, tuple(_apply(s) for s in steps)))
            continue
        for i, step in enumerate(steps):
            out.append((PRECHECKS.get((name, i)), (_apply(step),)))
    out.extend((None, (_apply(s),)) for s in extra)
    return out


def rewriter(names: Sequence[str], extra: Sequence[_Sub] = ()) -> Callable[[str], str]:
    """A function applying every substitution of ``names`` then ``extra``, in order.

    >>> rewriter(expand_normalizers(["volatile"]))("1 failed in 0.53s at 10:02:11")
    '1 failed in <duration> at <time>'
    >>> rewriter(("durations",))('{"exit_code": 1, "duration_seconds": 0.5, "timeout_ms": 9}')
    '{"exit_code": 1, "duration_seconds": <duration>, "timeout_ms": 9}'
    """
    if tuple(names) == VOLATILE and not extra:
        return _rewrite_volatile
    if not set(BLOCK) <= set(names):
        return _run(stages(names, extra))
    # before the block, the block (its own stages, each with its pre-check), after it
    first = names.index(BLOCK[0])
    last = names.index(BLOCK[-1])
    assert names[first:last + 1] == BLOCK  # the fixed order keeps them together
    before = _run(stages(names[:first]))
    block = _run(stages(BLOCK))
    after = _run(stages(names[last + 1:], extra))

    def rewrite(text: str) -> str:
        text = before(text)
        if block_check(text):
            text = block(text)
        return after(text)
    return rewrite


def _run(plan: list[Stage]) -> Callable[[str], str]:
    def rewrite(text: str) -> str:
        for check, subs in plan:
            if check is None or check(text):
                for sub in subs:
                    text = sub(text)
        return text
    return rewrite


def _volatile() -> Callable[[str], str]:
    """`rewriter` for ``volatile`` alone (the common setting), written out: the same
    stages and pre-checks as the general plan, without a loop over them."""
    ansi = _apply(NORMALIZERS["ansi"][0])
    block = _run(stages(BLOCK))
    tmp, win = (_apply(step) for step in NORMALIZERS["temp-paths"])
    scan = BLOCK_SCAN

    def rewrite(text: str) -> str:
        if "\x1b" in text:
            text = ansi(text)
        text = trailing(text)
        if ("localhost:" in text or "127.0.0.1:" in text or "0.0.0.0:" in text
                or "]:" in text or ":::" in text or "::1:" in text or "shellId" in text
                or scan(text) or escaped_check(text) or keyed_check(text)):
            text = block(text)
        if "/tmp/" in text or "/var/" in text or "/dev/shm/" in text:
            text = tmp(text)
        if "\\" in text:
            text = win(text)
        return text
    return rewrite


_rewrite_volatile: Final = _volatile()


#: The C matchers of a normalizer that has them (core/_nearrewrite.c, ``nz_rewrite``): its
#: bit and, for each of its substitutions in order, the C function doing it (its comment
#: gives the pattern it implements). C checks a text (core/_nearnorm.c, ``near_dirty``; the
#: five of `BLOCK` share one combined scan) and rewrites it exactly as here. A normalizer
#: missing here is graded in Python only (`native_mask` is None: the C path declines), so
#: adding one to `NORMALIZERS` alone is right, just slower.
#: tests/core/near/test_normalizers_one_source.py holds this table, the C sources and their
#: comments one for one, and each normalizer's C rewrite to its Python one.
NATIVE: Final[dict[str, tuple[int, tuple[str, ...]]]] = {
    "ansi": (1, ("m_ansi",)),
    "trailing-whitespace": (2, ("nz_trailing",)),
    "timestamps": (4, ("m_date", "m_dayname", "m_month", "m_clock", "m_epoch")),
    "durations": (32, ("m_minsec", "m_duration", "nz_keyed")),
    "ids": (64, ("m_uuid", "m_hexid")),
    "addresses": (128, ("m_addr",)),
    "pids": (256, ("m_pid", "m_port", "m_bracket")),
    "temp-paths": (8, ("m_tmp", "m_wintmp")),
    "numbers": (16, ("m_number",)),
}
#: The native path's bit per normalizer (core/_nearnorm.c's ``NZ_*``).
NATIVE_BITS: Final = {name: bit for name, (bit, _) in NATIVE.items()}

#: The pattern a function substitution applies (its replacement is its own code).
PATTERN_OF: Final[dict[Callable[[str], str], re.Pattern[str]]] = {
    trailing: TRAIL, keyed_durations: KEYED}


def native_mask(names: Sequence[str]) -> int | None:
    """The `NATIVE_BITS` of the normalizers ``names``, or None when one of them has no C
    matcher for each of its substitutions (the C path then declines: pure Python).

    >>> native_mask(["ansi", "numbers"]), native_mask(VOLATILE)
    (17, 495)
    """
    mask = 0
    for name in names:
        native = NATIVE.get(name)
        if native is None or len(native[1]) != len(NORMALIZERS[name]):
            return None
        mask |= native[0]
    return mask
