"""A headless Chromium for the report pages: Debian's ``chromium`` and ``chromium-driver``, driven by Selenium.

Only the system browser and its driver are used (their paths are passed to
Selenium, so Selenium Manager never looks for, or downloads, another build).
Without them every test here is skipped, saying what to install; ``.ci/run``
installs them, so CI runs these tests.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BROWSERS = ("chromium", "chromium-browser")
DRIVERS = ("chromedriver",)
INSTALL = "apt-get install chromium chromium-driver"

#: Collects script errors from the first moment of every page (before the page's own script runs).
ERROR_HOOK = """
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message || e)); });
window.addEventListener('unhandledrejection', function (e) { window.__errors.push('rejection: ' + String(e.reason)); });
"""


def _find(names: tuple[str, ...]) -> str | None:
    return next((path for name in names if (path := shutil.which(name))), None)


def browser_paths() -> tuple[str, str] | str:
    """``(browser, driver)`` paths, or why they cannot be had."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    browser, driver = os.environ.get("RECALL_EVAL_CHROMIUM") or _find(BROWSERS), _find(DRIVERS)
    if not browser or not driver:
        return f"no local Chromium and chromedriver ({INSTALL})"
    return browser, driver


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session; each test loads its own page."""
    found = browser_paths()
    if isinstance(found, str):
        pytest.skip(found)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1600", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": ERROR_HOOK})
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def wait_until(driver: Any, condition: Any, seconds: float = 30) -> Any:
    """``condition(driver)``'s first truthy value, polled for up to ``seconds`` (selenium imported only here)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def wait_ready(driver: Any) -> None:
    """Wait until the page's script has marked the document ready (``data-ready``), e.g. after a navigation."""
    wait_until(driver, lambda d: d.execute_script("return document.documentElement.getAttribute('data-ready') === '1'"),
               60)


def open_page(driver: Any, path: Path, fragment: str = "") -> None:
    """Load a page from disk and wait until its script has finished (``data-ready``), if it has one."""
    driver.get("about:blank")  # a new document even when only the fragment differs from the last page
    driver.get(Path(path).resolve().as_uri() + fragment)
    driver.get_log("browser")  # start each page with an empty log
    if driver.execute_script("return document.scripts.length") > 0:
        wait_until(driver, lambda d: d.execute_script(
            "return document.documentElement.getAttribute('data-ready') === '1' || window.__errors.length > 0"), 60)


def script_errors(driver: Any) -> list[str]:
    """Errors the page's scripts raised, from the page's hook and from the browser's console log."""
    hooked = driver.execute_script("return window.__errors || []")
    logged = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    return [*hooked, *logged]
