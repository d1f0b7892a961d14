"""The built-in normalizers' rewrites in C (core/_nearrewrite.c, ``near_rewrite``) give
exactly the text of the Python definition (every substitution of `NORMALIZERS`, in
order) on adversarial texts: volatile fragments next to one another and to Unicode word
characters, digits and white space of every kind, the letters `re` folds onto ASCII
ones, lone surrogates, NUL and other controls, boundaries, long runs; and grading with
the rewrites in C gives the pure path's results and keys, with no value handed back to
Python."""

from __future__ import annotations

import json
import os
import re
from array import array
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat import MaxRepeatConfig
from maxrepeat.core import accel
from maxrepeat.core.fingerprints import build_step_table, build_step_table_pure
from maxrepeat.core.near.normalizers import NORMALIZERS, expand_normalizers, native_mask
from maxrepeat.readers.vally import read_bytes_as_trajectories
from tests.conftest import call, result
from tests.core.near.test_neardup import _FRAGMENTS

EXAMPLES = int(os.environ.get("MAXREPEAT_NATIVE_EXAMPLES", "300"))

native = pytest.mark.skipif(not accel.available(),
                            reason="the native extension is not built (no C compiler)")


def _reference(names: tuple[str, ...], text: str) -> str:
    """The definition: every substitution of every named normalizer, in order."""
    for name in names:
        for step in NORMALIZERS[name]:
            text = step(text) if callable(step) else step[0].sub(step[1], text)
    return text


#: pieces that sit on the patterns' edges: Unicode \w that is not ASCII (letters, digits
#: of other scripts, superscripts, numerals), the four letters `re` folds onto i, s, k,
#: white space str.isspace has and ASCII has not, lone surrogates, controls, the
#: characters the patterns stop at, and the volatile fragments' own parts
_EDGES = [
    "é", "µ", "μ", "ß", "\u0130", "\u0131", "\u017f", "\u212a", "\u00b2", "\u0663", "\u216b",
    "\U0001d7d8", "\U0001f600", "_", "\u3000", "\x1c", "\x1f", "\x85", "\xa0", "\u2028",
    "\ufeff", "\x00", "\x0b", "\ud800", "\udfff", "\udbff\udc00", " ", "\t", "\r", "\n", "\\",
    "/", ":", "'", '"', "`", ")", ";", ",", "-", ".", "+", "#", "=", "[", "]", "<", ">", "T", "Z",
    " UTC", "UTC", "s", "ms", "m", "h", "hr", "min", "sec", "x", "0x", "p", "P", "pid", "ort",
    "shellId", "localhost", "::", "::1", "0", "1", "12", "123", "2024", "17123", "5", "9" * 9,
    "a", "f", "A", "F", "abcdef", "ABCDEF", "0123456789ab", "Mon", "Mon, ", "Jan", "Dec ",
    "tmp", "pytest-", "pymp-", "/tmp/", "/private", "/var/", "folders/", "/dev/shm/", "C:",
    ":\\", "Users", "U\u017fers", "\\AppData\\Local\\Temp\\",
    "c:\\users\\bob\\appdata\\local\\temp\\",
    "\x1b", "\x1b[", "\x1b(", "31m", "\x1b[0m", "duration", "Duration", "_seconds", "Ms",
    "took", "Took", "elapsed", "latency", "wall_", "wallTime", "time_taken", "Taken", "timeout",
    "Limit", "_budget", "deadline", "DURATION", '":', "': ", " : ", "-", "e-3", "E+", "1.5",
    "\\t", "\\n", "\\r", "\\q", "\\\\", "\\t0.205s", "\\n1m"]
_PIECE = st.one_of(st.sampled_from(_FRAGMENTS), st.sampled_from(_EDGES),
                   st.text(max_size=4), st.characters())
_TEXTS = st.builds(lambda parts, times: "".join(parts) * times,
                   st.lists(_PIECE, max_size=14), st.sampled_from([1, 1, 1, 2, 7]))
_NAMES = st.lists(st.sampled_from([*NORMALIZERS, "volatile"]), min_size=1, max_size=4)


@native
@settings(max_examples=20 * EXAMPLES, deadline=None)
@given(_TEXTS, _NAMES)
def test_c_rewrite_equals_every_substitution_in_order(text: str, names: list[str]) -> None:
    """The C rewrite (with its check in front, and alone) is the definition's text."""
    expanded = expand_normalizers(names)
    mask = native_mask(expanded)
    want = _reference(expanded, text)
    assert accel.native.near_rewrite(text, mask, False) == want
    assert accel.native.near_rewrite(text, mask, True) == want


