"""The documentation site: it builds with warnings as errors, every page is in the nav,
each input-format page's example is read as that format and names its runs, and no link
leaves the repository except to public sites."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import maxrepeat
from maxrepeat.core.events import Trajectory
from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
#: a repository file shown in a page: --8<-- "path"
_SNIPPET = re.compile(r'--8<-- "([^"]+)"')
#: a Markdown link or image target: ](target)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _nav_pages(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in _nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_pages(value)]
    return []


def _mkdocs_config() -> dict[str, Any]:
    # mkdocs.yml has no custom tags; a plain load is enough to read the nav
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return loaded


def test_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds: no broken link, missing page, bad snippet or
    failing reference generation (CLI from click, API from the docstrings)."""
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for command in ("grade", "lint", "schema", "formats", "hook"):
        assert f"maxrepeat {command}" in cli, command
    for name in ("MaxRepeatConfig", "GraderResult", "read_trajectories", "Monitor"):
        assert name in api, name


def test_every_page_is_in_the_nav() -> None:
    """A page added under docs/ must be listed in mkdocs.yml's nav (and only real pages are)."""
    nav = _nav_pages(_mkdocs_config()["nav"])
    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in PAGES)


FORMAT_PAGES = sorted((DOCS / "formats").glob("*.md"))


def test_every_reader_has_a_page() -> None:
    """One page per registered input format, named after it."""
    from maxrepeat.readers import all_readers

    names = {r.name for r in all_readers()}
    pages = {p.stem for p in FORMAT_PAGES if p.stem != "index"}
    assert pages == names


@pytest.mark.parametrize("page", [p for p in FORMAT_PAGES if p.stem != "index"],
                         ids=lambda p: p.stem)
def test_format_page_example_is_read_and_its_runs_named(page: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The files a format page shows are detected as that format, read without error, and
    every run they give is named on the page."""
    monkeypatch.chdir(ROOT)
    text = page.read_text(encoding="utf-8")
    shown = _SNIPPET.findall(text)
    assert shown, "a format page shows an example file"
    for path in shown:
        items = list(maxrepeat.read_trajectories(path))
        assert items and all(isinstance(t, Trajectory) for t in items), path
        for t in items:
            assert t.format == page.stem, (path, t.format)
            assert any(e.type == "tool_call" for e in t.events) or len(items) > 1, path
            assert f"`{t.label}`" in text, f"{page.name} does not name the run {t.label!r}"


@pytest.mark.parametrize("document", [ROOT / "README.md", *PAGES],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_stay_in_the_repository_or_go_to_public_sites(document: Path) -> None:
    """Relative links point at files of the repository; none reaches ../shared (which only
    exists beside this repository's own CI); the rest are https:// public sites."""
    text = document.read_text(encoding="utf-8")
    if document.name == "README.md":
        assert "../shared" not in text
    for target in _LINK.findall(text):
        assert "shared/" not in target, target
        if target.startswith(("https://", "mailto:")):
            continue
        assert not target.startswith("http://"), target
        path = target.split("#", 1)[0]
        if not path:
            continue
        resolved = (document.parent / path).resolve()
        assert resolved.is_relative_to(ROOT), target
        assert resolved.exists(), target


def test_readme_fits_one_screen() -> None:
    """The README is what a newcomer needs on one screen (what it is, the two set-up
    commands, one example, links); everything longer belongs on a docs page."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 75, "README.md is over one screen: move the detail to a page in docs/"


def test_grader_page_lists_every_result_field() -> None:
    """docs/grader.md's two result tables name exactly the keys a result has."""
    text = (DOCS / "grader.md").read_text(encoding="utf-8")
    section = text[text.index("## The result"):]
    documented = {key for row in section.splitlines() if row.startswith("| `")
                  for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    result = maxrepeat.grade({"events": []}, maxrepeat.MaxRepeatConfig(max=1)).to_dict()
    assert documented == set(result) | set(result["metadata"])
