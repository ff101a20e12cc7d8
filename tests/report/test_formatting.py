"""Units in the HTML report: durations under a second read in milliseconds everywhere."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from harness.report import charts
from harness.report.formatting import format_metric, paired_diff, seconds
from harness.report.html import render_html
from tests.report.report_fixtures import make_report_data


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self._skip = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip = tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip = False

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.text.append(data.strip())


def _offline_run() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run as fast as the offline model: every duration divided by 1000 (about 1-4 ms)."""
    summary, samples = make_report_data(n_scenarios=4)
    for sample in samples:
        sample["latency_s"] = sample["latency_s"] / 1000
    for row in summary["metrics"]:
        if row["metric"].startswith("latency"):
            row.update({k: row[k] / 1000 for k in ("value", "ci_low", "ci_high") if row.get(k) is not None})
    for row in summary["latency"]:
        row["values_s"] = [v / 1000 for v in row["values_s"]]
    for row in summary["added_latency"]:
        row.update({k: v / 1000 for k, v in row.items() if k.endswith(("_s", "_p50")) and v is not None})
    for row in summary["paired"]:
        if row["metric"] == "latency_s":
            row.update({k: row[k] / 1000 for k in ("diff", "ci_low", "ci_high") if row.get(k) is not None})
    return summary, samples


def _page_text(summary: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    parser = _Text()
    parser.feed(render_html(summary, samples))
    return " | ".join(parser.text)


def test_durations_under_a_second_read_in_milliseconds() -> None:
    assert seconds(0.0032) == "3.2 ms"
    assert seconds(0.37) == "370 ms"
    assert seconds(0.00004) == "0.04 ms"
    assert seconds(0.9999) == "1.00 s"
    assert seconds(1.5) == "1.50 s"
    assert seconds(0.0) == "0 s"
    assert seconds(None) == "—"


def test_signed_durations_keep_their_sign_in_milliseconds() -> None:
    assert seconds(0.0004, sign=True) == "+0.40 ms"
    assert seconds(-0.012, sign=True) == "-12.0 ms"
    assert seconds(2.25, sign=True) == "+2.25 s"


def test_metric_table_latency_under_a_second_reads_in_milliseconds() -> None:
    row = {"metric": "latency_p50_s", "value": 0.0032, "ci_low": 0.003, "ci_high": 0.0035}
    assert format_metric(row) == "3.2 ms [3.0 ms, 3.5 ms]"


def test_paired_latency_difference_under_a_second_reads_in_milliseconds() -> None:
    row = {"metric": "latency_s", "diff": 0.0021, "ci_low": -0.0005, "ci_high": 0.004}
    assert paired_diff(row) == "+2.1 ms [-0.50 ms, +4.0 ms]"


def test_latency_chart_axis_reads_in_milliseconds_when_it_ends_below_a_second() -> None:
    summary, _ = _offline_run()
    ticks = [t["text"] for t in charts.latency_chart(summary)["ticks"]]
    assert ticks[0] == "0" and all(t.endswith(" ms") for t in ticks[1:])
    assert all("ms" in box["title"] for box in charts.latency_chart(summary)["boxes"])


def test_latency_chart_axis_reads_in_seconds_past_a_second() -> None:
    summary, _ = make_report_data(n_scenarios=4)
    ticks = [t["text"] for t in charts.latency_chart(summary)["ticks"]]
    assert all(t.endswith(" s") for t in ticks)


def test_offline_model_run_shows_no_zero_seconds_anywhere() -> None:
    summary, samples = _offline_run()
    text = _page_text(summary, samples)
    assert "0.00 s" not in text
    assert re.search(r"latency p50 \| \d+\.\d+ ms \|", text)  # metric table
    assert re.search(r"[+-]\d+\.\d+ ms \[[+-]\d+\.\d+ ms, [+-]\d+\.\d+ ms\]", text)  # added latency / paired
    assert re.search(r"· \d\.\d ms · stop", text)  # a sample panel


def test_a_duration_and_its_interval_share_one_unit() -> None:
    row = {"metric": "latency_p50_s", "value": 0.994, "ci_low": 0.978, "ci_high": 1.01}
    assert format_metric(row) == "0.99 s [0.98 s, 1.01 s]"
    assert paired_diff({"metric": "latency_s", "diff": 0.371, "ci_low": 0.346, "ci_high": 0.398}) == (
        "+371 ms [+346 ms, +398 ms]")
