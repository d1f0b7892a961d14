"""One source for each near-duplicate normalizer: the Python table (`NORMALIZERS`) is the
definition, and the hand-written C matchers (core/_nearrewrite.c) are held to it one for
one, so that adding a normalizer is one edit to the table plus its tests.

* the C sources and `NATIVE` name the same normalizers, bits and matchers, in the order
  of `NORMALIZERS`, with the same replacement tokens;
* each C matcher's comment states the pattern of its Python substitution (written in the
  C files' short hand, expanded here: ``d`` is ``[0-9]``, ``MONTH``, ``UNIT`` and ``zone``
  are the C tables and comment that define them; look-behinds are the matchers' own
  checks, so they are left out on both sides);
* per normalizer, on texts generated from its own patterns, the C rewrite is the Python
  one;
* a normalizer in the table without C matchers makes the C path decline, and grading stays
  right (the table patched at run time).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat import MaxRepeatConfig
from maxrepeat.core import accel
from maxrepeat.core.fingerprints import build_step_table, build_step_table_pure
from maxrepeat.core.near import native as near_native
from maxrepeat.core.near import normalizers
from maxrepeat.core.near.normalizers import NATIVE, NORMALIZERS, PATTERN_OF, native_mask
from tests.conftest import call, profile_examples, result
from tests.core.near.test_near_rewrite import _EDGES, EXAMPLES

_CORE = Path(__file__).resolve().parents[3] / "src" / "maxrepeat" / "core"
_SOURCES = sorted([*_CORE.rglob("*.c"), *_CORE.rglob("*.h")])

needs_sources = pytest.mark.skipif(not _SOURCES, reason="the C sources are not in this tree")
native = pytest.mark.skipif(not accel.available(),
                            reason="the native extension is not built (no C compiler)")


def _c_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in _SOURCES)


# ---- what the C sources say ----

def _function(c: str, name: str) -> tuple[int, str]:
    """Where the definition of the C function ``name`` starts, and its body."""
    # static, or (called from another file) named mr_ and declared in a header
    m = re.search(rf"^(?:static )?[A-Za-z_][\w \t*]*?\b(?:mr_)?{name}\([^;{{]*\{{", c, re.M)
    assert m is not None, f"no C function {name} in {', '.join(p.name for p in _SOURCES)}"
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(c[i], 0)
        i += 1
    return m.start(), c[m.end():i - 1]


def _c_bits(c: str) -> dict[str, int]:
    """The C normalizer bits: ``NZ_ANSI = 1`` and so on."""
    return {k: int(v) for k, v in re.findall(r"\b(NZ_[A-Z]+) = (\d+)\b", c)}


def _c_passes(c: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """``nz_rewrite``'s passes in order: each bit tested and its (matcher, token)s."""
    _, body = _function(c, "nz_rewrite")
    parts = re.split(r"\bif \(\(?mask & (NZ_[A-Z]+)\)", body)
    passes = []
    for bit, seg in zip(parts[1::2], parts[2::2], strict=True):
        seg = seg.split("#undef")[0]
        found: list[tuple[str, str | None]] = []
        for m in re.finditer(r"\bNZ_SUB\(\w+, \d, (\w+), (\"[^\"]*\")\)"
                             r"|\bNZ_TAKE\((\w+)\(([^;]*)", seg):
            if m.group(1):
                found.append((m.group(1), ast.literal_eval(m.group(2))))
                continue
            inner = re.match(r"[^,]*,[^,]*,[^,]*, (m_\w+), (\"[^\"]*\")", m.group(4))
            found.append((inner.group(1), ast.literal_eval(inner.group(2))) if inner
                         else (m.group(3), None))
        passes.append((bit, found))
    return passes


_PREFIX = re.compile(r"^(?:-+ )?[A-Za-z_][\w-]*: ")
_STARTS = re.compile(r"[\\(\[0-9]|d+[^a-z]")


