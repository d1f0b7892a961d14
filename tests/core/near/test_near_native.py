"""Near-duplicate grading on the native path (core/_near.c: ``near_keys``, ``near_dirty``)
equals the pure-Python reference: C only proves strings unchanged by the normalizers and
hands every other value to the Python transform, so the normalized text, the step keys
and the results are the same on both paths for random texts and trajectories full of
durations, timestamps, UUIDs, hex ids, addresses, pids and ports, temp paths, ANSI and
numbers (read from JSON bytes, so the values are raw slices as from a file)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxrepeat
from maxrepeat import MaxRepeatConfig
from maxrepeat.core import accel
from maxrepeat.core.fingerprints import build_step_table, build_step_table_pure
from maxrepeat.core.near.native import native_near_table
from maxrepeat.core.near.normalizers import NORMALIZERS, expand_normalizers, native_mask, rewriter
from maxrepeat.readers.vally import read_bytes_as_trajectories
from tests.conftest import call, result, turn
from tests.core.near.test_neardup import _FRAGMENTS

EXAMPLES = int(os.environ.get("MAXREPEAT_NATIVE_EXAMPLES", "300"))

native = pytest.mark.skipif(not accel.available(),
                            reason="the native extension is not built (no C compiler)")

#: text without lone surrogates (a JSON text cannot carry them to the C path undecoded)
_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=6)
_TEXTS = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), _TEXT, st.sampled_from(
    [" ", "\n", "[", "]", ":", "0", "x", "p", "_", "µ", "é", "\u3000", "\x1c"])), max_size=8)
_NAMES = st.lists(st.sampled_from([*NORMALIZERS, "volatile"]), min_size=1, max_size=4)


@native
@settings(max_examples=5 * EXAMPLES, deadline=None)
@given(_TEXTS, _NAMES)
def test_native_check_is_a_superset_of_every_rewrite(parts: list[str],
                                                    names: list[str]) -> None:
    """A text the C check calls clean is left as it is by the normalizers (so the native
    path's normalized text, the text itself, is the reference's); any other text is
    rewritten by the reference on both paths."""
    from maxrepeat.core import _native

    text = "".join(parts)
    expanded = expand_normalizers(names)
    rewrite = rewriter(expanded)
    dirty = _native.near_dirty(text, native_mask(expanded))
    native_text = rewrite(text) if dirty else text
    assert native_text == rewrite(text)


@native
def test_native_check_lets_plain_text_through() -> None:
    """Not a check that calls everything dirty: ordinary output stays in C."""
    from maxrepeat.core import _native

    mask = native_mask(expand_normalizers(["volatile"]))
    for text in ["collected 3 items; FAILED tests/test_mod_2.py::case_2 - AssertionError",
                 "pytest -q tests/test_io.py -k case_17", "/work/repo", "ok", "",
                 "expected 'ok' but got 'retry' ......"]:
        assert not _native.near_dirty(text, mask), text
    for text in ["1 failed in 0.53s", "at 2024-05-01T10:00:01Z", "\x1b[31m", "pid 4121",
                 "/tmp/tmpa1b2c3", "0x7ffd5e8c", "done \n", "localhost:8080", "shellId: 3"]:
        assert _native.near_dirty(text, mask), text
    assert _native.near_dirty("page 2", native_mask(["numbers"]))


@native
def test_native_check_at_every_offset() -> None:
    """Every volatile fragment at every offset of a 16-byte block (the check looks at 16
    bytes at a time where SSE2 exists), after a word character or not."""
    from maxrepeat.core import _native

    names = expand_normalizers(["volatile", "numbers"])
    for subset in (names, expand_normalizers(["volatile"]), ("timestamps",), ("pids",)):
        rewrite, mask = rewriter(subset), native_mask(subset)
        for fragment in _FRAGMENTS:
            for pad in range(34):
                for before in (".", "x", "é"):
                    text = before * pad + fragment + "." * (pad % 5)
                    if rewrite(text) != text:
                        assert _native.near_dirty(text, mask), (subset, text)


@native
@pytest.mark.parametrize("normalize", [["volatile"], ["volatile", "numbers"], ["pids"]])
def test_plain_strings_at_every_offset_group_as_the_reference(normalize: list[str]) -> None:
    """Results that are JSON strings take a one-pass check (near_plain, 16 bytes at a
    time): every fragment at every offset, one call each, is grouped with the fragments
    its rewrite equals exactly as the pure path groups it (many fragments rewrite alike:
    <time>, <duration>, <n>), in observation mode and with with_observation."""
    for match, extra in (("observation", {}), ("name-args", {"with_observation": True})):
        cfg = MaxRepeatConfig.from_mapping({"max": 2, "match": match, "normalize": normalize,
                                            **extra})
        for pad in range(34):
            for before in (".", "x"):
                events = []
                for k, fragment in enumerate(_FRAGMENTS):
                    events += [call("bash", f"c{k}", {"command": "poll"}),
                               result(f"c{k}", before * pad + fragment)]
                [traj] = read_bytes_as_trajectories(
                    json.dumps({"id": "t", "events": events}).encode(), "t.json")
                got = native_near_table(accel.native, traj.events, cfg)
                assert got is not None
                assert list(got.ids) == build_step_table_pure(traj.events, cfg).ids, (pad, before)


@native
@pytest.mark.parametrize("normalize", [["volatile"], ["pids"], []])
def test_plain_strings_of_every_length_group_as_the_reference(normalize: list[str]) -> None:
    """The one-pass check reads a text under 16 bytes as one block of its own and ends a
    longer one with a block that overlaps the one before: only the text's own positions
    count there. Results of every length up to 40: blank ones (an empty observation),
    one other character at each position, a fragment ending the text, each grouped as
    the pure path groups it."""
    if normalize:
        cfg = MaxRepeatConfig.from_mapping({"max": 2, "match": "name-args",
                                            "normalize": normalize, "with_observation": True})
    else:
        cfg = MaxRepeatConfig.from_mapping({"max": 2, "match": "name-args",
                                            "ignore_arguments": ["x"], "with_observation": True})
    texts = []
    for n in range(1, 41):
        texts.append(" " * n)
        texts += [" " * k + "x" + " " * (n - k - 1) for k in range(n)]
        texts += ["." * n + fragment for fragment in _FRAGMENTS]
        texts += ["/" * n, ":" * n, "a" * n, "7" * n, "." * (n - 1) + '"']
    events = []
    for k, text in enumerate(texts):
        events += [call("bash", f"c{k}", {"command": "poll"}), result(f"c{k}", text)]
    [traj] = read_bytes_as_trajectories(json.dumps({"id": "t", "events": events}).encode(),
                                        "t.json")
    got = native_near_table(accel.native, traj.events, cfg)
    assert got is not None
    assert list(got.ids) == build_step_table_pure(traj.events, cfg).ids


_VALUES = st.one_of(_TEXTS.map("".join), st.sampled_from(_FRAGMENTS))
_ARGS = st.one_of(
    st.fixed_dictionaries({"command": _VALUES},
                          optional={"description": _VALUES, "timeout": st.integers(0, 99),
                                    "env": st.dictionaries(st.sampled_from(["A", "B"]), _VALUES,
                                                           max_size=2)}),
    _VALUES, st.none(), st.lists(_VALUES, max_size=2))
_RESULTS = st.one_of(_VALUES, st.fixed_dictionaries({"stdout": _VALUES, "code": st.integers(0, 2)}),
                     st.sampled_from(["", "   ", None, [], {}]))


@st.composite
def _runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Calls of two tools, alone or in turns, with results after, before, late or never,
    repeated with other volatile values; arguments and results from `_FRAGMENTS`."""
    blocks = [[(draw(st.sampled_from(["bash", "read"])), draw(_ARGS), draw(_RESULTS),
                draw(st.sampled_from(["after"] * 5 + ["before", "late", "missing"])))
               for _ in range(draw(st.integers(1, 2)))] for _ in range(draw(st.integers(1, 4)))]
    events: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    for n, block in enumerate(blocks * draw(st.integers(1, 3))):
        body: list[dict[str, Any]] = []
        for c, (tool, args, out, where) in enumerate(block):
            if n >= len(blocks) and draw(st.booleans()):
                out = draw(_RESULTS)
            cid = f"c{n}-{c}"
            ev, res = call(tool, cid, args), result(cid, out)
            body += {"after": [ev, res], "before": [res, ev], "late": [ev],
                     "missing": [ev]}[where]
            if where == "late":
                late.append(res)
        events += turn(*body) if len(block) > 1 or draw(st.booleans()) else body
    return events + late