#: the parts of keyed durations and their near misses: what stands before the key, the
#: quotes, the key's words (duration words, bounds, others, case), the separators, the
#: numbers and what follows them
_KEY_PARTS = st.tuples(
    st.sampled_from(["", " ", "{", ",", "x", "é", "_", "'", '"', "\n", "\\", "<", "1"]),
    st.sampled_from(["", '"', "'", '"', "'"]),
    st.lists(st.sampled_from(["duration", "Duration", "elapsed", "Elapsed", "latency",
                              "took", "Took", "tookk", "wall", "Wall", "_", "time", "Time",
                              "taken", "Taken", "out", "Out", "limit", "budget", "deadline",
                              "seconds", "Ms", "ms", "exit", "code", "DURATION", "2", "é",
                              "-", " "]), min_size=1, max_size=4),
    st.sampled_from(["", '"', "'", '"', "'"]),
    st.sampled_from([":", ": ", " : ", "  :  ", "=", ":\t", "::", ": :"]),
    st.sampled_from(["0.5", "12", "-1.5e-3", "1E+2", "7.", "-", "--1", "1e", "1.e5", "0x1f",
                     "5s", "3 ms", "1m2s", "12:01:02", "1712345678", "", "٣"]),
    st.sampled_from(["", "}", ",", " ", "abc", "é", ".", ".5", "e", "_", "\n", ":", '"', "1"]))


@native
@settings(max_examples=10 * EXAMPLES, deadline=None)
@given(st.lists(_KEY_PARTS, min_size=1, max_size=5), _NAMES)
def test_c_rewrite_of_keyed_durations(parts: list[Any], names: list[str]) -> None:
    """Keyed durations and their near misses, side by side: the C rewrite (with its check
    and alone) is the definition's text."""
    text = "".join(before + q1 + "".join(key) + q2 + sep + num + after
                   for before, q1, key, q2, sep, num, after in parts)
    for chosen in (names, ["durations"], ["volatile"]):
        expanded = expand_normalizers(chosen)
        mask = native_mask(expanded)
        want = _reference(expanded, text)
        assert accel.native.near_rewrite(text, mask, False) == want, (chosen, text)
        assert accel.native.near_rewrite(text, mask, True) == want, (chosen, text)


@native
def test_c_rewrite_on_long_texts() -> None:
    """Long runs (digits, hex, spaces before newlines, white space at the end) and many
    matches in one text."""
    names = expand_normalizers(["volatile", "numbers"])
    mask = native_mask(names)
    for text in ["7" * 100_000, "ab12" * 30_000 + " ", " \t" * 50_000 + "\n" * 3,
                 " ".join(_FRAGMENTS) * 300, "x\u3000" * 40_000, "0x" + "f" * 70_000,
                 "1712345678." + "5" * 50_000 + "é", "/tmp/" + "a1/" * 30_000,
                 '"' + "duration_" * 20_000 + '": 1', "took" * 30_000 + ": 2.5",
                 '{"duration_seconds":0.5,"exit_code":1}' * 5_000, ":" * 100_000 + "1"]:
        for subset in (names, ("trailing-whitespace",), ("timestamps",), ("ids",),
                       ("durations",)):
            assert accel.native.near_rewrite(text, native_mask(subset), False) == \
                _reference(subset, text)
    assert accel.native.near_rewrite("", mask, False) == ""


def _codepoints() -> list[int]:
    """Every code point below U+3000 and every 13th above (the tests stay fast)."""
    return [*range(0x3000), *range(0x3000, 0x110000, 13)]


@native
def test_c_rewrite_uses_the_character_classes_of_re() -> None:
    """\\w before and after a match, \\s ending a temp path or stripped at the end, \\d in
    a temp path's part: for code points of every kind, the C text is the reference's."""
    names = expand_normalizers(["volatile"])
    mask = native_mask(names)
    for cp in _codepoints():
        ch = chr(cp)
        for text in (f"{ch}0x7ffd5e8c", f"0x7ffd5e8c{ch}", f"at 12:01:02{ch}",
                     f"/tmp/ab{ch}c/d{ch}", f"done{ch}", f"pid {ch}1"):
            assert accel.native.near_rewrite(text, mask, False) == _reference(names, text), \
                (hex(cp), text)


@native
def test_c_rewrite_folds_letters_as_re_does() -> None:
    """Every code point that `(?i)[a-z]` matches (the Windows temp path's drive letter and
    words) is matched by the C rewrite wherever a letter of the pattern stands."""
    folded = [chr(cp) for cp in range(0x80, 0x110000)
              if not 0xD800 <= cp < 0xE000 and re.fullmatch("(?i)[a-z]", chr(cp))]
    assert folded  # U+0130, U+0131, U+017F, U+212A in the Python of this writing
    names = ("temp-paths",)
    mask = native_mask(names)
    base = "c:\\Users\\bob\\AppData\\Local\\Temp\\tmp1 x"
    letters = [i for i, c in enumerate(base) if c.isalpha() and i < base.index("tmp1")]
    for ch in [*folded, "K", "k", "S", "\u00df", "\u0345"]:
        for i in letters:
            text = base[:i] + ch + base[i + 1:]
            assert accel.native.near_rewrite(text, mask, False) == _reference(names, text), \
                (ch, text)