def _doc(c: str, name: str) -> tuple[str, str | None]:
    """The pattern and replacement the comment of C matcher ``name`` states: the nearest
    comment on its own lines before it that starts with a pattern (after a ``word: ``
    prefix): up to two spaces, `` -> ``, ``: <`` or a line starting with ``->``."""
    start, _ = _function(c, name)
    for m in reversed(list(re.finditer(r"^/\*(.*?)\*/", c[:start], re.M | re.S))):
        lines = [re.sub(r"^\s*\*? ?", "", line) for line in m.group(1).strip().split("\n")]
        first = _PREFIX.sub("", lines[0]).removesuffix(" ----")
        if not _STARTS.match(first):
            continue
        text, repl = first, None
        for line in lines[1:]:
            if line.startswith("->"):
                repl = line[2:]
                break
            text += line
        head, arrow, tail = text.partition(" -> ")
        head = re.split("  |: (?=<)", head)[0]  # then prose, or ": <token> when ..."
        if arrow:
            repl = tail
        return head, (repl.split()[0].rstrip(",") if repl is not None else None)
    raise AssertionError(f"no comment with a pattern before {name}")


def _c_strings(c: str, table: str) -> list[str]:
    """The strings of a C table (``static const char *const NZ_UNITS[] = {...}``)."""
    m = re.search(rf"\b{table}\[\] = (\{{.*?\}}|\"[^\"]*\");", c, re.S)
    assert m is not None, table
    raw = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1))
    return [bytes(ast.literal_eval(f'b"{s}"')).decode() for s in raw]


def _macros(c: str) -> dict[str, str]:
    """What the short hand's words stand for, read from the C tables and comments."""
    months = _c_strings(c, "NZ_MONTHS")[0]
    zone = re.search(r"the time zone of the ISO date at t: (.*?), or -1", c, re.S)
    assert zone is not None
    return {
        "MONTH": "(?:" + "|".join(months[i:i + 2] for i in range(0, len(months), 2)) + ")",
        "UNIT": "(?:" + "|".join(map(re.escape, _c_strings(c, "NZ_UNITS"))) + ")",
        "zone": "(?:" + _expand(zone.group(1).replace(" | ", "|").replace("' '", " "), {}) + ")",
    }


def _expand(short: str, macros: dict[str, str]) -> str:
    """The C comments' short hand as a regex: a word of ``d`` only is that many [0-9]."""
    out, i = [], 0
    while i < len(short):
        if short[i] == "\\":
            out.append(short[i:i + 2])
            i += 2
            continue
        m = re.compile(r"[A-Za-z]+").match(short, i)
        if m is None:
            out.append(short[i])
            i += 1
            continue
        word = m.group()
        out.append("[0-9]" * len(word) if set(word) == {"d"} else macros.get(word, word))
        i = m.end()
    return "".join(out)


# ---- patterns compared by meaning, not spelling ----

def _canon(pattern: str, flags: int = 0) -> tuple[int, Any]:
    """A form of a pattern that notations of one meaning share: groups flattened (their
    numbers kept for back references), look-behinds left out, a repeated item merged
    (``dd?``, ``d?d``, ``d{2}`` alike), an alternation of finitely many strings as the
    strings in the order the engine tries them."""
    tree = sre_parse.parse(pattern, flags)
    return tree.state.flags, _seq(list(tree))


def _seq(items: list[Any]) -> tuple[Any, ...]:
    out: list[list[Any]] = []
    for op, av in items:
        for lo, hi, node in _items(op, av):
            if out and out[-1][2] == node:
                last = out[-1]
                last[0] += lo
                last[1] = sre.MAXREPEAT if sre.MAXREPEAT in (last[1], hi) else last[1] + hi
            else:
                out.append([lo, hi, node])
    return tuple(n if (lo, hi) == (1, 1) else ("rep", lo, hi, n) for lo, hi, n in out)


