"""The history page in a real browser: with runs close together, no chart text is drawn over other text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.browser.conftest import open_page, script_errors
from tests.runs.test_history_layout import close_runs

pytestmark = pytest.mark.browser

#: Per chart, the break labels' boxes as the browser lays them out, and each rotated date's anchor and line height.
_BOXES = """
return Array.from(document.querySelectorAll('svg')).map(function (svg) {
  return {
    breaks: Array.from(svg.querySelectorAll('g.brk text')).map(function (t) {
      var r = t.getBoundingClientRect();
      return {text: t.textContent, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom};
    }),
    dates: Array.from(svg.querySelectorAll('text.lbl')).map(function (t) {
      return {anchor: t.getCTM().e, height: t.getBBox().height};
    })
  };
});
"""


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > 0.5 and min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > 0.5


def test_series_break_labels_and_dates_of_close_runs_do_not_overprint(browser: Any, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """40 runs a minute apart, a series break before each: the labels took one row and were drawn over each other,
    and the dates, 16 px apart, too."""
    page = tmp_path / "history.html"
    assert main(["history", str(close_runs(tmp_path / "reports", 40)), "--out", str(page)]) == 0
    capsys.readouterr()
    open_page(browser, page)
    charts = browser.execute_script(_BOXES)
    assert len(charts) == 3
    for chart in charts:
        breaks, dates = chart["breaks"], chart["dates"]
        assert 12 <= len(breaks) <= 39 and all(b["text"] == "series break" for b in breaks), len(breaks)
        assert [(a, b) for i, a in enumerate(breaks) for b in breaks[i + 1:] if _overlap(a, b)] == []
        # parallel lines rotated -30 degrees: apart by the anchors' gap times sin(30 degrees)
        assert len(dates) >= 8
        for earlier, later in zip(dates, dates[1:]):
            assert (later["anchor"] - earlier["anchor"]) * 0.5 >= later["height"] - 0.5, (earlier, later)
    assert len(browser.find_elements("css selector", "svg g.brk")) == 3 * 39  # every marker and tooltip stays
    assert script_errors(browser) == []
