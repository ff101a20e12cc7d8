"""The generated pages in a real browser: the grid renders and filters, samples open from links, nothing injected.

Pages: the report of a starter run (offline model), the XSS fixture
(:mod:`tests.browser.pages`), a 10,000-sample report, a ``compare --html``
page and a ``history`` page. No test here measures time:
``benchmarks/browser_bench.py`` prints how fast the large page becomes usable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from harness.cli import main
from tests.browser.conftest import open_page, script_errors, wait_ready, wait_until
from tests.browser.pages import LONG_RESULT_CHARS, hostile_data, large_data, write_page

pytestmark = pytest.mark.browser

STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two starter runs of three categories (the second with one tool round), their comparison and history."""
    root = tmp_path_factory.mktemp("pages")
    common = ["--scenarios", str(STARTER), "--filter", "category:decision", "--filter", "category:abstention",
              "--filter", "category:preference", "--cache-dir", str(root / "cache"), "--no-progress"]
    main(["run", *common, "--out", str(root / "runs" / "a")])
    main(["run", *common, "--max-tool-rounds", "1", "--out", str(root / "runs" / "b")])
    main(["compare", str(root / "runs" / "a"), str(root / "runs" / "b"), "--force", "--html",
          str(root / "compare.html")])
    main(["history", str(root / "runs"), "--out", str(root / "history.html")])
    return {"a": root / "runs" / "a", "b": root / "runs" / "b", "compare": root / "compare.html",
            "history": root / "history.html"}


def _visible_rows(driver: Any) -> list[Any]:
    return driver.execute_script("return Array.from(document.querySelectorAll('#sg tbody tr')).filter("
                                 "function (r) { return !r.hidden; })")


def _open_panel(driver: Any) -> Any:
    """The sample panel that is open (exactly one expected), once one is.

    A clicked link opens its panel from the page's ``hashchange`` handler, which the browser runs after the
    click returns: looking at once raced it (seen failing on a loaded CI machine).
    """
    opened = wait_until(driver, lambda d: d.find_elements("css selector", "details.p[open]"))
    assert len(opened) == 1, [p.get_attribute("id") for p in opened]
    return opened[0]


def _wait_built(driver: Any, panel: Any) -> None:
    wait_until(driver, lambda d: panel.find_element("css selector", ".tx").get_attribute("data-built"))


def test_the_grid_has_a_row_per_scenario_and_a_column_per_arm(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["a"] / "index.html")
    scores = [json.loads(line) for line in (runs["a"] / "scores.jsonl").read_text().splitlines()]
    assert len(_visible_rows(browser)) == len({s["scenario_id"] for s in scores})
    headers = [b.text for b in browser.find_elements("css selector", "#sg thead button")]
    assert headers == ["scenario", "category", "history_only", "recall", "full_history"]
    assert script_errors(browser) == []


def test_the_grid_filters_by_category_and_by_columns_that_differ(browser: Any, runs: dict[str, Path]) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, runs["a"] / "index.html")
    total = len(_visible_rows(browser))
    Select(browser.find_element("css selector", "#grid-filters select[name=category]")).select_by_visible_text(
        "decision")
    rows = _visible_rows(browser)
    assert 0 < len(rows) < total and {r.get_attribute("data-cat") for r in rows} == {"decision"}
    assert browser.find_element("id", "grid-count").text == f"{len(rows)} of {total} scenarios"
    Select(browser.find_element("css selector", "#grid-filters select[name=category]")).select_by_index(0)
    browser.find_element("css selector", "#grid-filters input[name=differ]").click()
    rows = _visible_rows(browser)
    assert 0 < len(rows) < total and all(r.get_attribute("data-differ") == "1" for r in rows)
    assert script_errors(browser) == []


def test_a_grid_column_sorts_by_its_correct_rate(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["a"] / "index.html")
    browser.find_element("css selector", "#sg thead button[data-sort='1']").click()  # recall
    browser.find_element("css selector", "#sg thead button[data-sort='1']").click()  # again: descending
    values = browser.execute_script("return Array.from(document.querySelectorAll('#sg tbody tr')).map("
                                    "function (r) { return r.cells[3].getAttribute('data-v'); })")
    numbers = [float(v) for v in values if v not in (None, "")]
    assert numbers == sorted(numbers, reverse=True) and numbers[0] > numbers[-1]


def test_a_grid_cell_opens_its_transcript(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["a"] / "index.html")
    cell = browser.find_element("css selector", "#sg tbody tr td.gc a")
    target = cell.get_attribute("href").split("#")[1]
    cell.click()
    panel = _open_panel(browser)
    assert panel.get_attribute("id") == target
    _wait_built(browser, panel)
    assert "Transcript" in panel.text and script_errors(browser) == []