#: values of arguments and results: fragments, edge pieces, mixtures
_VALUES = st.one_of(st.sampled_from(_FRAGMENTS), _TEXTS.filter(lambda t: len(t) < 200))
_ARGS = st.one_of(st.fixed_dictionaries({"command": _VALUES},
                                        optional={"description": _VALUES,
                                                  "env": st.lists(_VALUES, max_size=2)}),
                  _VALUES)
_RESULTS = st.one_of(_VALUES, st.fixed_dictionaries({"stdout": _VALUES,
                                                     "stderr": st.lists(_VALUES, max_size=2)}))


@native
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["bash", "read"]), _ARGS, _RESULTS), min_size=1,
                max_size=6),
       st.sampled_from([["volatile"], ["volatile", "numbers"], ["timestamps", "pids"],
                        ["trailing-whitespace", "ansi"]]),
       st.sampled_from([{"match": "observation"}, {"match": "name-args"},
                        {"match": "name-args", "with_observation": True,
                         "ignore_arguments": ["description"]}]),
       st.integers(0, 2))
def test_grading_with_c_rewrites_equals_the_pure_path(calls: list[tuple[str, Any, Any]],
                                                      names: list[str], mode: dict[str, Any],
                                                      style: int) -> None:
    """Read from JSON bytes in three spellings (escapes as `json.dumps` writes them:
    \\u escapes, surrogate pairs, lone surrogates), each call repeated: the same step
    keys, ids and byte-identical results on both paths."""
    events = []
    for n, (tool, args, out) in enumerate(calls * 3):
        events += [call(tool, f"c{n}", args), result(f"c{n}", out)]
    doc = {"id": "t", "events": events}
    text = [json.dumps(doc, ensure_ascii=False, separators=(",", ":")),
            json.dumps(doc, indent=1), json.dumps(doc)][style]
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate written as itself: not a JSON file
        return
    [traj] = read_bytes_as_trajectories(data, "t.json")
    cfg = MaxRepeatConfig.from_mapping({"max": 2, "normalize": names, **mode})
    was = accel.use_native(True)
    try:
        got = build_step_table_pure(traj.events, cfg)
        table = build_step_table(traj.events, cfg)
        assert (list(table.keys), list(table.ids)) == (got.keys, got.ids)
        native_out = json.dumps(maxrepeat.grade(traj, cfg).to_dict(), sort_keys=True)
        accel.use_native(False)
        assert native_out == json.dumps(maxrepeat.grade(traj, cfg).to_dict(), sort_keys=True)
    finally:
        accel.use_native(was)


@native
@pytest.mark.parametrize("mode", [2, 3])
def test_volatile_values_stay_in_c(mode: int) -> None:
    """Arguments and results full of volatile text are rewritten in C: near_ids and
    near_keys never call the Python fallbacks (which here fail the test)."""
    from maxrepeat.core.near import native as nearnative

    events = []
    for n, fragment in enumerate(_FRAGMENTS):
        events += [call("bash", f"c{n}", {"command": f"poll {fragment}", "n": n}),
                   result(f"c{n}", f"at {fragment} done \n"),
                   call("read", f"r{n}", {"path": fragment}),
                   result(f"r{n}", {"out": [fragment, "\x1b[31mred\x1b[0m"]})]
    [traj] = read_bytes_as_trajectories(json.dumps({"id": "t", "events": events}).encode(),
                                        "t.json")
    cfg = MaxRepeatConfig.from_mapping(
        {"max": 2, "match": "observation" if mode == 2 else "name-args",
         "normalize": ["volatile", "numbers"],
         **({"with_observation": True} if mode == 3 else {})})
    got_mode, mask, tool_info, _, _ = nearnative._native_args(cfg)
    assert got_mode == mode

    def fail(*args: Any) -> bytes:
        raise AssertionError(f"handed to Python: {args!r}")

    got = accel.native.near_ids(traj.events, mode, cfg.max_cycle_period, None, mask,
                                msgspec.Raw, tool_info, fail, fail)
    assert got is not None
    table = nearnative.native_near_table(accel.native, traj.events, cfg)
    assert table is not None
    assert list(table.ids) == build_step_table_pure(traj.events, cfg).ids
    shape, single = got[0], got[1]
    if single:  # the call indices as int64 bytes; near_keys takes them as a list
        shape = array("q", shape).tolist()
    keys = accel.native.near_keys(traj.events, shape, single, mode, cfg.max_cycle_period, mask,
                                  msgspec.Raw, tool_info, fail, fail)
    assert keys is not None and list(keys[0]) == build_step_table_pure(traj.events, cfg).keys
