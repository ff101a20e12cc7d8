"""How fast a 10,000-sample report becomes usable in a real browser; prints the figures.

Builds the run of ``benchmarks/report_bench.py`` (50 scenarios x 3 arms x 67
epochs = 10,050 samples, realistic transcripts) with ``build_report``, then
opens its ``index.html`` in the system's headless Chromium (Debian's
``chromium`` + ``chromium-driver``, through Selenium) several times and prints:

* ``build_report`` wall and CPU time          [target: under 5 s]
* the page's size                             [target: under 15 MB]
* time to interactive: from navigation start until the page's script has
  wired the filters, the grid and the deep links (``data-ready``)  [target: under 3 s]
* time to open one sample: inflating the embedded transcripts and building its panel

Usage: python benchmarks/browser_bench.py [--runs 3] [--scenarios 50] [--epochs 67] [--keep DIR]
Never run as a test (tests never assert on wall time).
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # as `recall-eval` sets them (harness.cli.single_threaded_blas)
    os.environ.setdefault(_name, "1")

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report_bench import ARMS, synthesize  # noqa: E402
from harness.records import read_manifest, write_manifest  # noqa: E402
from tests.browser.conftest import browser_paths  # noqa: E402
from tests.score.scoring_factories import write_run  # noqa: E402


def _driver(browser: str, driver: str):  # noqa: ANN202 - selenium is imported here only
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1600"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="page loads to time (default 3)")
    parser.add_argument("--scenarios", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=67)
    parser.add_argument("--keep", metavar="DIR", help="write the run folder here instead of a temporary folder")
    args = parser.parse_args()
    found = browser_paths()
    if isinstance(found, str):
        sys.exit(f"cannot run: {found}")
    from harness.report import build_report

    records, scenarios = synthesize(args.scenarios, args.epochs)
    run_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp()) / "bench-run"
    write_run(run_dir, records, arms=ARMS)
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"epochs": args.epochs}))
    t0, c0 = time.perf_counter(), time.process_time()
    outcome = build_report(run_dir, scenarios=scenarios)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    page = outcome.index_html
    print(f"samples: {len(records)}")
    print(f"build_report: wall {wall:.2f} s, CPU {cpu:.2f} s  [target < 5 s]")
    print(f"index.html: {page.stat().st_size / 1e6:.2f} MB  [target < 15 MB]")

    from selenium.webdriver.support.ui import WebDriverWait

    driver = _driver(*found)
    ready, opened = [], []
    try:
        for _ in range(args.runs):
            driver.get("about:blank")
            driver.get(page.resolve().as_uri())
            WebDriverWait(driver, 120).until(lambda d: d.execute_script(
                "return document.documentElement.getAttribute('data-ready') === '1'"))
            ready.append(driver.execute_script("return window.__reportReadyAt") / 1000.0)
            start = driver.execute_script("return performance.now()")
            driver.execute_script(f"location.hash = 's{len(records) - 1}'")
            WebDriverWait(driver, 120).until(lambda d: d.execute_script(
                "var t = document.querySelector('details.p[open] .tx'); return !!(t && t.getAttribute('data-built'))"))
            opened.append((driver.execute_script("return performance.now()") - start) / 1000.0)
    finally:
        driver.quit()
    print(f"time to interactive (navigation start -> filters, grid and links wired): best {min(ready):.2f} s, "
          f"worst {max(ready):.2f} s over {len(ready)} loads  [target < 3 s]")
    print(f"first sample opened (transcripts inflated, panel built): best {min(opened):.2f} s, worst {max(opened):.2f} s")


if __name__ == "__main__":
    main()
