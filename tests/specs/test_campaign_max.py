"""Differential campaign: the `max` rule against JavaScript's `Number.isInteger`.

The framework accepts `max` when ``Number.isInteger(max) && max >= 1`` for the number
npm `yaml` reads. Each run draws 2,000 spellings of `max` (integers and decimals with
signs, zeros, exponents and digits past what a double holds, hex and octal, tags,
quoted numbers, infinities, booleans) and asks Node, in one batch, whether each config's
`max` passes; maxrepeat's config loader must agree. The seed is printed; a mismatch
fails with the spelling.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest

from maxrepeat.specs.configfile import parse_config_text
from tests.campaigns import Oracle, campaign_seed, oracle

VALUES = 2000
CONFIG = "graders:\n  - type: max-repeat\n    config:\n      max: {}\n"


@pytest.fixture(scope="module")
def node() -> Iterator[Oracle]:
    yield from oracle()


def _digits(rng: random.Random, most: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, most)))


def _spelling(rng: random.Random) -> str:
    kind = rng.randrange(8)
    sign = rng.choice(["", "", "-", "+"])
    if kind == 0:
        text = sign + _digits(rng, 25)
    elif kind == 1:
        text = f"{sign}{_digits(rng, 4)}.{rng.choice(['', '0', '00', '5', _digits(rng, 20)])}"
    elif kind == 2:
        text = f"{sign}{_digits(rng, 3)}{rng.choice(['e', 'E'])}{rng.choice(['', '-', '+'])}" \
            f"{_digits(rng, 3)}"
    elif kind == 3:
        text = rng.choice(["0x", "0o"]) + _digits(rng, 6).replace("8", "7").replace("9", "1")
    elif kind == 4:
        text = rng.choice([".inf", "-.inf", ".nan", "true", "false", "null", "~", "1_0",
                           "3.0", "1e0", "0.3e1", "9007199254740993", "9007199254740992.5",
                           "4503599627370495.5", "1e21", "1e-400", "-0", "0", "1"])
    else:
        text = sign + _digits(rng, 2) + rng.choice(["", ".0", ".5", "e1", "e-1"])
    quote = rng.random()
    if quote < 0.1:
        return f'"{text}"'
    if quote < 0.2:
        return rng.choice(["!!int ", "!!float ", "! ", "!!str "]) + text
    return text


def test_the_max_rule_agrees_with_number_isinteger(node: Oracle) -> None:
    seed = campaign_seed("max")
    rng = random.Random(seed)
    start = time.perf_counter()
    values = [_spelling(rng) for _ in range(VALUES)]
    documents = [CONFIG.format(v) for v in values]
    for value, doc, js in zip(values, documents, node.ask("maxRule", documents), strict=True):
        problems = parse_config_text(doc, "g.yaml")[1]
        ours = "error" if problems and problems[0].path == "document" else not problems
        if ours != js:
            pytest.fail(f"seed {seed}: max: {value} is {ours} here ({problems[:1]}), "
                        f"{js} for the framework")
    print(f"max campaign: {VALUES} values in {time.perf_counter() - start:.1f} s")
