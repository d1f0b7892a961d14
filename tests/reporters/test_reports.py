"""The JUnit, Markdown and HTML reports (and the console's handling of hostile text).

Golden files live in tests/golden/reports/; regenerate them after a deliberate change with
``MAXREPEAT_UPDATE_GOLDEN=1 python -m pytest tests/reporters/test_reports.py`` (that run
fails), review the diff and run again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml
from markdown_it import MarkdownIt

import maxrepeat
from maxrepeat.cli import cli
from maxrepeat.core.preview import inert
from maxrepeat.reporters import OUTPUTS, console, html, junit, markdown
from tests.conftest import UPDATE_GOLDEN, call, result, rewrite_golden, turn
from tests.report_batch import HOSTILE_ID, HOSTILE_TOOL, configs, graded, trajectories

GOLDEN = Path(__file__).parents[1] / "golden" / "reports"
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        rewrite_golden(path, text)
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def _one(trajectory_id: str, evidence_tool: str = "bash") -> list[maxrepeat.GraderResult]:
    events: list[dict[str, Any]] = []
    for i in range(3):
        events += turn(call(evidence_tool, f"c{i}", {"n": 1}), result(f"c{i}", "same"))
    return [maxrepeat.grade({"id": trajectory_id, "events": events}, maxrepeat.MaxRepeatConfig(2))]


# --- registry and CLI -------------------------------------------------------------------


def test_outputs_are_registered() -> None:
    """junit, markdown and html are output formats of the registry."""
    assert {"junit", "markdown", "html"} <= set(OUTPUTS)


@pytest.mark.parametrize("output,marker", [("junit", "<testsuites"), ("markdown", "## "),
                                           ("html", "<!DOCTYPE html>")])
def test_cli_writes_each_report(output: str, marker: str, tmp_path: Path) -> None:
    """`maxrepeat grade --output FORMAT` writes that report and keeps the exit code."""
    for i, t in enumerate(trajectories()[:3]):
        (tmp_path / f"t{i}.json").write_text(json.dumps(t), encoding="utf-8")
    run = CliRunner().invoke(cli, ["grade", str(tmp_path), "--max", "3", "-f", "vally",
                                   "-o", output, "-q"])
    assert run.exit_code == 1, run.output
    assert run.stdout.startswith(marker) or marker in run.stdout[:200]
    assert "flaky-tests" in run.stdout


def test_cli_html_has_timelines(tmp_path: Path) -> None:
    """The CLI gives the HTML report each result's watched steps."""
    (tmp_path / "t.json").write_text(json.dumps(trajectories()[0]), encoding="utf-8")
    run = CliRunner().invoke(cli, ["grade", str(tmp_path / "t.json"), "--max", "3", "-f",
                                   "vally", "-o", "html", "-q"])
    doc = _data_of(run.stdout)
    steps = doc["trajectories"][0]["results"][0]["steps"]
    assert [s["i"] for s in steps] == list(range(8))


# --- JUnit ------------------------------------------------------------------------------


def test_junit_golden() -> None:
    """The JUnit report of the fixed batch matches its golden file."""
    results, summary, _ = graded()
    _golden("batch.junit.xml", junit.render(results, summary))


def test_junit_reader_sees_suites_and_cases() -> None:
    """A JUnit reader finds one suite per grader and one case per trajectory."""
    results, summary, _ = graded()
    xml = JUnitXml.fromstring(junit.render(results, summary))
    suites = list(xml)
    assert [s.name for s in suites] == [c.display_name for c in configs()]
    for suite in suites:
        assert [c.name for c in suite] == [junit.xml_safe(t["id"]) for t in trajectories()]
        assert suite.tests == len(trajectories())


def test_junit_failure_carries_evidence_and_runs() -> None:
    """A failing case has a <failure> whose message is the evidence and whose text lists runs."""
    results, summary, _ = graded()
    xml = JUnitXml.fromstring(junit.render(results, summary))
    case = next(c for s in xml if s.name == "same-output" for c in s if c.name == "flaky-tests")
    (failure,) = case.result
    assert isinstance(failure, Failure)
    expected = next(r for r in results if r.trajectory == "flaky-tests" and r.failed)
    assert failure.message == expected.evidence
    assert "steps 1-5 (events 5-21): period 1, 5 occurrences" in (failure.text or "")


def test_junit_error_carries_message() -> None:
    """An unreadable trajectory is an <error> carrying the grader's message."""
    results, summary, _ = graded()
    xml = JUnitXml.fromstring(junit.render(results, summary))
    case = next(c for s in xml for c in s if c.name == "broken-record")
    (error,) = case.result
    assert isinstance(error, Error)
    assert error.message is not None and "toolName must be a string" in error.message