def _items(op: Any, av: Any) -> list[tuple[int, int, Any]]:
    if op is sre.SUBPATTERN and not av[1] and not av[2]:
        return [t for o, a in av[3] for t in _items(o, a)]
    if op in (sre.ASSERT, sre.ASSERT_NOT) and av[0] < 0:
        return []
    if op is sre.MAX_REPEAT:
        body = _seq(list(av[2]))
        return [(av[0], av[1], body[0] if len(body) == 1 else ("seq", body))]
    if op is sre.BRANCH:
        strings = _strings([(sre.BRANCH, av)])
        if strings == [""]:
            return []  # only assertions (left out)
        node = ("alts", tuple(strings)) if strings is not None else \
            ("branch", tuple(_seq(list(alt)) for alt in av[1]))
        return [(1, 1, node)]
    if op is sre.IN:
        return [(1, 1, ("in", tuple(sorted(str(x) for x in av))))]
    if op in (sre.ASSERT, sre.ASSERT_NOT, sre.MIN_REPEAT, sre.SUBPATTERN):
        return [(1, 1, (str(op), str(av[:-1]), _seq(list(av[-1]))))]
    return [(1, 1, (str(op), str(av)))]


def _strings(items: list[Any]) -> list[str] | None:
    """The strings a finite sequence matches, in the backtracking engine's order (None
    when it is not a small finite one)."""
    got = [""]
    for op, av in items:
        alts: list[str] | None
        if op is sre.LITERAL:
            alts = [chr(av)]
        elif op is sre.SUBPATTERN:
            alts = _strings(list(av[3]))
        elif op in (sre.ASSERT, sre.ASSERT_NOT) and av[0] < 0:
            alts = [""]
        elif op is sre.BRANCH:
            alts = []
            for alt in av[1]:
                part = _strings(list(alt))
                if part is None:
                    return None
                alts += part
        elif op is sre.MAX_REPEAT and av[1] <= 4:
            one = _strings(list(av[2]))
            alts = None if one is None else [
                "".join(t) for k in range(av[1], av[0] - 1, -1) for t in _product([one] * k)]
        else:
            return None
        if alts is None or len(got) * len(alts) > 500:
            return None
        got = [a + b for a in got for b in alts]
    return list(dict.fromkeys(got))


def _product(lists: list[list[str]]) -> Iterator[tuple[str, ...]]:
    if not lists:
        yield ()
        return
    for head in lists[0]:
        for rest in _product(lists[1:]):
            yield (head, *rest)


def test_canonical_form_tells_meanings_apart() -> None:
    """The comparison itself: notations of one meaning agree, others do not."""
    same = [("[0-9]{2}", "[0-9][0-9]"), ("[0-9][0-9]?", "[0-9]?[0-9]"),
            ("[0-9][0-9]*", "[0-9]+"), ("(?:ab|cd?)", "(ab|cd|c)"),
            ("x(?<![\\w]x)[0-9]{3}", "x[0-9][0-9][0-9]")]
    differ = [("[0-9]{2}", "[0-9]{3}"), ("(?:ab|cd)", "(?:cd|ab)"), ("a+", "a*"),
              ("[0-9]m[0-9]", "[0-9]m [0-9]"), ("(?i)ab", "ab"), ("a(?!b)", "a(?!c)"),
              ("(a)\\1", "(a)(b)\\2")]
    for a, b in same:
        assert _canon(a) == _canon(b), (a, b)
    for a, b in differ:
        assert _canon(a) != _canon(b), (a, b)


