"""The HTML report opened in headless Chromium: it renders, selecting a step shows its
details, large batches are paged, and the hostile trajectory runs nothing.

Chromium is Debian's ``chromium`` package (scripts/test.sh installs it). Without it these
tests skip, except in CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import maxrepeat
from maxrepeat.reporters import html
from tests.cdp import Browser, find_chromium
from tests.conftest import call, result, turn
from tests.report_batch import HOSTILE_ID, graded

CHROMIUM = find_chromium()
if CHROMIUM is None and os.environ.get("CI") != "true":
    pytest.skip("chromium is not installed (scripts/test.sh installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module (a fresh profile, no network services)."""
    assert CHROMIUM is not None, "CI needs chromium: scripts/test.sh installs it"
    with Browser(CHROMIUM) as b:
        yield b


def _open(browser: Browser, page: str, path: Path) -> None:
    path.write_text(page, encoding="utf-8")
    browser.events.clear()
    browser.open(path)
    assert browser.eval("document.body.dataset.ready") == "1", browser.problems()


@pytest.fixture
def report(tmp_path: Path) -> str:
    """The fixed batch (with the hostile trajectory) as an HTML page."""
    results, summary, timelines = graded()
    return html.render(results, summary, timelines)


def test_renders_summary(browser: Browser, report: str, tmp_path: Path) -> None:
    """Counts, one pass-rate row per grader and one histogram bar per figure are drawn."""
    _open(browser, report, tmp_path / "r.html")
    cards = browser.eval("[...document.querySelectorAll('.card b')].map(e => e.textContent)")
    assert cards == ["5", "10", "2", "6", "2"]
    rows = browser.eval("document.querySelectorAll('#summary tr').length")
    assert rows == 1 + 2
    assert browser.eval("document.querySelectorAll('.hist .bar').length") == 3
    assert browser.problems() == []


def test_failing_first_with_timelines(browser: Browser, report: str, tmp_path: Path) -> None:
    """Trajectory cards come errors first, failing ones open with a step per watched step."""
    _open(browser, report, tmp_path / "r.html")
    labels = browser.eval("[...document.querySelectorAll('details.traj .label')]"
                          ".map(e => e.textContent)")
    assert labels[0] == "broken-record" and labels[-1] == "clean-run"
    steps = browser.eval(
        "[...document.querySelectorAll('details.traj')].find(d => d.querySelector('.label')"
        ".textContent === 'flaky-tests').querySelectorAll('.result')[0]"
        ".querySelectorAll('button.step').length")
    assert steps == 8
    runs = browser.eval("document.querySelectorAll('.run').length")
    assert runs >= 5


def test_selecting_a_step_shows_its_details(browser: Browser, report: str,
                                            tmp_path: Path) -> None:
    """A real click on a step shows its tool, arguments and observation."""
    _open(browser, report, tmp_path / "r.html")
    browser.eval("document.querySelectorAll('details.traj')[1].id = 'flaky'")
    assert browser.eval("document.querySelector('#flaky .label').textContent") == "flaky-tests"
    browser.eval("document.querySelector('#flaky button.step:nth-of-type(3)').id = 'pick'")
    browser.click("#pick")
    detail = browser.eval(
        "(() => { const d = document.querySelector('#flaky .detail');"
        " return [d.querySelector('h4').textContent, d.querySelector('.tool').textContent,"
        " d.querySelector('.args').textContent, d.querySelector('.obs').textContent]; })()")
    assert detail[0].startswith("step 2 (event 9)")
    assert detail[1] == "bash"
    assert json.loads(detail[2]) == {"command": "pytest -q"}
    assert detail[3] == "1 failed"
    assert browser.eval("document.querySelector('#pick').getAttribute('aria-pressed')") == "true"


def _nothing_ran(browser: Browser) -> None:
    assert browser.eval("typeof window.__pwned") == "undefined"
    assert browser.eval("document.title") == "maxrepeat report"
    for tag in ("img", "iframe", "svg", "textarea"):
        assert browser.eval(f"document.querySelectorAll('{tag}').length") == 0, tag
    assert browser.eval("document.scripts.length") == 2


