"""The fast subset (``bash scripts/test.sh --fast``: ``-m "not agent and not browser and not
slow"``) leaves out every test that runs a real agent CLI or a browser: a test module that
reaches for an agent or for Chromium has its tests marked (tests/conftest.py marks them by
module, by name or by the ``model_server`` fixture). The ``slow`` tests are marked where
they are written."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import (
    AGENT_MODULES,
    BROWSER_MODULES,
    FAST_EXAMPLES,
    _fewer_examples,
    profile_examples,
)

TESTS = Path(__file__).parents[1]
#: what a module that drives an agent CLI or a browser uses (.npm-agents/ also holds npm
#: packages that are not agents, such as yaml: an agent is run from its .bin/)
REACHES = re.compile(r'agent_harness|node_modules/\.bin|"\.bin"|from tests\.cdp|chromium|'
                     r"model_server")


def _marked_by_name_or_fixture(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            args = [a.arg for a in node.args.args]
            if "real_agent" in node.name or "real_codex" in node.name or "model_server" in args:
                return True
    return False


def test_every_module_that_runs_an_agent_or_a_browser_is_left_out_of_the_fast_subset() -> None:
    missed = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8")
        if not REACHES.search(text) or path.stem in AGENT_MODULES | BROWSER_MODULES:
            continue
        if not _marked_by_name_or_fixture(ast.parse(text)):
            missed.append(path.name)
    assert not missed, (f"{missed} use an agent CLI or a browser: add them to AGENT_MODULES or "
                        "BROWSER_MODULES in tests/conftest.py, or name the test *real_agent*")


def test_the_marked_modules_exist() -> None:
    for name in AGENT_MODULES | BROWSER_MODULES:
        assert list(TESTS.rglob(f"{name}.py")), name


def test_the_fast_profile_runs_a_tenth_of_the_examples_and_the_default_all() -> None:
    """``HYPOTHESIS_PROFILE=fast`` (``--fast``) shortens even a test whose own ``@settings``
    asks for its examples (which any profile alone leaves alone), to a tenth, at least
    `FAST_EXAMPLES`; CI's repeatable ``ci`` profile to half; under any other profile a
    test runs what it asks for."""
    counts = {}
    for profile in ("fast", settings.get_current_profile_name()):
        for asked in (300, 40, 5):

            @settings(max_examples=asked, database=None)
            @given(st.integers())
            def prop(n: int) -> None:
                pass

            was = settings.get_current_profile_name()
            settings.load_profile(profile)
            try:
                _fewer_examples(cast(pytest.Item, SimpleNamespace(obj=prop)))
            finally:
                settings.load_profile(was)
            # what the run will be given (Hypothesis may stop early on duplicates, so
            # the calls of a run do not tell it)
            counts[profile, asked] = prop._hypothesis_internal_use_settings.max_examples
    assert counts["fast", 300] == 30
    assert counts["fast", 40] == FAST_EXAMPLES
    assert counts["fast", 5] == 5
    default = settings.get_current_profile_name()
    if default == "ci":  # CI's repeatable run: half, at least FAST_EXAMPLES
        assert [counts[default, n] for n in (300, 40, 5)] == [150, 20, 5]
    elif default != "fast":
        assert [counts[default, n] for n in (300, 40, 5)] == [300, 40, 5]


def test_a_given_made_inside_its_test_gets_the_same_share() -> None:
    """`profile_examples`, for a test that makes its ``@given`` function itself (out of the
    collection hook's reach), asks for what `_fewer_examples` gives a test of its own."""
    was = settings.get_current_profile_name()
    try:
        for profile, expected in (("fast", [30, FAST_EXAMPLES, 5]), ("default", [300, 40, 5]),
                                  ("ci", [150, 20, 5])):
            settings.load_profile(profile)
            assert [profile_examples(n) for n in (300, 40, 5)] == expected, profile
    finally:
        settings.load_profile(was)
