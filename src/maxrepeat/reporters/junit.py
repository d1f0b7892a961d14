"""``--output junit``: JUnit XML that GitHub, GitLab and Jenkins render.

One ``<testsuite>`` per grader, one ``<testcase>`` per trajectory. A failing result carries
a ``<failure>`` with the evidence and every loop run; a grader that could not run carries
an ``<error>`` with its message. Characters XML 1.0 forbids (most C0 controls, lone
surrogates, U+FFFE/U+FFFF) are written as ``\\uXXXX`` text, never emitted raw.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from ..core.result import GraderResult
from ..core.summary import Summary
from ._tally import tally
from .base import Reporter

__all__ = ["REPORTER", "JunitReporter", "render", "xml_safe"]

_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot carry escaped as ``\\uXXXX``.

    >>> xml_safe("ok\\x1b[0m\\ufffe")
    'ok\\\\u001b[0m\\\\ufffe'
    """
    return _FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _details(result: GraderResult) -> str:
    meta = result.metadata
    lines = [result.evidence]
    if meta.runs:
        lines.append(
            f"loop steps: {meta.loop_steps} of {meta.watched_steps} watched steps; "
            f"runs above max {meta.max}:"
        )
        for run in meta.runs:
            lines.append(
                f"  steps {run.start_step}-{run.end_step} (events {run.start_event}-"
                f"{run.end_event}): period {run.period}, {run.occurrences} occurrences: "
                + " | ".join(run.pattern)
            )
    return "\n".join(lines) + "\n"


def _testcase(suite: ET.Element, result: GraderResult) -> None:
    attrs = {
        "name": xml_safe(result.trajectory),
        "classname": xml_safe(f"maxrepeat.{result.name}"),
        "time": "0",
    }
    if result.metadata.source is not None:
        attrs["file"] = xml_safe(result.metadata.source)  # where the run was read
    case = ET.SubElement(suite, "testcase", attrs)
    message = xml_safe(result.evidence)
    if result.status == "error":
        node = ET.SubElement(case, "error", {"message": message, "type": "error"})
        node.text = message + "\n"
    elif not result.passed:
        node = ET.SubElement(case, "failure", {"message": message, "type": result.grader_type})
        node.text = xml_safe(_details(result))
    else:
        ET.SubElement(case, "system-out").text = message + "\n"


def render(results: Sequence[GraderResult], summary: Summary) -> str:
    """The whole batch as one JUnit XML document (UTF-8, with its declaration)."""
    root = ET.Element("testsuites", {
        "name": "maxrepeat",
        "tests": str(summary.total),
        "failures": str(summary.failed),
        "errors": str(summary.errors),
        "skipped": "0",
        "time": "0",
    })
    for t in tally(results):
        suite = ET.SubElement(root, "testsuite", {
            "name": xml_safe(t.name),
            "tests": str(t.total),
            "failures": str(t.failed),
            "errors": str(t.errors),
            "skipped": "0",
            "time": "0",
        })
        for r in results:
            if r.name == t.name:
                _testcase(suite, r)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


class JunitReporter(Reporter):
    """``--output junit``: one XML document, written at the end."""

    name = "junit"
    suffixes = (".xml",)
    help = "JUnit XML for CI test views"
    order = 40

    def render(
        self, results: Sequence[GraderResult], summary: Summary,
        details: Sequence[Any] | None = None,
    ) -> str:
        return render(results, summary)


REPORTER = JunitReporter
