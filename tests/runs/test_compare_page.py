"""`recall-eval compare A B --html OUT`: differences first, metric deltas with intervals, flips linking to both runs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from harness.cli import main
from harness.runs.compare_page import report_link
from tests.runs.compare_factories import synthetic_run


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _parse(page: str) -> _Links:
    parser = _Links()
    parser.feed(page)
    return parser


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, int]:
    root = tmp_path_factory.mktemp("cmp")
    a = synthetic_run(root / "runs" / "a", recall_right=9, history_right=2)
    b = synthetic_run(root / "runs" / "b", recall_right=3, history_right=2)
    out = root / "pages" / "compare.html"
    code = main(["compare", str(a), str(b), "--html", str(out)])
    return a, b, out, code


def test_the_page_is_written_and_the_exit_code_is_the_gate(pages: tuple[Path, Path, Path, int]) -> None:
    _, _, out, code = pages
    assert out.is_file() and code == 1  # recall regressed: the page changes no exit code


def test_flipped_scenarios_link_to_their_transcripts_in_both_runs(pages: tuple[Path, Path, Path, int]) -> None:
    a, b, out, _ = pages
    page = out.read_text(encoding="utf-8")
    flips = page[page.index('id="flips"'):]
    assert flips.count(">broken<") == 6  # fact-03 .. fact-08 right in A's recall, wrong in B's
    links = [h for h in _parse(flips).hrefs if "#sample=" in h]
    for run, name in ((a, "a"), (b, "b")):
        mine = [h for h in links if h.startswith(f"../runs/{name}/index.html#sample=")]
        assert len(mine) == 6, links
        assert all((out.parent / h.split("#")[0]).resolve() == (run / "index.html").resolve() for h in mine)
    ids = {unquote(h.split("#sample=")[1]) for h in links}
    assert {i.split("|")[0] for i in ids} == {f"fact-0{k}" for k in range(3, 9)}
    assert {i.split("|")[1] for i in ids} == {"recall"} and {i.split("|")[3] for i in ids} == {"0"}


def test_metric_deltas_show_both_intervals_and_mark_regressions(pages: tuple[Path, Path, Path, int]) -> None:
    page = pages[2].read_text(encoding="utf-8")
    metrics = page[page.index('id="metrics"'):page.index('id="flips"')]
    row = re.search(r'<tr class="regression"><td>[^<]*</td><td>recall</td><th scope="row">continuity accuracy</th>'
                    r'<td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)', metrics)
    assert row, metrics[:2000]
    assert re.fullmatch(r"0\.9 \[[\d.]+, [\d.]+\]", row.group(1)) and row.group(2).startswith("0.3 [")
    assert row.group(3).strip() == "-0.6"


def test_parameter_differences_come_first(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b", parameters={"temperature": 0.7})
    out = tmp_path / "c.html"
    code = main(["compare", str(a), str(b), "--html", str(out)])
    page = out.read_text(encoding="utf-8")
    assert code == 2  # not comparable: still exit 2, and the page says why
    assert "NOT COMPARABLE" in page and "temperature: 0.0 -&gt; 0.7" in page
    assert page.index("temperature: 0.0") < page.index('id="metrics"')
    row = re.search(r'<tr class="differs"><th scope="row">temperature[^<]*<b class="no">≠</b></th><td>0.0</td>'
                    r'<td>0.7</td>', page)
    assert row, page[page.index('id="parameters"'):][:1500]


def test_the_compare_page_is_self_contained(pages: tuple[Path, Path, Path, int]) -> None:
    page = pages[2].read_text(encoding="utf-8")
    parsed = _parse(page)
    assert "script" not in parsed.tags and "link" not in parsed.tags and "img" not in parsed.tags
    assert not any(h.startswith(("http:", "https:", "//")) for h in parsed.hrefs)


def test_report_links_are_relative_and_escape_the_sample_id(tmp_path: Path) -> None:
    link = report_link(tmp_path / "runs" / "n 1", tmp_path / "pages", "a b|recall|openai/x|0")
    assert link == "../runs/n%201/index.html#sample=a%20b%7Crecall%7Copenai%2Fx%7C0"


def test_an_unwritable_html_path_exits_2_with_the_reason(pages: tuple[Path, Path, Path, int], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    a, b, _, _ = pages
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["compare", str(a), str(b), "--html", str(blocker / "page.html")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the page" in err and "Traceback" not in err


def test_slower_latency_is_badged_not_gated_and_never_red(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", latency=1.0)
    b = synthetic_run(tmp_path / "b", latency=3.0)
    out = tmp_path / "c.html"
    assert main(["compare", str(a), str(b), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    metrics = page[page.index('id="gate"'):page.index('id="flips"')]
    assert 'class="regression"' not in metrics and "REGRESSION" not in metrics
    assert metrics.count('<span class="badge v-none">not gated</span>') >= 2  # p50 and p95 of both arms
    assert "No metric regression beyond the intervals." in metrics and "<b>not gated</b>" in metrics
    assert main(["compare", str(a), str(b), "--html", str(out), "--gate-on", "latency"]) == 1
    assert out.read_text(encoding="utf-8").count('<span class="badge v-fail">REGRESSION</span>') >= 2
