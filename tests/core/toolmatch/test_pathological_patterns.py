"""Pathological ``tools`` patterns: matched in linear time by RE2 wherever the pattern has
no back-reference or lookaround; the rest (a small backtracking matcher) has a step budget,
and a name that exceeds it gives an error result instead of a hang. Lint accepts every
pattern that JavaScript's RegExp accepts (spec §2, issue 16)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.core.toolmatch import _Budget, _Matcher, compile_pattern, to_units

LONG = "a" * 1_000_000


NESTED = ["(a+)+$", "(x*y*)*z", r"(?:\w+\s?)+$", "((ab)+c)*", "(a{1,3}){2,}"]


@pytest.mark.parametrize("pattern", NESTED)
def test_nested_quantifiers_pass_the_config_rules(pattern: str) -> None:
    """Spec §2: a pattern that compiles is accepted, and it is matched in linear time."""
    MaxRepeatConfig(1, tools=[pattern])
    assert compile_pattern(pattern).linear


def test_lint_accepts_a_nested_quantifier_pattern(tmp_path: Path) -> None:
    """`maxrepeat lint` exits 0 for `(a+)+$`: it compiles, so spec §2 accepts it."""
    path = tmp_path / "graders.yaml"
    path.write_text("graders:\n  - type: max-repeat\n    config:\n      max: 2\n"
                    "      tools: ['^bash$', '(a+)+$']\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", "from maxrepeat.cli import main; main()",
                           "lint", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout


def _calls(name: str) -> dict[str, object]:
    return {"id": "t", "events": [{"type": "tool_call", "data": {"toolName": name}}] * 2}


@pytest.mark.parametrize("pattern", NESTED[:2])
def test_nested_quantifiers_on_a_long_ascii_name_are_decided_fast(pattern: str) -> None:
    """On printable ASCII names RE2 decides nested quantifiers in linear time."""
    start = time.perf_counter()
    result = grade(_calls("a" * 200_000 + "!"), MaxRepeatConfig(1, tools=[pattern]))
    assert result.status == "ok"
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|a)+$", "(a?a?)+$"])
def test_nested_quantifiers_on_a_long_non_ascii_name_are_decided_fast(pattern: str) -> None:
    """Non-ASCII names go to RE2 too (over UTF-16 code units), so nothing backtracks."""
    start = time.perf_counter()
    result = grade(_calls("a" * 40 + "é"), MaxRepeatConfig(1, tools=[pattern]))
    assert result.status == "ok"
    assert time.perf_counter() - start < 2.0


def test_a_backtracking_pattern_over_its_budget_is_an_error_result_live_and_post_hoc() -> None:
    """A back-reference forces the backtracking matcher; `(a|a)*\\1$` on a long name runs
    out of its step budget and both the grader and the monitor give the same error."""
    traj = _calls("a" * 40 + "é")
    config = MaxRepeatConfig(1, tools=["^(a|a)*\\1$"])
    start = time.perf_counter()
    result = grade(traj, config)
    assert time.perf_counter() - start < 5.0
    assert result.status == "error"
    assert "cannot be matched safely" in result.evidence
    monitor = Monitor(config)
    for event in traj["events"]:  # type: ignore[union-attr]
        monitor.feed(event)
    live = monitor.result()
    assert (live.status, live.evidence) == (result.status, result.evidence)


def test_a_backtracking_pattern_on_a_short_name_is_matched() -> None:
    """A short name is well within the budget even with a back-reference."""
    assert MaxRepeatConfig(1, tools=["(é+)\\1$"]).watches("aéé")


@pytest.mark.parametrize("pattern", [".*_x", ".*.*.*x", "(a|aa)+$", "a*a*a*b", "(a|a)*b",
                                     "(?i)(A|aa)+$"])
def test_quadratic_and_worse_patterns_run_in_linear_time_on_long_names(pattern: str) -> None:
    """Patterns that backtrack badly in a backtracking engine decide a 1 MB name fast."""
    config = MaxRepeatConfig(1, tools=[pattern])
    start = time.perf_counter()
    config.watches(LONG)
    config.watches(LONG + "!")
    assert time.perf_counter() - start < 4.0


# A small grammar of patterns without back-references or lookaround: the two matchers (RE2
# over the translated tree, and the backtracking matcher over the same tree) must agree.
_ATOMS = st.sampled_from(["a", "b", "_", ".", r"\d", r"\w", r"\s", r"\.", "[a-c]",
                          "[^a]", "[_0-9]", "x", "-", "B", r"\D", r"\W", "[\\w.]", "é", "😀",
                          "[^]", "[]", "\\u00e9", "\\b"])


@st.composite
def _patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["atom", "atom", "group", "alt"] if depth < 2 else ["atom"]))
        if kind == "atom":
            part = draw(_ATOMS)
            if part == "\\b":
                parts.append(part)
                continue
        elif kind == "group":
            part = "(" + draw(_patterns(depth + 1)) + ")"
        else:
            part = "(?:" + draw(_patterns(depth + 1)) + "|" + draw(_patterns(depth + 1)) + ")"
        part += draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "*?", "{0}"]))
        parts.append(part)
    body = "".join(parts)
    if depth:
        return body
    head = draw(st.sampled_from(["", "^", "(?i)", "(?s)"]))
    return head + body + draw(st.sampled_from(["", "$"]))


_NAMES = st.text(alphabet="abcxB_-.0 19é😀\n\u2028É", max_size=12)


@settings(max_examples=300, deadline=None)
@given(pattern=_patterns(), name=_NAMES)
def test_re2_and_the_backtracking_matcher_agree(pattern: str, name: str) -> None:
    """Two independent deciders over one parse tree give the same answer."""
    compiled = compile_pattern(pattern)
    assert compiled.linear, pattern
    slow = _Matcher(compiled.tree, compiled.groups, compiled.names, "i" in compiled.flags,
                    "m" in compiled.flags)
    try:
        expected = slow.search(to_units(name))
    except _Budget:  # nested stars can exceed the backtracker's budget: nothing to compare
        return
    assert compiled.search(name) == expected