def test_a_flip_link_opens_its_sample(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["a"] / "index.html")
    link = browser.find_element("css selector", "#flips a.fl")
    target = link.get_attribute("href").split("#")[1]
    link.click()
    panel = _open_panel(browser)
    assert panel.get_attribute("id") == target
    _wait_built(browser, panel)
    assert script_errors(browser) == []


def test_a_sample_deep_link_opens_that_sample_even_when_filtered_out(browser: Any, runs: dict[str, Path]) -> None:
    scores = [json.loads(line) for line in (runs["a"] / "scores.jsonl").read_text().splitlines()]
    wanted = next(s for s in scores if s["arm"] == "recall" and s["category"] == "decision")
    open_page(browser, runs["a"] / "index.html", "#sample=" + quote(wanted["sample_id"], safe=""))
    panel = _open_panel(browser)
    _wait_built(browser, panel)
    assert wanted["scenario_id"] in panel.text and "recall" in panel.text
    # the link the panel offers is the same deep link
    assert panel.find_element("css selector", "a.plink").get_attribute("href").endswith(
        "#sample=" + quote(wanted["sample_id"], safe=""))
    assert script_errors(browser) == []


def test_a_recall_sample_shows_each_model_call_with_request_tools_and_usage(browser: Any,
                                                                             runs: dict[str, Path]) -> None:
    scores = [json.loads(line) for line in (runs["a"] / "scores.jsonl").read_text().splitlines()]
    wanted = next(s for s in scores if s["arm"] == "recall" and s["status"] == "ok")
    open_page(browser, runs["a"] / "index.html", "#sample=" + quote(wanted["sample_id"], safe=""))
    panel = _open_panel(browser)
    _wait_built(browser, panel)
    rows = panel.find_elements("css selector", "table.calls tr")
    assert len(rows) >= 3  # header, a tool round and the answer
    first = rows[1].text
    assert "model offline/reference" in first and "temperature 0" in first and "max_tokens 2048" in first
    assert "memory_search" in first and " prompt + " in first and "seed " in first


def test_samples_sort_by_latency_slowest_first(browser: Any, runs: dict[str, Path]) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, runs["a"] / "index.html")
    Select(browser.find_element("css selector", "#filters select[name=sort]")).select_by_value("6")
    latencies = browser.execute_script(
        "var FR = JSON.parse(document.getElementById('filter-data').textContent).r;"
        "return Array.from(document.querySelectorAll('#panels > details.p')).map("
        "function (p) { return FR[+p.id.slice(1)][6]; });")
    assert latencies == sorted(latencies, reverse=True) and latencies[0] > latencies[-1]


def test_a_compare_flip_opens_the_sample_in_the_other_runs_report(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["compare"])
    assert script_errors(browser) == []
    link = browser.find_elements("css selector", "#flips a.fl")[-1]  # a B link of the last row
    sample_id = link.get_attribute("href").split("#sample=")[1]
    link.click()
    wait_ready(browser)
    panel = _open_panel(browser)
    _wait_built(browser, panel)
    assert panel.find_element("css selector", "a.plink").get_attribute("href").endswith("#sample=" + sample_id)
    assert script_errors(browser) == []


def test_the_history_page_links_each_point_to_a_report(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["history"])
    points = browser.find_elements("css selector", "svg a.pt")
    assert len(points) == 2 * (1 + 1 + 3)  # 2 runs: two difference charts, continuity of three arms
    assert script_errors(browser) == []
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", points[0])
    wait_ready(browser)
    assert browser.current_url.endswith("/runs/a/index.html") and browser.find_element("id", "verdict")


def test_the_history_page_shows_where_a_series_breaks(browser: Any, runs: dict[str, Path]) -> None:
    open_page(browser, runs["history"])  # run b has one tool round, run a four: two series
    markers = browser.find_elements("css selector", "svg g.brk")
    assert len(markers) == 3 and all(m.is_displayed() for m in markers)  # one per chart
    assert all("max tool rounds: 4 -> 1" in m.find_element("css selector", "title").get_attribute("textContent")
               for m in markers)
    assert browser.find_elements("css selector", "svg polyline.trend") == []  # no line joins the two runs
    row = browser.find_element("css selector", "#runs tr.brk")
    assert row.is_displayed() and "series break" in row.text and "max tool rounds: 4 -> 1" in row.text
    assert script_errors(browser) == []


# ---------------------------------------------------------------- the XSS fixture


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_page(tmp_path_factory.mktemp("xss") / "index.html", *hostile_data())


