"""Pathological ``tools`` patterns (issue 8, item 3): refused at lint time when they nest
quantifiers, matched in linear time (RE2) otherwise, with exactly ``re``'s answers."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxrepeat import ConfigError, MaxRepeatConfig
from maxrepeat._regex import backtracking_hazard, re2_eligible, search

LONG = "a" * 1_000_000


@pytest.mark.parametrize("pattern", ["(a+)+$", "(x*y*)*z", r"(?:\w+\s?)+$", "((ab)+c)*",
                                     "(a{1,3}){2,}"])
def test_nested_quantifiers_are_refused_by_the_config_rules(pattern: str) -> None:
    """An unbounded quantifier over a quantified group is a config error with a fix hint."""
    with pytest.raises(ConfigError) as info:
        MaxRepeatConfig(1, tools=[pattern])
    assert info.value.path == "tools[0]"
    assert "without nested quantifiers" in str(info.value)
    assert "possessive" in str(info.value)


@pytest.mark.parametrize("pattern", ["^bash$", "(a|b)+", "a{2,}x", "(a*){3}", "(?>a+)+$",
                                     "(a++)+$", "(ab?)+", "^mcp__.*__(read|write)$"])
def test_patterns_without_nested_unbounded_repeats_pass(pattern: str) -> None:
    """Single-level, bounded-outer, possessive and atomic patterns are accepted."""
    assert backtracking_hazard(pattern) is None
    MaxRepeatConfig(1, tools=[pattern])


def test_lint_reports_a_catastrophic_pattern_with_its_position(tmp_path: Path) -> None:
    """`maxrepeat lint` prints file:line:col for a nested-quantifier pattern and exits 1."""
    path = tmp_path / "graders.yaml"
    path.write_text("graders:\n  - type: max-repeat\n    config:\n      max: 2\n"
                    "      tools: ['^bash$', '(a+)+$']\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", "from maxrepeat.cli import main; main()",
                           "lint", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{path}:5:")
    assert "graders[0].config.tools[1] must be a regular expression without nested " \
           "quantifiers" in proc.stdout


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