_CONFIGS = st.builds(
    lambda max_, period, match, names, ignore, with_obs, tools: {
        "max": max_, "max_cycle_period": period, "match": match,
        **({"normalize": names} if names else {}),
        **({"ignore_arguments": ignore} if ignore and match == "name-args" else {}),
        **({"with_observation": with_obs} if with_obs is not None and match == "name-args"
           else {}),
        **({"tools": tools} if tools else {})},
    st.integers(1, 3), st.integers(1, 4), st.sampled_from(["observation", "name-args"]),
    st.one_of(st.none(), _NAMES), st.sampled_from([None, ["description"],
                                                    {"^bash$": ["description", "timeout"]}]),
    st.sampled_from([None, True, False]), st.sampled_from([None, ["^bash$"]]))


@native
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_runs(), _CONFIGS, st.integers(0, 2))
def test_native_near_keys_equal_the_pure_path(events: list[dict[str, Any]],
                                              config: dict[str, Any], style: int) -> None:
    """The same step table (keys, ids, steps, results) and the same result on both
    paths, for trajectories read from JSON bytes in three spellings and given as dicts;
    the native path really runs (it does not hand these back)."""
    from maxrepeat.core.grade import as_trajectory

    cfg = MaxRepeatConfig.from_mapping(config)
    doc = {"id": "t", "events": events}
    text = [json.dumps(doc, ensure_ascii=False, separators=(",", ":")),
            json.dumps(doc, ensure_ascii=False, indent=1), json.dumps(doc)][style]
    [read] = read_bytes_as_trajectories(text.encode(), "t.json")
    for traj in (read, as_trajectory(doc)):  # raw slices, and values given in memory
        _same_on_both_paths(traj, cfg)


