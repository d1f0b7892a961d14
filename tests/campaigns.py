"""Shared parts of the differential campaigns against Node (tests/**/test_campaign_*.py):
a long-lived oracle process (tests/node/campaign_oracle.js) answering batches, the seed
of a run, and greedy shrinking of a mismatch to a minimal case.

A run's seed is ``MAXREPEAT_CAMPAIGN_SEED`` when set (to repeat a run), else a fresh
one; it is printed, and every failure message starts with it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

ORACLE = Path(__file__).parent / "node" / "campaign_oracle.js"
YAML_PACKAGE = Path(__file__).parent.parent / ".npm-agents" / "node_modules" / "yaml"
#: the npm `yaml` version scripts/test.sh installs (the seed framework's)
YAML_VERSION = "2.9.1"

T = TypeVar("T")


#: the seed of each campaign in a repeatable run (``MAXREPEAT_REPEATABLE=1``, set by
#: ``.ci/run``): CI passes or fails on the code alone, never on the draw; a contributor's
#: run draws a new seed each time and keeps exploring (CONTRIBUTING.md, "Campaigns")
CI_SEEDS: dict[str, int] = {"max": 1, "regexp": 1, "yaml": 1}


def campaign_seed(name: str) -> int:
    """The seed of this run of campaign ``name`` (printed): ``MAXREPEAT_CAMPAIGN_SEED``,
    else `CI_SEEDS` in a repeatable run, else a new random one."""
    text = os.environ.get("MAXREPEAT_CAMPAIGN_SEED")
    if text:
        seed = int(text)
    elif os.environ.get("MAXREPEAT_REPEATABLE") == "1":
        seed = CI_SEEDS[name]
    else:
        seed = random.SystemRandom().randrange(2**32)
    print(f"{name} campaign seed: {seed} (repeat with MAXREPEAT_CAMPAIGN_SEED={seed})")
    return seed


class Oracle:
    """One `node` process answering batches of cases of one kind at a time."""

    def __init__(self) -> None:
        node = shutil.which("node") or shutil.which("nodejs")
        assert node is not None, "Node.js is needed (bash scripts/test.sh installs it)"
        self.proc = subprocess.Popen([node, str(ORACLE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def ask(self, kind: str, cases: Sequence[Any]) -> list[Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"kind": kind, "cases": list(cases)}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the Node oracle stopped (exit code {self.proc.poll()})"
        answers: list[Any] = json.loads(line)
        return answers

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def oracle() -> Iterator[Oracle]:
    """A pytest fixture body: one oracle for a test module."""
    node = Oracle()
    try:
        yield node
    finally:
        node.close()


def shrink(case: T, smaller: Callable[[T], list[T]],
           still_fails: Callable[[list[T]], list[bool]], rounds: int = 200) -> T:
    """The case made as small as it goes while it still fails: each round asks, in one
    batch, which of its one-step-smaller variants still fail, and keeps the first."""
    for _ in range(rounds):
        candidates = smaller(case)
        if not candidates:
            return case
        verdicts = still_fails(candidates)
        for candidate, fails in zip(candidates, verdicts, strict=True):
            if fails:
                case = candidate
                break
        else:
            return case
    return case


def drop_one(items: Sequence[T]) -> list[list[T]]:
    """Every copy of ``items`` with one element left out (for `shrink`)."""
    return [list(items[:i]) + list(items[i + 1:]) for i in range(len(items))]