@needs_sources
def test_a_pattern_changed_in_python_alone_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison on the real comments: a Python pattern edited without its C
    matcher (one repeat more, a class narrowed) no longer matches the comment."""
    addr, repl = NORMALIZERS["addresses"][0]
    for edited in (addr.pattern.replace("{4,}", "{5,}"), addr.pattern.replace("a-f", "a-e")):
        table = {**NORMALIZERS, "addresses": [(re.compile(edited), repl)]}
        monkeypatch.setattr(normalizers, "NORMALIZERS", table)
        with pytest.raises(AssertionError):
            test_c_matcher_states_the_python_pattern("addresses", 0, "m_addr")


# ---- the table and the C sources, one for one ----

def _python_subs(name: str) -> list[tuple[re.Pattern[str], str | Callable[..., Any]]]:
    out: list[tuple[re.Pattern[str], str | Callable[..., Any]]] = []
    for step in normalizers.NORMALIZERS[name]:  # as patched, if it is
        if isinstance(step, tuple):
            out.append(step)
        else:
            assert step in PATTERN_OF, f"{name}: {step.__name__} names no pattern (PATTERN_OF)"
            out.append((PATTERN_OF[step], step))
    return out


@needs_sources
def test_c_and_the_table_name_the_same_normalizers() -> None:
    """Every C bit is a native normalizer's and back; nz_rewrite runs their matchers in
    the table's order, the ones `NATIVE` names, with the table's replacement tokens."""
    c = _c_text()
    bits = _c_bits(c)
    by_value = {bit: name for name, (bit, _) in NATIVE.items()}
    assert sorted(bits.values()) == sorted(by_value), (bits, NATIVE)
    assert set(NATIVE) <= set(NORMALIZERS), set(NATIVE) - set(NORMALIZERS)
    passes = [(by_value[bits[bit]], found) for bit, found in _c_passes(c)]
    assert [name for name, _ in passes] == [n for n in NORMALIZERS if n in NATIVE]
    for name, found in passes:
        assert tuple(m for m, _ in found) == NATIVE[name][1], name
        for (pattern, repl), (matcher, token) in zip(_python_subs(name), found, strict=True):
            if isinstance(repl, str) and token is not None:
                assert token == re.sub(r"^(?:\\[0-9])+", "", repl), (name, matcher, pattern)


def _matchers() -> list[Any]:
    out = []
    for name, (_, matchers) in NATIVE.items():
        for i, matcher in enumerate(matchers):
            out.append(pytest.param(name, i, matcher, id=matcher))
    return out


@needs_sources
@pytest.mark.parametrize(("name", "index", "matcher"), _matchers())
def test_c_matcher_states_the_python_pattern(name: str, index: int, matcher: str) -> None:
    """The pattern in the C matcher's comment means the Python substitution's pattern
    (and a replacement it states is the Python one)."""
    c = _c_text()
    short, repl = _doc(c, matcher)
    pattern, python_repl = _python_subs(name)[index]
    stated = _expand(short, _macros(c))
    assert _canon(stated) == _canon(pattern.pattern, pattern.flags), (matcher, stated)
    if repl is not None and isinstance(python_repl, str):
        assert repl == python_repl, matcher
    elif repl is not None and re.fullmatch(r"[A-Za-z_]\w*", repl):
        assert callable(python_repl) and repl == python_repl.__name__, matcher


# ---- each C rewrite is its Python rewrite ----

def _reference(name: str, text: str) -> str:
    for step in normalizers.NORMALIZERS[name]:
        text = step(text) if callable(step) else step[0].sub(step[1], text)
    return text


def _shaped(name: str) -> st.SearchStrategy[str]:
    """Texts made of matches of the normalizer's own patterns (and near misses: a match
    cut or run into the next piece), edge pieces and any characters."""
    matches = st.one_of(*(st.from_regex(p, fullmatch=True) for p, _ in _python_subs(name)))
    cut = st.builds(lambda s, k: s[:k], matches, st.integers(0, 12))
    piece = st.one_of(matches, matches, cut, st.sampled_from(_EDGES), st.text(max_size=3))
    return st.builds(lambda parts, times: "".join(parts) * times,
                     st.lists(piece, max_size=8), st.sampled_from([1, 1, 2]))


def _differential(name: str, examples: int) -> None:
    """C (with its check in front, and alone) gives the Python text of normalizer
    ``name`` on texts shaped like its matches, many of which it rewrites."""
    mask = NATIVE[name][0]
    rewritten = []

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(_shaped(name))
    def check(text: str) -> None:
        want = _reference(name, text)
        assert accel.native.near_rewrite(text, mask, False) == want, text
        assert accel.native.near_rewrite(text, mask, True) == want, text
        rewritten.append(want != text)

    check()
    assert sum(rewritten) > len(rewritten) // 10  # the texts are shaped: many are rewritten


@native
@pytest.mark.parametrize("name", list(NATIVE))
def test_c_rewrite_of_each_normalizer_is_its_python_one(name: str) -> None:
    """One normalizer at a time, on texts shaped like its own matches."""
    assert native_mask([name]) == NATIVE[name][0]
    _differential(name, profile_examples(EXAMPLES))  # a tenth in the fast subset


@native
def test_the_differential_test_sees_a_pattern_edited_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Edit a Python pattern but not its C matcher (one hex digit fewer): the property
    test finds a text the two rewrite differently."""
    addr, repl = NORMALIZERS["addresses"][0]
    table = {**NORMALIZERS, "addresses": [(re.compile(addr.pattern.replace("{4,}", "{3,}")),
                                           repl)]}
    monkeypatch.setattr(normalizers, "NORMALIZERS", table)
    with pytest.raises(AssertionError):
        _differential("addresses", 200)


