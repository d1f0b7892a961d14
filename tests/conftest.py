"""Shared test helpers: where the corpus is, the `corpus` marker, and small builders.

Tests that read the real trajectories beside the repository (``../shared/corpus``, or
``$MAXREPEAT_SHARED/corpus``) carry ``@pytest.mark.corpus``. Without the corpus they are
deselected and the summary says so in one line; with ``CI=true`` or
``MAXREPEAT_EXPECT_CORPUS=1`` a missing corpus fails the run instead. Everything else,
the spec's golden cases included (tests/data/spec_cases.yaml), runs from the clone alone.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, settings

from .spec_cases import load_cases

ROOT = Path(__file__).resolve().parent.parent
#: ../shared beside the repository (CI's clone has it; a newcomer's clone may not)
SHARED = Path(os.environ.get("MAXREPEAT_SHARED", ROOT.parent / "shared"))
SPEC_CASES = SHARED / "spec" / "cases.json"
CORPUS = SHARED / "corpus"
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"

#: kept for the tests that import it: the same as ``@pytest.mark.corpus``
needs_corpus = pytest.mark.corpus
#: ``MAXREPEAT_UPDATE_GOLDEN=1``: snapshot tests rewrite their golden files (and fail)
UPDATE_GOLDEN = os.environ.get("MAXREPEAT_UPDATE_GOLDEN") == "1"


def rewrite_golden(path: Path, text: str) -> NoReturn:
    """Write a golden file, then fail the test: a run that rewrites its own golden files
    has checked nothing, so it must never pass. Review the diff, then run again without
    ``MAXREPEAT_UPDATE_GOLDEN``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    pytest.fail(f"rewrote {path.name}: review the diff, then run the tests again without "
                "MAXREPEAT_UPDATE_GOLDEN", pytrace=False)

__all__ = ["CORPUS", "EXAMPLES", "FIXTURES", "ROOT", "SHARED", "SPEC_CASES", "call",
           "UPDATE_GOLDEN", "load_cases", "needs_corpus", "profile_examples", "result",
           "rewrite_golden", "turn"]

_DESELECTED = pytest.StashKey[int]()
_CORPUS_MISSING = pytest.StashKey[str]()