def test_junit_counts_match_summary() -> None:
    """The root and suite counters agree with the batch summary."""
    results, summary, _ = graded()
    root = ET.fromstring(junit.render(results, summary).encode("utf-8"))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == (
        str(summary.total), str(summary.failed), str(summary.errors))
    assert sum(int(s.get("failures", "0")) for s in root) == summary.failed


def test_junit_hostile_text_is_escaped() -> None:
    """Markup and forbidden characters from a trajectory never reach the XML raw."""
    results, summary, _ = graded()
    text = junit.render(results, summary)
    assert "<script" not in text and "<img" not in text
    assert not XML_FORBIDDEN.search(text)
    names = [c.get("name") for c in ET.fromstring(text.encode("utf-8")).iter("testcase")]
    assert HOSTILE_ID in names


@settings(max_examples=200, deadline=None)
@given(label=st.text(min_size=1, max_size=40))
def test_junit_any_label_is_valid_xml(label: str) -> None:
    """Any trajectory id gives well-formed XML whose case name is the id, made inert (as
    every text from a trajectory is) and XML-safe."""
    results = _one(label)
    text = junit.render(results, maxrepeat.summarize(results))
    assert not XML_FORBIDDEN.search(text)
    (case,) = ET.fromstring(text.encode("utf-8", "surrogatepass")).iter("testcase")
    assert case.get("name") == junit.xml_safe(inert(label))


# --- Markdown ---------------------------------------------------------------------------


def test_markdown_golden() -> None:
    """The Markdown report of the fixed batch matches its golden file."""
    results, summary, _ = graded()
    _golden("batch.md", markdown.render(results, summary))


def _tables(text: str) -> list[list[list[str]]]:
    """Each table of a Markdown document as rows of cells (inline source), via markdown-it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables: list[list[list[str]]] = []
    row: list[str] = []
    for tok in tokens:
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and tables and tok.level >= 4:
            row.append(tok.content)
        elif tok.type == "tr_close":
            tables[-1].append(row)
    return tables


def test_markdown_tables_have_their_shape() -> None:
    """Grader table has one row per grader; failing table one per failing result, 6 cells."""
    results, summary, _ = graded()
    graders, failing = _tables(markdown.render(results, summary))
    assert [r[0] for r in graders[1:]] == ["`same-output`", "`cycles`"]
    bad = [r for r in results if not r.passed]
    assert len(failing) == 1 + len(bad)
    assert all(len(r) == 6 for r in failing)
    assert failing[1][2] == "error"  # errors first


def test_markdown_hostile_text_stays_in_code() -> None:
    """Rendered, the hostile id is text inside <code>: no tag, link or emphasis from it."""
    results, summary, _ = graded()
    page = MarkdownIt("commonmark").enable("table").render(markdown.render(results, summary))
    assert "<script" not in page and "<img" not in page and "<a " not in page
    assert "<strong>" not in page
    assert "<code>&lt;script&gt;" in page


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40))
def test_markdown_code_cell_round_trips(text: str) -> None:
    """Any text in a table cell parses back to one code span holding it (made inert)."""
    doc = f"| a | b |\n|---|---|\n| {markdown.code(text)} | z |\n"
    tokens = MarkdownIt("commonmark").enable("table").parse(doc)
    cells = [t for t in tokens if t.type == "inline"][2:]
    assert len(cells) == 2
    children = cells[0].children or []
    assert [c.type for c in children] == ["code_inline"]
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    assert children[0].content == (inert(flat) if text else '""')


def test_markdown_truncates_long_lists() -> None:
    """Past ROW_LIMIT failing results, the table stops and says how many are left."""
    results = [r for i in range(markdown.ROW_LIMIT + 7) for r in _one(f"t{i}")]
    text = markdown.render(results, maxrepeat.summarize(results))
    assert "…and 7 more failing results not shown." in text
    assert len(_tables(text)[1]) == 1 + markdown.ROW_LIMIT


# --- HTML (without a browser; tests/reporters/test_html_browser.py drives Chromium) ------


def _data_of(page: str) -> Any:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_html_golden() -> None:
    """The HTML report of the fixed batch matches its golden file."""
    results, summary, timelines = graded()
    _golden("batch.html", html.render(results, summary, timelines))


def test_html_data_cannot_close_its_script() -> None:
    """The embedded JSON holds no '<', so trajectory text cannot end the data block."""
    results, summary, timelines = graded()
    page = html.render(results, summary, timelines)
    m = re.search(r'id="report-data">(.*?)</script>', page, re.S)
    assert m is not None and "<" not in m.group(1) and ">" not in m.group(1)
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<img" not in page and "<iframe" not in page


def test_html_data_keeps_hostile_text_as_data() -> None:
    """The hostile id and tool name reach the page's data intact, as strings."""
    results, summary, timelines = graded()
    doc = _data_of(html.render(results, summary, timelines))
    labels = [t["label"] for t in doc["trajectories"]]
    assert HOSTILE_ID in labels
    assert HOSTILE_TOOL in doc["tools"]