# ---- a normalizer in the table alone: the C path declines, grading stays right ----

_BUILDS = "build-[0-9]+"


@pytest.fixture
def with_builds(monkeypatch: pytest.MonkeyPatch) -> str:
    """A normalizer added to the table only (as a contributor would), before numbers."""
    table = dict(NORMALIZERS)
    numbers = table.pop("numbers")
    table["builds"] = [(re.compile(_BUILDS), "build-<n>")]
    table["numbers"] = numbers
    monkeypatch.setattr(normalizers, "NORMALIZERS", table)  # the one edit: a config takes it
    return "builds"


def _trajectory() -> Any:
    from maxrepeat.core.grade import as_trajectory

    events = []
    for i in range(6):
        events.append(call("Bash", f"c{i}", {"command": "make"}))
        events.append(result(f"c{i}", f"failed in build-{100 + i}: error 2"))
    return as_trajectory({"id": "t", "events": events})


def test_a_normalizer_without_c_matchers_is_graded_in_python(with_builds: str) -> None:
    """The C path declines a config using the new normalizer (and takes one without
    it); the grade sees through the build numbers, as the table says, on either path."""
    assert native_mask([with_builds]) is None
    assert native_mask(["ansi", with_builds]) is None
    assert native_mask(["ansi"]) == 1
    traj = _trajectory()
    config = MaxRepeatConfig(3, normalize=[with_builds])
    assert config.near is not None and config.near.normalizers == (with_builds,)
    was = accel.use_native(True)
    try:
        if accel.native is not None:
            assert near_native.native_near_table(accel.native, traj.events, config) is None
            other = MaxRepeatConfig(3, normalize=["ansi"])
            assert near_native.native_near_table(accel.native, traj.events, other) is not None
        table = build_step_table(traj.events, config)
        assert list(table.keys) == list(build_step_table_pure(traj.events, config).keys)
        assert len(set(table.keys)) == 1  # every result the same once the build is hidden
        got = maxrepeat.grade(traj, config)
        assert not got.passed and got.metadata.occurrences == 6
        assert maxrepeat.grade(traj, MaxRepeatConfig(3)).passed  # without it all differ
        accel.use_native(False)
        assert maxrepeat.grade(traj, config).to_dict() == got.to_dict()
    finally:
        accel.use_native(was)


def test_a_substitution_added_to_a_native_normalizer_declines_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A normalizer whose substitutions outnumber its C matchers is not native."""
    table = dict(NORMALIZERS)
    table["pids"] = [*table["pids"], (re.compile(_BUILDS), "build-<n>")]
    monkeypatch.setattr(normalizers, "NORMALIZERS", table)
    assert native_mask(["pids"]) is None
    assert native_mask(["ansi", "numbers"]) == 17
