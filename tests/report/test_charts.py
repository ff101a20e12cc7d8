"""The latency chart uses the summary's quantile definition."""

from __future__ import annotations

from harness.analysis import stats
from harness.report.charts import latency_chart
from harness.report.formatting import seconds


def test_latency_chart_p50_and_p95_are_the_summary_quantiles():
    values = [1.0, 2.0, 10.0, 40.0]
    summary = {"run": {"arms": ["recall"]},
               "latency": [{"model": "m", "arm": "recall", "p50_s": stats.quantile(values, 0.5),
                            "p95_s": stats.quantile(values, 0.95), "values_s": values}]}
    title = latency_chart(summary)["boxes"][0]["title"]
    # An interpolating chart would say p50 6.00 s while the table says 2.00 s.
    assert title == f"n=4, p50 {seconds(2.0)}, p95 {seconds(40.0)}"