def test_the_xss_fixture_injects_no_element_and_runs_nothing(browser: Any, hostile: Path) -> None:
    open_page(browser, hostile)
    browser.find_element("id", "expand").click()  # opens every panel; each builds its transcript on its toggle event
    built = "return document.querySelectorAll('details.p .tx[data-built]').length"
    wait_until(browser, lambda d: d.execute_script(built) > 0)  # toggle events run after the click returns
    browser.execute_script("Array.from(document.querySelectorAll('.fold button')).forEach(function (b) { b.click(); });")
    assert browser.execute_script("return window.__xss") is None
    assert browser.find_elements("css selector", ".injected") == []
    assert browser.find_elements("css selector", "iframe, img") == []
    assert browser.execute_script("return document.scripts.length") == 3  # the page's own
    assert script_errors(browser) == []


def test_a_long_tool_result_is_folded_with_show_all(browser: Any, hostile: Path) -> None:
    open_page(browser, hostile)
    browser.find_element("css selector", "#filters input[name=q]").send_keys("long-tool-result")
    panel = browser.find_element("css selector", "details.p:not([hidden])")
    panel.find_element("css selector", "summary").click()
    _wait_built(browser, panel)
    fold = panel.find_element("css selector", ".msg-tool .fold")
    shown = fold.find_element("css selector", "pre").get_attribute("textContent")
    assert len(shown) < 1000 and shown.endswith("…")
    button = fold.find_element("css selector", "button")
    assert button.text.startswith("show all ") and int(button.text.split()[2]) > LONG_RESULT_CHARS
    button.click()
    assert len(fold.find_element("css selector", "pre").get_attribute("textContent")) > LONG_RESULT_CHARS


def test_the_score_table_writes_three_significant_digits_as_the_strip_does(browser: Any, hostile: Path) -> None:
    open_page(browser, hostile)
    browser.find_element("css selector", "#filters input[name=q]").send_keys("long-tool-result")
    panel = browser.find_element("css selector", "details.p:not([hidden])")
    panel.find_element("css selector", "summary").click()
    _wait_built(browser, panel)
    cells = [td.text for td in panel.find_elements("css selector", "table.sc td")]
    assert "0.333" in cells and not any(c.startswith("0.3333") for c in cells)


# ---------------------------------------------------------------- 10,000 samples


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_page(tmp_path_factory.mktemp("large") / "index.html", *large_data(10_000))


def test_a_10000_sample_report_becomes_interactive_and_filters(browser: Any, large: Path) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(browser, large)  # waits for the page's script to finish (no time is asserted)
    assert browser.execute_script("return document.querySelectorAll('details.p').length") >= 10_000
    Select(browser.find_element("css selector", "#filters select[name=arm]")).select_by_visible_text("recall")
    count = browser.find_element("id", "count").text
    shown, total = int(count.split()[0]), int(count.split()[2])
    assert total >= 10_000 and 0 < shown < total
    last = browser.execute_script("return document.querySelectorAll('details.p').length") - 1
    browser.execute_script(f"location.hash = 's{last}'")
    panel = _open_panel(browser)
    _wait_built(browser, panel)  # the deflated transcripts inflate in the browser
    assert "Transcript" in panel.text and script_errors(browser) == []


def test_a_pasted_history_left_out_of_a_large_page_shows_as_its_sessions(browser: Any, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the page's budget (a LongMemEval S run) a full_history transcript names its pasted sessions, deflated page too."""
    from harness.report import html as report_html
    from harness.report import page_data
    from tests.report.report_fixtures import make_report_data

    summary, samples = make_report_data(n_scenarios=2)
    sample = next(s for s in samples if s["messages"])
    session = [{"role": "user", "content": "[Earlier conversation s7, Monday 1 May 2023]\nI adopted a greyhound."},
               {"role": "assistant", "content": "Congratulations on the greyhound!"}]
    sample["messages"] = [sample["messages"][0], *session, *sample["messages"][1:]]
    sample["pasted"] = {"at": 1, "count": 2, "digest": "cd" * 32}
    monkeypatch.setattr(page_data, "PASTED_PAGE_CHARS", 10)
    monkeypatch.setattr(report_html, "_COMPRESS_ABOVE", 0)
    open_page(browser, write_page(tmp_path / "index.html", summary, samples),
              "#sample=" + quote(sample["sample_id"], safe=""))
    panel = _open_panel(browser)
    _wait_built(browser, panel)
    text = panel.find_element("css selector", ".tx").get_attribute("textContent")
    assert "2 pasted messages" in text and "histories.jsonl" in text and "[Earlier conversation s7, Monday 1 May 2023]" in text
    assert "Congratulations on the greyhound" not in text
    assert script_errors(browser) == []