def _hostile_checks(browser: Browser) -> None:
    _nothing_ran(browser)
    browser.eval(
        "(() => { const d = [...document.querySelectorAll('details.traj')].find(x =>"
        " x.querySelector('.label').textContent.startsWith('<script>'));"
        " d.id = 'hostile'; d.open = true;"
        " d.querySelector('button.step').id = 'hostile-step'; })()")
    browser.click("#hostile-step")
    _nothing_ran(browser)
    assert browser.eval("document.querySelector('#hostile .label').textContent") == HOSTILE_ID
    shown = browser.eval("document.querySelector('#hostile .detail').textContent")
    assert "<img src=x onerror=" in shown and "</script><script>" in shown
    assert all(re.match(r"file://", u) for u in browser.requests()), browser.requests()


def test_hostile_trajectory_runs_nothing(browser: Browser, report: str, tmp_path: Path) -> None:
    """Markup in ids, tool names, arguments and observations stays text; nothing is fetched."""
    _open(browser, report, tmp_path / "r.html")
    _hostile_checks(browser)
    assert browser.problems() == []  # not even a blocked attempt


def test_hostile_trajectory_inert_without_csp(browser: Browser, report: str,
                                              tmp_path: Path) -> None:
    """Escaping alone keeps it inert: the same checks pass with the CSP removed."""
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", report)
    assert "Content-Security-Policy" not in page
    _open(browser, page, tmp_path / "nocsp.html")
    _hostile_checks(browser)


def _looping(i: int) -> dict[str, Any]:
    n = 4 if i % 3 == 0 else 1
    events = [e for k in range(n) for e in turn(call("bash", f"c{k}", {"i": i}),
                                                 result(f"c{k}", "same"))]
    events += turn(call("edit", "e", {"i": i}), result("e", "ok"))
    return {"id": f"run-{i:04d}", "events": events}


def test_large_batch_is_paged(browser: Browser, tmp_path: Path) -> None:
    """3,000 trajectories: failing first, 50 a page, and the pager moves through them."""
    config = maxrepeat.MaxRepeatConfig(3)
    trajs = [_looping(i) for i in range(3000)]
    results = [maxrepeat.grade(t, config) for t in trajs]
    timelines = [html.timeline_of(t, config) for t in trajs]
    page = html.render(results, maxrepeat.summarize(results), timelines)
    _open(browser, page, tmp_path / "big.html")
    assert browser.eval("document.querySelectorAll('details.traj').length") == 50
    assert browser.eval("document.getElementById('pageinfo').textContent") == \
        "page 1 of 60 (3000 trajectories)"
    first = browser.eval("document.querySelector('details.traj .badge').textContent")
    assert first == "fail"
    assert browser.eval("document.querySelectorAll('details.traj[open]').length") == 20
    browser.click("#next")
    assert browser.eval("document.getElementById('pageinfo').textContent").startswith("page 2 ")
    browser.eval("(() => { const s = document.querySelector('#controls select');"
                 " s.value = 'passing'; s.dispatchEvent(new Event('change')); })()")
    assert browser.eval("document.querySelector('details.traj .badge').textContent") == "pass"
    assert browser.problems() == []


def test_capped_runs_show_their_total(browser: Browser, tmp_path: Path) -> None:
    """With ``metadata.runs`` capped (``--max-runs``), the page says how many runs there
    were (``runsTotal``) beside the ones listed; uncapped, it adds nothing."""
    events: list[dict[str, Any]] = []
    for k in range(5):  # five separate loops of 3 copies each, broken by other steps
        for i in range(3):
            events += turn(call("bash", f"c{k}-{i}", {"k": k}), result(f"c{k}-{i}", "same"))
        events += turn(call("edit", f"e{k}", {"k": k}), result(f"e{k}", f"edit {k}"))
    traj = {"id": "capped", "events": events}
    config = maxrepeat.MaxRepeatConfig(2, match="name-args")
    for cap, shown in ((2, "runs above max: 5 (the largest 2 listed)"), (100, None)):
        res = maxrepeat.grade(traj, config, max_runs=cap)
        assert res.metadata.runs_total == 5 and len(res.metadata.runs) == min(cap, 5)
        page = html.render([res], maxrepeat.summarize([res]), [html.timeline_of(traj, config)])
        _open(browser, page, tmp_path / f"capped-{cap}.html")
        browser.eval("document.querySelector('details.traj').open = true")
        text = browser.eval("[...document.querySelectorAll('.runs-total')]"
                            ".map(e => e.textContent)")
        assert text == ([shown] if shown else [])
        assert browser.problems() == []