def test_html_csp_admits_only_its_own_script_and_style() -> None:
    """The CSP hashes are those of the inline script and style; nothing else may load."""
    results, summary, timelines = graded()
    page = html.render(results, summary, timelines)

    def digest(body: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()

    script = re.search(r"<script>(.*?)</script>", page, re.S)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert script is not None and style is not None
    csp = re.search(r'Content-Security-Policy" content="([^"]*)"', page)
    assert csp is not None
    assert f"script-src '{digest(script.group(1))}'" in csp.group(1)
    assert f"style-src '{digest(style.group(1))}'" in csp.group(1)
    assert "default-src 'none'" in csp.group(1)


def test_html_orders_failing_first() -> None:
    """Trajectories with an error come first, then failing ones, then passing ones."""
    results, summary, timelines = graded()
    doc = _data_of(html.render(results, summary, timelines))
    assert [t["worst"] for t in doc["trajectories"]] == sorted(
        t["worst"] for t in doc["trajectories"])
    assert doc["trajectories"][0]["label"] == "broken-record"


def test_html_needs_one_timeline_per_result() -> None:
    """A timelines list of the wrong length is refused."""
    results, summary, _ = graded()
    with pytest.raises(ValueError, match="one timeline per result"):
        html.render(results, summary, [None])


def test_html_timeline_shortens_long_values() -> None:
    """A megabyte observation is cut to DETAIL_LIMIT characters in the page."""
    events = turn(call("bash", "c0", {"x": 1}), result("c0", "y" * 1_000_000))
    view = html.timeline_of({"events": events}, maxrepeat.MaxRepeatConfig(1))
    assert view is not None
    obs = view.steps[0].calls[0].observation
    assert obs is not None and len(obs) == html.DETAIL_LIMIT


@settings(max_examples=100, deadline=None)
@given(label=st.text(max_size=30), tool=st.text(min_size=1, max_size=20))
def test_html_markup_does_not_depend_on_content(label: str, tool: str) -> None:
    """Whatever a trajectory says, the page has the same tags as for a plain one."""
    def tags(name: str, tool_name: str) -> list[str]:
        results = _one(name, tool_name)
        events = [e for i in range(3) for e in turn(call(tool_name, f"c{i}", {"n": 1}),
                                                     result(f"c{i}", "same"))]
        tl = html.timeline_of({"events": events}, maxrepeat.MaxRepeatConfig(2))
        page = html.render(results, maxrepeat.summarize(results), [tl])
        return re.findall(r"<[^>]*>", page)

    assert tags(label or "x", tool) == tags("plain", "bash")


# --- console ----------------------------------------------------------------------------


@pytest.mark.parametrize("color", [False, True])
def test_console_neutralises_control_sequences(color: bool) -> None:
    """ANSI escapes and other controls from a trajectory never reach the terminal raw."""
    hostile = "run\x1b[2J\x1b]0;owned\x07\u202e\r"
    results = _one(hostile, "bash\x1b[31m")
    text = console.render(results, maxrepeat.summarize(results), color=color)
    own_sgr = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colours, when asked for
    left = own_sgr.sub("", text)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e]", left)
    assert "run\\u001b[2J" in left


def test_html_detail_budget_serves_failing_results_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size budget, passing results lose their step details before failing ones."""
    results, summary, timelines = graded()
    failing = [i for i, r in enumerate(results) if r.failed]
    need = sum(len(c.arguments) + len(c.observation or "")
               for i in failing for s in timelines[i].steps for c in s.calls)  # type: ignore[union-attr]
    monkeypatch.setattr(html, "DETAIL_BUDGET", need)
    doc = _data_of(html.render(results, summary, timelines))
    for t in doc["trajectories"]:
        for r in t["results"]:
            for step in r["steps"] or []:
                omitted = [len(c) == 6 for c in step["c"]]
                assert all(omitted) if r["status"] == "pass" else not any(omitted)
