"""The report's compiled-template cache is an optimisation only: a cache folder nothing can be read from or
written to leaves the page exactly as it is without a cache, and a warm cache serves the same page."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report import html
from tests.report.report_fixtures import make_report_data


def _render(monkeypatch: pytest.MonkeyPatch, cache: object) -> str:
    monkeypatch.setattr(html, "_bytecode_cache", lambda: cache)
    html.page_environment.cache_clear()
    try:
        return html.render_html(*make_report_data(n_scenarios=3, arms=("history_only", "recall"), seed=4))
    finally:
        html.page_environment.cache_clear()


def test_a_template_cache_folder_that_is_a_file_is_skipped_and_the_page_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache "folder" is a regular file (every read and write fails with NotADirectoryError): same page, no error."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x", encoding="utf-8")
    plain = _render(monkeypatch, None)
    assert _render(monkeypatch, html._BytecodeCache(str(blocked))) == plain


def test_a_warm_template_cache_serves_the_same_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first report fills the cache folder; the next one, compiled from it, renders the same page."""
    plain = _render(monkeypatch, None)
    assert _render(monkeypatch, html._BytecodeCache(str(tmp_path))) == plain
    assert list(tmp_path.glob("__jinja2_*.cache"))
    assert _render(monkeypatch, html._BytecodeCache(str(tmp_path))) == plain
