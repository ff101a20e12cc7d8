"""The report's verdict box in a real browser at 1280x800: why the run failed is on the first screen.

Pages: a failing starter run of the offline model (its unsupported-claim check
fails) and a run whose every sample errored (a model behind a closed port).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.browser.conftest import open_page

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
#: The first screen of a 1280x800 window: the checks table must start above this line.
FOLD_PX = 600


@pytest.fixture
def screen(browser: Any) -> Iterator[Any]:
    """The shared browser with a 1280x800 viewport for one test (put back after)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _top(driver: Any, selector: str) -> float:
    return float(driver.execute_script(
        "var e = document.querySelector(arguments[0]); return e ? e.getBoundingClientRect().top + window.scrollY : -1",
        selector))


def _before(driver: Any, first: str, second: str) -> bool:
    """``first`` comes before ``second`` in the document."""
    return bool(driver.execute_script(
        "var a = document.querySelector(arguments[0]), b = document.querySelector(arguments[1]);"
        "return !!(a && b && (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING));", first, second))


def test_a_failed_runs_checks_start_on_the_first_screen_before_the_context_notes(screen: Any, tmp_path: Path) -> None:
    run = tmp_path / "run"
    code = main(["run", "--scenarios", str(REPO / "scenarios" / "starter"), "--arms", "history_only", "recall",
                 "--model", "offline/reference", "--out", str(run), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress"])
    assert code == 0
    # The offline model's starter verdict is inconclusive; asking for a gain of 0.3 (its interval stops below) fails it.
    assert main(["report", str(run), "--min-gain", "0.3"]) == 0
    verdict = json.loads((run / "summary.json").read_text(encoding="utf-8"))["verdict"]
    assert verdict["status"] == "fail"
    open_page(screen, run / "index.html")
    screen.execute_script("window.scrollTo(0, 0)")
    top = _top(screen, "#verdict table.checks")
    assert 0 < top < FOLD_PX, f"the checks table starts at {top:.0f} px"
    first = screen.find_element("css selector", "#verdict table.checks tbody tr")
    assert first.find_element("css selector", "td .badge").text in ("✓ pass", "✗ fail", "? undecided")
    failed = [row.text for row in screen.find_elements("css selector", "#verdict table.checks tbody tr")
              if "✗ fail" in row.text]
    assert failed and "continuity" in failed[0] and "no gain" in failed[0]
    assert _before(screen, "#verdict table.checks", "#verdict .headlines.notes")
    notes = screen.find_element("css selector", "#context-notes")  # four notes here: folded
    assert notes.get_attribute("open") is None and "notes on reading these figures" in notes.text


def test_when_every_sample_errored_the_error_comes_first(screen: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    run = tmp_path / "run"
    main(["run", "--scenarios", str(REPO / "scenarios" / "smoke"), "--filter", "smoke-02*", "--model",
          "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9/v1", "--retries", "0", "--timeout", "5",
          "--no-cache", "--no-progress", "--out", str(run)])
    main(["report", str(run)])
    open_page(screen, run / "index.html")
    screen.execute_script("window.scrollTo(0, 0)")
    box = screen.find_element("css selector", "#errors-first")
    assert "Every sample ended in error" in box.text and "Connection" in box.text  # the error itself, not a count
    assert 0 < _top(screen, "#errors-first") < _top(screen, "#verdict table.checks") < FOLD_PX + 400
    assert _top(screen, "#errors-first") < FOLD_PX
    assert _before(screen, "#errors-first", "#verdict .headlines")
