"""`tools` patterns mean what JavaScript's RegExp means: a differential test against Node.

Thousands of generated patterns (the awkward corners of the ECMAScript grammar on purpose:
Annex B escapes, lone brackets, quantified lookaheads, named groups, back-references,
inline flags) and tool names (case pairs that Python folds and JavaScript does not,
line terminators, surrogates) go to Node's own `RegExp` (tests/node/regexp_oracle.js) and
to `maxrepeat.core.toolmatch`; both must accept the same patterns and match the same names.
Node is installed by scripts/test.sh; without it this test fails rather than skips.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from maxrepeat.core.toolmatch import (
    PatternSyntaxError,
    UnsafeMatchError,
    compile_pattern,
    is_empty_pattern,
)

ORACLE = Path(__file__).parents[2] / "node" / "regexp_oracle.js"

TOKENS = [
    "a", "b", "k", "c", "s", "S", "K", "_", "-", ",", ":", "=", "!", "<", ">", "0", "1", "2",
    "8", "9", "n", " ", "é", "ſ", "K", "١", "😀", "\u2028",
    "(", ")", "[", "]", "{", "}", "^", "$", ".", "*", "+", "?", "|", "\\",
    "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>", "(?<m>", "(?P<n>", "(?i)", "(?#",
    "\\k<n>", "\\k", "\\1", "\\2", "\\8", "\\0", "\\01", "\\012", "\\c", "\\cA", "\\c_",
    "\\x4", "\\x41", "\\u004", "\\u0041", "\\u{41}", "\\p{L}", "\\d", "\\D", "\\w", "\\W",
    "\\s", "\\S", "\\b", "\\B", "\\-", "\\/", "\\.", "\\A", "\\Z", "\\z",
    "{2}", "{1,}", "{0,2}", "{,2}", "{2,1}", "[^", "[^]", "[]", "[a-z]", "[z-a]", "[\\d-z]",
    "[\\b]", "[\\c1]", "[\\k]", "[-a]", "[a-]", "*?", "+?", "??",
]
NAME_CHARS = ["a", "b", "A", "B", "k", "K", "K", "s", "S", "ſ", "_", "-", "\n", "\r", " ",
              "0", "1", "8", "١", "é", "É", "😀", "\ud83d", "\u2028", "\ufeff", "\\", "{",
              ",", "}", "<", ">", "n", "c", "\x01", "\x08", "\x00", "p", "L"]


def _patterns(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        parts = [rng.choice(TOKENS) for _ in range(rng.randint(1, 8))]
        prefix = rng.choice(["", "", "", "(?i)", "(?m)", "(?s)", "(?im)", "(?ii)", "(?x)"])
        out.append(prefix + "".join(parts))
    return out


def _names(rng: random.Random, count: int) -> list[str]:
    names = ["", "bash", "Bash", "bash\n", "a{,3}", "p{L}", "\\", "aaaa", "abab"]
    while len(names) < count:
        names.append("".join(rng.choice(NAME_CHARS) for _ in range(rng.randint(1, 6))))
    return names


def _node(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = shutil.which("node") or shutil.which("nodejs")
    assert node is not None, "Node.js is needed (bash scripts/test.sh installs it)"
    proc = subprocess.run([node, str(ORACLE)], input=json.dumps(cases), capture_output=True,
                          text=True, check=True, timeout=300)
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


def _compare(patterns: list[str], names: list[str]) -> list[str]:
    cases = [{"pattern": p, "names": names} for p in patterns]
    diffs = []
    for pattern, js in zip(patterns, _node(cases), strict=True):
        try:
            compiled = compile_pattern(pattern)
        except PatternSyntaxError as exc:
            if js["ok"]:
                diffs.append(f"{pattern!r}: refused here ({exc}), accepted by RegExp")
            continue
        if not js["ok"]:
            diffs.append(f"{pattern!r}: accepted here, RegExp says {js['error']}")
            continue
        if is_empty_pattern(pattern) != js["empty"]:
            diffs.append(f"{pattern!r}: empty here {is_empty_pattern(pattern)}, js {js['empty']}")
        for name, expected in zip(names, js["matches"], strict=True):
            try:
                got = compiled.search(name)
            except UnsafeMatchError:
                continue  # refused as an error result, never a wrong answer
            if got != expected:
                diffs.append(f"{pattern!r} on {name!r}: {got} here, {expected} in RegExp")
    return diffs


@pytest.mark.parametrize("seed", range(4))
def test_generated_patterns_agree_with_node(seed: int) -> None:
    rng = random.Random(seed)
    diffs = _compare(_patterns(rng, 1500), _names(rng, 40))
    assert diffs[:20] == []


def test_the_issue_examples_agree_with_node() -> None:
    patterns = ["(?<n>bash)", "[^]", "\\p{L}", "(?P<n>…)", "\\A…\\Z", "(?x)", "(?#…)", "a{,3}",
                "^bash$", "\\d", "(?i)", "(?:)", "(?i)^BASH$", "(a|a)+$", "(a?a?)+$"]
    names = ["bash", "bash\n", "١", "p{L}", "a{,3}", "aaa", "BASH", "aaé"]
    assert _compare(patterns, names) == []


@pytest.mark.parametrize(("pattern", "expected"), [
    ("(a|a)+$", False), ("(a?a?)+$", True), ("(a+)+$", False), ("(x*y*)*z", False),
    (".*_x", False)])
def test_hostile_patterns_run_in_linear_time_where_javascript_backtracks(
        pattern: str, expected: bool) -> None:
    """V8 itself backtracks exponentially on these (the oracle would hang); here RE2 answers
    at once, with JavaScript's answer."""
    import time

    compiled = compile_pattern(pattern)
    assert compiled.linear
    start = time.perf_counter()
    assert compiled.search("a" * 41 + "é") is expected
    assert compiled.search("a" * 200_000 + "!") is expected
    assert time.perf_counter() - start < 2.0
