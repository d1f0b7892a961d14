"""Differential campaign: YAML scalars and small documents against the npm `yaml` package.

The seed framework reads config files with `YAML.parse` of npm `yaml` (2.9.1, installed
by scripts/test.sh into .npm-agents/). Each run draws 3,000 documents of a few lines
(plain scalars in every number, boolean and null spelling of YAML 1.1 and 1.2, quoted
scalars with escapes, standard and non-specific tags, flow and block collections,
anchors and aliases, duplicate keys, comments), asks one `node` process, and compares
the values (or that both refuse the document); a mismatch fails with the smallest
document that still differs (lines deleted one at a time). The seed is printed.
Not drawn: what docs/design/framework-semantics.md lists as deliberate differences (a
%YAML 1.1 directive, YAML 1.1 type tags, complex keys, values containing themselves).
Flow collections' YAML 1.2 forms (issue 31, Y7) are drawn, and checked one by one below.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from maxrepeat.specs.configfile import compose_located
from tests.campaigns import (
    YAML_PACKAGE,
    YAML_VERSION,
    Oracle,
    campaign_seed,
    drop_one,
    oracle,
    shrink,
)

DOCUMENTS = 3000

PLAIN = ["0", "-0", "+12", "010", "0o17", "0o8", "0x1F", "0xG", "1_000", "1:30", "9007199254740993",
         "1e400", "-1e400", "123456789012345678901234567890", ".5", "1.", "1.0", "1e3", "-2.5E-3",
         ".inf", "-.Inf", "+.INF", ".nan", ".NaN", ".NAN", "nan", "true", "True", "TRUE", "tRue",
         "false", "yes", "no", "on", "off", "y", "n", "~", "null", "Null", "NULL", "", "bash",
         "^bash$", "a b", "a#b", "2001-12-14", "0b101", "1__0", "-", "?x", "é", "😀", "3 # c",
         "x\u2028y", "x\x85y", "\u2029z"]
ESCAPES = ["\\n", "\\t", "\\x41", "\\u00e9", "\\U0001F600", "\\\\", '\\"', "\\/", "\\e",
           "\\N", "\\_", "\\0", "\\a", "\\b", "\\v", "\\f", "\\r", "\\ ", "\\L", "\\P",
           "\\uD83D\\uDE00", "\\uD83D", "\\udc00"]
TAGS = ["", "", "", "", "!!int ", "!!float ", "!!str ", "!!bool ", "!!null ", "! "]


@pytest.fixture(scope="module")
def node() -> Iterator[Oracle]:
    version = json.loads((YAML_PACKAGE / "package.json").read_text(encoding="utf-8"))["version"]
    assert version == YAML_VERSION, "bash scripts/test.sh installs npm yaml " + YAML_VERSION
    yield from oracle()


#: flow entries with an empty key or value, or an explicit one (YAML 1.2's flow rules, Y7)
FLOW_ODD = [":", ": x", "?", "? ", "? : x", "? ?x", ":x", "?x:", "!!str : x", "&y : x"]


def _scalar(rng: random.Random, flow: bool = False) -> str:
    kind = rng.random()
    if kind < 0.6:
        text = rng.choice(PLAIN)
    elif kind < 0.8:
        text = "'" + rng.choice(PLAIN).replace("'", "''") + rng.choice(["", "''", " x"]) + "'"
    else:
        picked = (rng.choice(ESCAPES + PLAIN[:20]) for _ in range(rng.randint(0, 3)))
        text = '"' + "".join(picked) + '"'
    return rng.choice(TAGS) + text


def _value(rng: random.Random, depth: int) -> str:
    kind = rng.random()
    if depth > 1 or kind < 0.6:
        return _scalar(rng, flow=depth > 0)
    items = [rng.choice(FLOW_ODD) if rng.random() < 0.1 else _value(rng, depth + 1)
             for _ in range(rng.randint(0, 3))]
    if kind < 0.8:
        return "[" + ", ".join(items) + "]"
    return "{" + ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) + "}"


def _document(rng: random.Random) -> list[str]:
    lines = []
    keys = ["max", "tools", "a", "b", "'q'", '"d"', "1", "true", "null"]
    anchored = False
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(keys)
        value = _value(rng, 0)
        shape = rng.random()
        if shape < 0.15 and not anchored:
            value, anchored = "&x " + value, True
        elif shape < 0.25 and anchored:
            value = "*x"
        if rng.random() < 0.1:  # a quoted text on two lines, indented 0-3 spaces
            quote = rng.choice(["'", '"'])
            escape = rng.choice(["", "\\"]) if quote == '"' else ""
            indent = " " * rng.randint(0, 3)
            lines.append(f"{key}: {quote}x{escape}\n{indent}y {rng.choice(PLAIN[:8])}{quote}")
        elif rng.random() < 0.2:
            lines.append(f"{key}:")
            lines.extend(f"  - {_value(rng, 1)}" for _ in range(rng.randint(1, 2)))
        else:
            lines.append(f"{key}: {value}" + rng.choice(["", "", " # note"]))
    return lines


def _encode(value: Any) -> Any:
    """Our value in the tagged JSON of tests/node/campaign_oracle.js."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return {"$num": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, dict):
        return {"$obj": [[_key(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _key(key: Any) -> str:
    """A key as a JavaScript object holds it (String(key))."""
    if key is None:
        return ""
    if isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, float):
        if math.isinf(key) or math.isnan(key):
            return "NaN" if math.isnan(key) else ("Infinity" if key > 0 else "-Infinity")
        return str(int(key)) if key.is_integer() and abs(key) < 1e21 else repr(key)
    return str(key)


def _same(ours: Any, js: Any) -> bool:
    if isinstance(js, dict) and js.get("$num") == "-0":
        js = 0
    if isinstance(ours, bool) or isinstance(js, bool):
        return ours is js
    if isinstance(ours, (int, float)) and isinstance(js, (int, float)):
        return float(ours) == float(js)
    if isinstance(ours, list) and isinstance(js, list):
        return len(ours) == len(js) and all(_same(a, b) for a, b in zip(ours, js, strict=True))
    if isinstance(ours, dict) and isinstance(js, dict) and "$obj" in ours and "$obj" in js:
        # key order is JavaScript's (integer-like keys first): not a difference
        mine, theirs = dict(ours["$obj"]), dict(js["$obj"])
        return mine.keys() == theirs.keys() and all(_same(mine[k], theirs[k]) for k in mine)
    return bool(ours == js)


def _difference(text: str, js: dict[str, Any]) -> str | None:
    root, problems = compose_located(text, "doc")
    if problems or not js["ok"]:
        if bool(problems) != (not js["ok"]):
            ours = str(problems[0]) if problems else "accepted"
            return f"{text!r}: here {ours}; npm yaml: {js.get('error', 'accepted')}"
        return None
    ours = _encode(root.plain() if root is not None else None)
    if not _same(ours, js["value"]):
        return f"{text!r}: here {json.dumps(ours)}, npm yaml {json.dumps(js['value'])}"
    return None


@pytest.mark.parametrize("text", [
    "[:]", "[-]", "[:, 1]", "[: x]", "{: x}", "{:}", "[{:}]", "[1, :]", "[a, : b]", "x: [:]",
    "[!!str ?x]", "[! ?x]", "[&a ?x]", "{a: ?x}", "{a: !!str ?x}", "[?x: ?y]", "[a: ?x]",
    "{?x}", "[!!str ?x: 1]", "{!!str ?x: 1}", "[?]", "{?}", "[a, ?]", "[? : x]", "{? : x}",
    "[!!str : x]", "[&a : x]", '["a":b]', "[:x]", "{:x}", "[?x:]", "[??x]", "[?-x]", "[? ?x]",
    "[a?b, c]", "max: [:, ?x]", "[-x]", "[a, -]", "{k: -}",
])
def test_y7_flow_collections_read_as_npm_yaml_reads_them(node: Oracle, text: str) -> None:
    """Y7: ``[:]`` is ``[{"": null}]``, ``?x`` after a tag or as a value is text, a lone
    ``-`` is refused: the value (or the refusal) of `YAML.parse` itself."""
    text += "\n"
    assert _difference(text, node.ask("yaml", [text])[0]) is None


def test_random_documents_read_as_npm_yaml_reads_them(node: Oracle) -> None:
    seed = campaign_seed("yaml")
    rng = random.Random(seed)
    start = time.perf_counter()
    docs = [_document(rng) for _ in range(DOCUMENTS)]
    answers = node.ask("yaml", ["\n".join(d) + "\n" for d in docs])
    for lines, js in zip(docs, answers, strict=True):
        if _difference("\n".join(lines) + "\n", js) is None:
            continue

        def still_fails(cases: list[list[str]]) -> list[bool]:
            texts = ["\n".join(c) + "\n" for c in cases]
            answers = node.ask("yaml", texts)
            return [_difference(t, a) is not None
                    for t, a in zip(texts, answers, strict=True)]

        def smaller(case: list[str]) -> list[list[str]]:
            return drop_one(case)

        minimal: list[str] = shrink(lines, smaller, still_fails)
        small = "\n".join(minimal) + "\n"
        pytest.fail(f"seed {seed}: {_difference(small, node.ask('yaml', [small])[0])}")
    print(f"yaml campaign: {DOCUMENTS} documents in {time.perf_counter() - start:.1f} s")