# Hypothesis: its timing checks (the 200 ms deadline, the too-slow health check) measure
# the machine, which runs tests in parallel (pytest-xdist) beside other work, not the
# code, so the default profile has neither. ``HYPOTHESIS_PROFILE=fast`` (set by
# ``scripts/test.sh --fast``) checks the same properties with fewer examples: a tenth of
# what each test asks for, at least `FAST_EXAMPLES` (`_fewer_examples`).
FAST_EXAMPLES = 10
settings.register_profile("default", settings.get_profile("default"), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fast", settings.get_profile("default"), max_examples=FAST_EXAMPLES)
# In a repeatable run (``MAXREPEAT_REPEATABLE=1``, set by ``.ci/run``) the examples derive
# from each test alone: CI passes or fails on the code, never on the draw; a contributor's
# run draws new ones each time (and the campaigns new seeds: tests/campaigns.py).
settings.register_profile("ci", settings.get_profile("default"), derandomize=True)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif os.environ.get("MAXREPEAT_REPEATABLE") == "1":
    settings.load_profile("ci")


#: the share of its examples a property test runs, by profile: a tenth in the fast loop,
#: half in CI's repeatable run (its 30-minute budget on 2 cores; the examples are fixed
#: there, so a contributor's full, random runs keep exploring)
_EXAMPLE_DIVISOR = {"fast": 10, "ci": 2}


def _fewer_examples(item: pytest.Item) -> None:
    """Under the ``fast`` profile, a test whose own ``@settings`` asks for more examples
    than the profile's gets a tenth of them (an explicit ``max_examples`` wins over any
    profile, so the profile alone would not shorten the longest runs); under ``ci``, half."""
    test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
    divisor = _EXAMPLE_DIVISOR.get(settings.get_current_profile_name() or "")
    if getattr(test, "hypothesis", None) is None or divisor is None:
        return
    asked = getattr(test, "_maxrepeat_full_settings", None)
    if asked is None:
        asked = test._hypothesis_internal_use_settings
        test._maxrepeat_full_settings = asked
        test._hypothesis_internal_use_settings = settings(
            asked, max_examples=profile_examples(asked.max_examples))


def profile_examples(asked: int) -> int:
    """The examples a property test asking for ``asked`` runs under the current profile
    (`_fewer_examples`): for a test that makes its ``@given`` function inside itself,
    which the collection hook does not reach, as ``max_examples=profile_examples(300)``."""
    divisor = _EXAMPLE_DIVISOR.get(settings.get_current_profile_name() or "")
    return asked if divisor is None else min(asked, max(FAST_EXAMPLES, asked // divisor))


def corpus_expected() -> bool:
    """Whether a missing corpus is a failure: on CI (``CI=true``) or when asked."""
    return (os.environ.get("CI", "").lower() == "true"
            or os.environ.get("MAXREPEAT_EXPECT_CORPUS") == "1")


#: modules whose every test drives a real agent CLI (installed from npm into .npm-agents/)
AGENT_MODULES = frozenset({"test_agent_hooks_e2e", "test_e2e_claude_code",
                           "test_e2e_project_install", "test_live_parity_e2e"})
AGENT_MODULES = AGENT_MODULES | {"test_e2e_pi"}  # Pi, driven by tests/pi_harness.py
AGENT_MODULES = AGENT_MODULES | {"test_e2e_openclaw"}  # tests/openclaw_harness.py
AGENT_MODULES = AGENT_MODULES | {"test_e2e_opencode"}  # OpenCode: tests/scripted_chat.py
AGENT_MODULES = AGENT_MODULES | {"test_e2e_qwen_code"}  # Qwen Code: tests/scripted_chat.py
AGENT_MODULES = AGENT_MODULES | {"test_e2e_after_block_latency"}  # Codex, Gemini, Copilot CLIs
#: modules whose tests open a page in headless Chromium (from apt)
BROWSER_MODULES = frozenset({"test_html_browser"})


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the tests the fast subset leaves out (``bash scripts/test.sh --fast``, which is
    ``-m "not agent and not browser"``): those of `AGENT_MODULES`, and any other test whose
    name says it runs a real agent (``real_agent``, ``real_codex``); those of
    `BROWSER_MODULES`; any test that takes the ``model_server`` fixture (the scripted model
    a real Codex CLI talks to). tests/project/test_fast_subset.py checks that none is missed."""
    module = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    if (module in AGENT_MODULES or "real_agent" in item.name or "real_codex" in item.name
            or "model_server" in getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.agent)
    if module in BROWSER_MODULES:
        item.add_marker(pytest.mark.browser)
    if _shares_a_fixture(item) and _xdist_loaded(item.config):
        item.add_marker(pytest.mark.xdist_group(module))
    _fewer_examples(item)


def _xdist_loaded(config: pytest.Config) -> bool:
    """Whether pytest-xdist is loaded: by its entry point (``xdist``) or, as scripts/test.sh
    loads it with plug-in autoloading off, as ``-p xdist.plugin``, a name of its own (with
    ``xdist`` alone, the groups were never made under scripts/test.sh: each worker that ran
    a test of such a module made its fixture again)."""
    return any(config.pluginmanager.hasplugin(name) for name in ("xdist", "xdist.plugin"))


def pytest_configure(config: pytest.Config) -> None:
    """``xdist_group`` is a known marker without pytest-xdist too, for the tests that name
    their own group (tests/guards/agents/test_live_parity_e2e.py)."""
    if not _xdist_loaded(config):
        config.addinivalue_line("markers", "xdist_group(name): tests run on one worker "
                                "under pytest-xdist's --dist loadgroup (no effect here)")


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether ``item`` takes a fixture made once for its module or class (a server, a
    campaign's results): under ``--dist loadgroup`` (scripts/test.sh) such tests of a
    module stay on one pytest-xdist worker, which makes the fixture once."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        fixture.scope in ("class", "module", "package")
        for fixtures in info.name2fixturedefs.values() for fixture in fixtures)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``xdist_group`` of each test in its id, for pytest-xdist's scheduler
    (`_name_groups`); without the corpus, deselect the corpus tests (or fail when the
    corpus is expected)."""
    if getattr(config.option, "loadgroup", False):  # a worker of --dist loadgroup
        _name_groups(items)
    _deselect_corpus(config, items)


def _name_groups(items: list[pytest.Item]) -> None:
    """What pytest-xdist does on a worker under ``--dist loadgroup``, and since pytest 9.2
    no longer can (it sets ``_nodeid``, which pytest 9.2 reads no more: each test was a
    group of its own): suffix the test's id with ``@GROUP``, which the scheduler groups by."""
    for item in items:
        names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                 for mark in item.iter_markers("xdist_group")}
        if names and "@" not in item.nodeid.rsplit("]", 1)[-1] and hasattr(item, "_id"):
            # as one name (``test_x[param]@GROUP``, no params apart): the id reads the
            # same when a report rebuilds it from its parts
            old = item._id
            last = f"{old.names[-1]}[{old.params}]" if old.params is not None else old.names[-1]
            item._id = type(old)(path=old.path, names=(*old.names[:-1],
                                 f"{last}@{'_'.join(sorted(names))}"))


def _deselect_corpus(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CORPUS.is_dir():
        return
    marked = [item for item in items if item.get_closest_marker("corpus") is not None]
    if not marked:
        return
    if corpus_expected():
        message = (f"{len(marked)} corpus tests need {CORPUS}, which is missing; CI=true or "
                   "MAXREPEAT_EXPECT_CORPUS=1 says it must be there (set MAXREPEAT_SHARED "
                   "to the folder holding corpus/)")
        if not hasattr(config, "workerinput"):
            raise pytest.UsageError(message)
        # a pytest-xdist worker: a UsageError here reaches the user as an INTERNALERROR
        # naming no cause; each corpus test fails with the message instead
        config.stash[_CORPUS_MISSING] = message
        return
    config.hook.pytest_deselected(items=marked)
    items[:] = [item for item in items if item.get_closest_marker("corpus") is None]
    config.stash[_DESELECTED] = len(marked)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A corpus test fails at once, naming the missing corpus, where its absence is an
    error on a pytest-xdist worker (`_deselect_corpus`)."""
    message = item.config.stash.get(_CORPUS_MISSING, None)
    if message is not None and item.get_closest_marker("corpus") is not None:
        pytest.fail(message, pytrace=False)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Close an event loop a test left set on the main thread and not running.

    pydantic-ai's and the OpenAI Agents SDK's ``run_sync`` leave one there on purpose
    (for their next sync run). The next ``asyncio.run`` in the process replaces it, and
    the collector then reports "unclosed event loop" in whichever later test it happens
    to run (CI saw it inside the LlamaIndex and Strands tests). Closed here, it is the
    framework's to make again: both make a new loop when theirs is closed."""
    policy = asyncio.get_event_loop_policy()
    loop = getattr(getattr(policy, "_local", None), "_loop", None)
    if isinstance(loop, asyncio.AbstractEventLoop) and not (loop.is_running()
                                                             or loop.is_closed()):
        loop.close()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """One line naming the corpus tests left out, instead of one skip per test."""
    count = config.stash.get(_DESELECTED, 0)
    if count:
        terminalreporter.write_line(
            f"corpus tests: {count} deselected - {CORPUS} not found "
            "(they read real agent trajectories kept beside the repository)")


def call(name: str, cid: str | None, args: Any = None) -> dict[str, Any]:
    """A tool_call event dict."""
    data: dict[str, Any] = {"toolName": name, "arguments": args}
    if cid is not None:
        data["toolCallId"] = cid
    return {"type": "tool_call", "data": data}


def result(cid: str, value: Any) -> dict[str, Any]:
    """A tool_result event dict."""
    return {"type": "tool_result", "data": {"toolCallId": cid, "result": value, "success": True}}


def turn(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """Events wrapped in turn_start / turn_end."""
    return [{"type": "turn_start", "data": {}}, *events, {"type": "turn_end", "data": {}}]


@pytest.fixture(autouse=True, scope="session")
def _resident_hook_servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The agent hook calls tests run through the ``maxrepeat`` script are answered by
    resident servers (cli/hookclient.py), which the calls start: theirs go to a directory
    of this test session (``XDG_RUNTIME_DIR``) and idle out after a minute. When the
    session ends, those are stopped, and so are the servers that calls with an
    environment of their own (a real agent's) started elsewhere: those whose environment
    names this session's temporary directory."""
    import shutil
    import signal
    import tempfile

    saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "MAXREPEAT_HOOK_RESIDENT_IDLE")}
    runtime = Path(tempfile.mkdtemp(prefix="mxr"))  # short: a socket's path holds 107 bytes
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ["MAXREPEAT_HOOK_RESIDENT_IDLE"] = "60"
    yield
    ours = str(tmp_path_factory.getbasetemp()).encode()
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    elsewhere = {Path(os.environ.get("TMPDIR") or "/tmp") / f"maxrepeat-{uid}",
                 Path("/tmp") / f"maxrepeat-{uid}"}
    for folder in (runtime / "maxrepeat", *elsewhere):
        for lock in folder.glob("*.sock.lock"):
            words = lock.read_text().split()
            if not words or not words[0].isdigit():
                continue
            try:
                if folder.parent != runtime and ours not in Path(
                        f"/proc/{words[0]}/environ").read_bytes():
                    continue  # not started by this session's tests
                os.kill(int(words[0]), signal.SIGTERM)
            except OSError:
                pass
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(runtime, ignore_errors=True)