def _same_on_both_paths(traj: Any, cfg: MaxRepeatConfig) -> None:
    was = accel.use_native(True)
    try:
        if cfg.near is not None:
            assert native_near_table(accel.native, traj.events, cfg) is not None
        got = build_step_table(traj.events, cfg)
        want = build_step_table_pure(traj.events, cfg)
        assert (list(map(list, got.steps)), list(got.keys), list(got.ids), got.calls) == \
            (list(map(list, want.steps)), want.keys, want.ids, want.calls)
        assert dict(got.results) == dict(want.results)
        native_result = maxrepeat.grade(traj, cfg).to_dict()
        accel.use_native(False)
        assert native_result == maxrepeat.grade(traj, cfg).to_dict()
    finally:
        accel.use_native(was)


@native
@pytest.mark.parametrize("where", ["arguments", "result"])
def test_values_the_reference_rejects_go_to_the_pure_path(where: str) -> None:
    """A value that is not JSON (given in memory): the native path hands the trajectory
    back, and the pure path reports it, the same result as without the extension."""
    from maxrepeat.core.grade import as_trajectory

    bad = {1, 2}
    traj = as_trajectory({"events": [
        call("bash", "a", {"command": bad if where == "arguments" else "ls"}),
        result("a", bad if where == "result" else "x")]})
    cfg = MaxRepeatConfig(2, match="name-args", normalize=["volatile"], with_observation=True)
    assert native_near_table(accel.native, traj.events, cfg) is None
    was = accel.use_native(True)
    try:
        on = maxrepeat.grade(traj, cfg).to_dict()
        accel.use_native(False)
        assert on == maxrepeat.grade(traj, cfg).to_dict()
        assert on["status"] == "error"
    finally:
        accel.use_native(was)


@native
@pytest.mark.parametrize("text", ["   ", "0.53s", "", " 0.53s ", "a: 1s", "\x1b[0m"])
def test_results_that_rewrite_to_little_are_graded_alike(text: str) -> None:
    """Results whose rewrite is empty or blank (issue 30, row 5): the native path once
    copied and searched zero bytes from a NULL pointer, undefined behaviour that only
    UBSan sees (scripts/sanitize.sh runs this file under it); both paths agree."""
    cfg = MaxRepeatConfig.from_mapping({"max": 2, "normalize": ["volatile"]})
    events = []
    for k in range(4):
        events += [call("bash", f"c{k}", {"command": "poll"}), result(f"c{k}", text)]
    [traj] = read_bytes_as_trajectories(json.dumps({"id": "t", "events": events}).encode(),
                                        "t.json")
    _same_on_both_paths(traj, cfg)
