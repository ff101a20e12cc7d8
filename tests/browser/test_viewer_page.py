"""The viewer's index in a real browser: rows per run, a report opened, two runs compared, a live run counting up."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import script_errors, wait_until
from tests.runs.viewer_fixtures import progress_live, runs_tree, serving, snapshot


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return runs_tree(tmp_path_factory.mktemp("viewer"))


def _open_index(driver: Any, base: str) -> None:
    driver.get("about:blank")
    driver.get(base)
    driver.get_log("browser")
    wait_until(driver, lambda d: d.execute_script("return document.documentElement.getAttribute('data-ready') === '1'"))


def _rows(driver: Any) -> dict[str, Any]:
    from selenium.webdriver.common.by import By

    return {row.get_attribute("data-path"): row for row in driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr")}


def test_the_index_shows_a_row_per_run_that_opens_its_report(browser: Any, tree: Path) -> None:
    from selenium.webdriver.common.by import By

    with serving(tree) as base:
        _open_index(browser, base)
        rows = _rows(browser)
        assert sorted(rows) == ["live", "nightly/n1", "nightly/n2"]
        n1 = rows["nightly/n1"]
        assert "smoke (2 scenarios)" in n1.text and "history_only, recall" in n1.text
        assert n1.find_element(By.CSS_SELECTOR, ".status").text == "complete 4/4"
        assert "offline/reference:" in n1.find_element(By.CSS_SELECTOR, ".continuity").text
        assert rows["live"].find_element(By.CSS_SELECTOR, ".verdict").text == "no report"
        assert not script_errors(browser)
        n1.find_element(By.TAG_NAME, "a").click()
        wait_until(browser, lambda d: d.current_url.endswith("/nightly/n1/index.html"))
        wait_until(browser, lambda d: d.execute_script("return document.documentElement.getAttribute('data-ready') === '1'"), 60)
        assert "recall" in browser.find_element(By.TAG_NAME, "body").text


def test_two_ticked_runs_open_their_compare_page_whose_links_reach_both_reports(browser: Any, tree: Path) -> None:
    from selenium.webdriver.common.by import By

    before = snapshot(tree)
    with serving(tree) as base:
        _open_index(browser, base)
        rows = _rows(browser)
        button = browser.find_element(By.ID, "compare")
        assert not button.is_enabled()
        assert not rows["live"].find_element(By.TAG_NAME, "input").is_enabled()  # no report: nothing to compare
        rows["nightly/n1"].find_element(By.TAG_NAME, "input").click()
        rows["nightly/n2"].find_element(By.TAG_NAME, "input").click()
        assert button.is_enabled()
        button.click()
        wait_until(browser, lambda d: "/_compare?" in d.current_url)
        links = [a.get_attribute("href") for a in browser.find_elements(By.TAG_NAME, "a")]
        assert any(h.startswith(base + "nightly/n1/index.html") for h in links)
        assert any(h.startswith(base + "nightly/n2/index.html") for h in links)
        browser.get(base + "_history")
        history_links = [a.get_attribute("href") for a in browser.find_elements(By.TAG_NAME, "a")]
        assert any(h.startswith(base + "nightly/n2/index.html") for h in history_links)
    assert snapshot(tree) == before  # the run folders were only read


def test_a_run_in_progress_counts_up_without_a_reload(browser: Any, tree: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    root = tmp_path / "copy"
    shutil.copytree(tree, root)
    with serving(root) as base:
        _open_index(browser, base)
        status = lambda d: _rows(d)["live"].find_element(By.CSS_SELECTOR, ".status").text  # noqa: E731
        assert status(browser) == "running 2/4"
        browser.execute_script("window.__marker = 1")  # gone if the page reloads
        progress_live(root)
        wait_until(browser, lambda d: status(d) == "running 3/4", 20)
        assert browser.execute_script("return window.__marker") == 1 and not script_errors(browser)
