"""Numbers and blank strings mean what they mean in the seed framework (JavaScript), checked
against Node itself: JSON numbers are IEEE doubles (so 9007199254740993 equals
9007199254740992, and 1e400 is Infinity), and an observation is blank when
String.prototype.trim() leaves nothing (U+FEFF is blank; U+001C and U+0085 are not)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgspec

from maxrepeat import MaxRepeatConfig, grade
from maxrepeat.core.canonical import canonical_bytes, is_blank, observation_bytes

ORACLE = Path(__file__).parents[1] / "node" / "values_oracle.js"


def _node(payload: dict[str, Any]) -> dict[str, Any]:
    node = shutil.which("node") or shutil.which("nodejs")
    assert node is not None, "Node.js is needed (bash scripts/test.sh installs it)"
    proc = subprocess.run([node, str(ORACLE)], input=json.dumps(payload), capture_output=True,
                          text=True, check=True, timeout=120)
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _number_literals(rng: random.Random) -> list[str]:
    base = ["0", "-0", "0.0", "1", "1.0", "1e0", "10", "1e1", "9007199254740992",
            "9007199254740993", "9007199254740994", "9007199254740995", "-9007199254740993",
            "18446744073709551616", "18446744073709551617", "1e400", "-1e400", "1e309",
            "2e308", "1.7976931348623157e308", "1.7976931348623158e308", "5e-324", "1e-400",
            "0.1", "0.10000000000000001", "0.30000000000000004", "123456789012345678901234567890",
            "1234567890123456789012345678901e-1", "9" * 400]
    for _ in range(300):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(15, 22)))
        digits = digits.lstrip("0") or "0"
        base.append(rng.choice(["", "-"]) + digits)
        base.append(digits[:rng.randint(1, len(digits))] + "." + digits[:5]
                    + rng.choice(["", "e3", "e-2", "e20", "e308"]))
    return base


def test_numbers_compare_as_javascript_doubles() -> None:
    rng = random.Random(7)
    literals = _number_literals(rng)
    pairs = [(a, b) for a in literals[:40] for b in literals[:40]]
    pairs += [(rng.choice(literals), rng.choice(literals)) for _ in range(3000)]
    # neighbours: literals that differ only past the 53rd bit
    for a in literals:
        if a.lstrip("-").isdigit() and len(a) > 15:
            pairs.append((a, str(int(a) + 1)))
    js = _node({"numbers": [[a, b] for a, b in pairs], "strings": []})["equal"]
    diffs = []
    for (a, b), expected in zip(pairs, js, strict=True):
        raw = canonical_bytes(msgspec.Raw(a.encode())) == canonical_bytes(msgspec.Raw(b.encode()))
        decoded = canonical_bytes(json.loads(a)) == canonical_bytes(json.loads(b))
        if raw != expected or decoded != expected:
            diffs.append(f"{a} vs {b}: raw {raw}, decoded {decoded}, JavaScript {expected}")
    assert diffs[:10] == []


def test_big_integers_in_arguments_are_the_same_action_as_in_the_framework() -> None:
    """name-args: arguments that differ only beyond 2**53 are equal, as JSON.parse reads them."""
    events = [{"type": "tool_call", "data": {"toolName": "fetch", "toolCallId": f"c{i}",
                                              "arguments": {"id": 9007199254740992 + i}}}
              for i in range(3)]
    result = grade({"events": events}, MaxRepeatConfig(2, match="name-args"))
    assert result.metadata.occurrences == 2  # ...992 and ...993 are one double; ...994 is not


def test_blank_is_what_trim_leaves_empty() -> None:
    strings = [chr(c) for c in range(0x3100)] + [chr(0xFEFF), chr(0x180E), chr(0xFFFE),
                                                  " \ufeff ", "\x1c\x1d", "\x85", "\u200b"]
    js = _node({"numbers": [], "strings": strings})["blank"]
    diffs = [f"U+{ord(s[0]):04X}{'…' if len(s) > 1 else ''}: {is_blank(s)} here, {b} in JS"
             for s, b in zip(strings, js, strict=True) if is_blank(s) != b]
    assert diffs == []
    for s, b in zip(strings, js, strict=True):
        assert (observation_bytes(s) is None) == b
        assert (observation_bytes(msgspec.Raw(json.dumps(s).encode())) is None) == b
