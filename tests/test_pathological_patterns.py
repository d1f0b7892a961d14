"""Pathological ``tools`` patterns (issue 8, item 3): matched in linear time (RE2, with
exactly ``re``'s answers); where ``re`` must decide, nested quantifiers on a long name give
an error result instead of a hang. Lint accepts every pattern that compiles (spec §2)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat import MaxRepeatConfig, Monitor, grade
from maxrepeat.core.toolmatch import backtracking_hazard, re2_eligible, search

LONG = "a" * 1_000_000


NESTED = ["(a+)+$", "(x*y*)*z", r"(?:\w+\s?)+$", "((ab)+c)*", "(a{1,3}){2,}"]


@pytest.mark.parametrize("pattern", NESTED)
def test_nested_quantifiers_pass_the_config_rules(pattern: str) -> None:
    """Spec §2: a pattern that compiles is accepted; the hazard is found, not refused."""
    MaxRepeatConfig(1, tools=[pattern])
    assert backtracking_hazard(pattern) is not None


@pytest.mark.parametrize("pattern", ["^bash$", "(a|b)+", "a{2,}x", "(a*){3}", "(?>a+)+$",
                                     "(a++)+$", "(ab?)+", "^mcp__.*__(read|write)$"])
def test_patterns_without_nested_unbounded_repeats_have_no_hazard(pattern: str) -> None:
    """Single-level, bounded-outer, possessive and atomic patterns cannot explode."""
    assert backtracking_hazard(pattern) is None


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


def test_nested_quantifiers_on_a_long_non_ascii_name_are_an_error_result() -> None:
    """Where `re` must decide, a long name against `(a+)+$` is refused, not hung."""
    traj = _calls("a" * 40 + "é")
    start = time.perf_counter()
    result = grade(traj, MaxRepeatConfig(1, tools=["(a+)+$"]))
    assert time.perf_counter() - start < 2.0
    assert result.status == "error"
    assert "cannot be matched safely" in result.evidence
    monitor = Monitor(MaxRepeatConfig(1, tools=["(a+)+$"]))
    for event in traj["events"]:  # type: ignore[union-attr]
        monitor.feed(event)
    live = monitor.result()
    assert (live.status, live.evidence) == (result.status, result.evidence)


def test_nested_quantifiers_on_a_short_non_ascii_name_are_matched() -> None:
    """A short name is safe to try even with nested quantifiers."""
    assert MaxRepeatConfig(1, tools=["(é+)+$"]).watches("aéé")


@pytest.mark.parametrize("pattern", [".*_x", ".*.*.*x", "(a|aa)+$", "a*a*a*b", "(a|a)*b",
                                     "(?i)(A|aa)+$"])
def test_quadratic_and_worse_patterns_run_in_linear_time_on_long_names(pattern: str) -> None:
    """Patterns that backtrack badly in `re` decide a 1 MB name in well under a second."""
    config = MaxRepeatConfig(1, tools=[pattern])
    start = time.perf_counter()
    config.watches(LONG)
    config.watches(LONG + "!")
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("pattern", ["(?=a)a", r"(a)\1", "a{,2}", "[[:alpha:]]", r"a\Z",
                                     "(?x) a", "a++", r"\u00e9", "é", r"\0", r"\B"])
def test_constructs_read_differently_by_re2_stay_with_re(pattern: str) -> None:
    """Lookaround, backreferences, {,n}, POSIX classes and friends are left to `re`."""
    assert not re2_eligible(pattern)


def test_names_with_control_or_non_ascii_characters_stay_with_re() -> None:
    """`re` decides for names RE2 would read differently (\\s, \\w, $ before a newline)."""
    for pattern, name in ((r"^\w+$", "café"), ("^bash$", "bash\n"), (r"a\sb", "a\x0bb")):
        compiled = re.compile(pattern)
        assert search(compiled, name) == (compiled.search(name) is not None) is True


# A small grammar of the syntax RE2 and re share, to compare their answers.
_ATOMS = st.sampled_from(["a", "b", "_", ".", r"\d", r"\w", r"\s", r"\.", "[a-c]",
                          "[^a]", "[_0-9]", "x", "-", "B", r"\D", r"\W", "[\\w.]"])


@st.composite
def _patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["atom", "atom", "group", "alt"] if depth < 2 else ["atom"]))
        if kind == "atom":
            part = draw(_ATOMS)
        elif kind == "group":
            part = "(" + draw(_patterns(depth + 1)) + ")"
        else:
            part = "(?:" + draw(_patterns(depth + 1)) + "|" + draw(_patterns(depth + 1)) + ")"
        part += draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "*?"]))
        if draw(st.integers(0, 5)) == 0:
            part += r"\b"
        parts.append(part)
    body = "".join(parts)
    if depth:
        return body
    return draw(st.sampled_from(["", "^", "(?i)"])) + body + draw(st.sampled_from(["", "$"]))


_NAMES = st.text(alphabet="abcxB_-.0 19", max_size=12)


@settings(max_examples=300, deadline=None)
@given(pattern=_patterns(), name=_NAMES)
def test_re2_and_re_agree_on_printable_ascii_names(pattern: str, name: str) -> None:
    """Where RE2 is used, its answer equals Python's `re` on every printable ASCII name."""
    compiled = re.compile(pattern)
    assert re2_eligible(pattern)
    assert search(compiled, name) == (compiled.search(name) is not None)
