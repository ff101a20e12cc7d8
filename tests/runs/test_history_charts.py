"""The history page's charts as numbers: where each run's point, interval, line, band and break marker are drawn.

In-process, from hand-made summaries (``tests.runs.history_factories``): a point drawn at the wrong height, a
band joining two series, an axis that hides an interval, or a tooltip with the wrong figure is a chart that
misleads whoever reads the nightly trend, and none of it shows in the page's text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.runs.history import history_charts
from tests.runs.history_factories import MODEL, point, summary

PAGE = Path("/r")


def _charts(*points: Any) -> list[dict[str, Any]]:
    [block] = history_charts(points, PAGE)
    assert block["model"] == MODEL
    return block["charts"]


def _three() -> list[Any]:
    return [point(summary("run-1", "2026-03-01T02:00:00Z", continuity=(0.25, 0.05, 0.45)), PAGE / "run-1"),
            point(summary("run-2", "2026-03-02T02:00:00Z", continuity=(-0.05, -0.3, 0.2), status="fail",
                          arms={"history_only": (0.3, 0.1, 0.6), "recall": (0.25, None, 0.5)}), PAGE / "run-2"),
            point(summary("run-3", "2026-03-03T02:00:00Z", continuity=(0.1, None, None)), PAGE / "run-3")]


def test_the_continuity_difference_is_drawn_at_its_value_on_a_round_symmetric_axis() -> None:
    chart = _charts(*_three())[0]
    # |values| up to 0.45: the axis is ±0.5, so y = 14 + 160 (0.5 - v); the runs 320 px apart from x = 120
    assert chart["title"] == "Continuity difference recall − history_only (paired, 95% CI band)"
    assert (chart["width"], chart["height"], chart["left"], chart["right"], chart["base"]) == (780, 244, 120, 760, 174)
    assert chart["zero"] == 94.0 and chart["threshold"] is None and chart["breaks"] == []
    assert chart["ticks"] == [{"y": 174.0, "text": "-0.50"}, {"y": 134.0, "text": "-0.25"}, {"y": 94.0, "text": "0.00"},
                              {"y": 54.0, "text": "+0.25"}, {"y": 14.0, "text": "+0.50"}]
    assert chart["labels"] == [{"x": 120.0, "text": "2026-03-01T02:00"}, {"x": 440.0, "text": "2026-03-02T02:00"},
                               {"x": 760.0, "text": "2026-03-03T02:00"}]
    [series] = chart["series"]
    assert (series["name"], series["cls"]) == ("recall − history_only", "c1")
    assert series["lines"] == ["120.0,54.0 440.0,102.0 760.0,78.0"]
    # along the upper bounds, back along the lower ones; the third run has no interval, so the band stops at the second
    assert series["bands"] == ["120.0,22.0 440.0,62.0 440.0,142.0 120.0,86.0"]
    assert series["dots"] == [
        {"x": 120.0, "y": 54.0, "verdict": "pass", "href": "run-1/index.html", "lo": 86.0, "hi": 22.0,
         "title": "run-1 (2026-03-01T02:00:00Z) · recall − history_only: +0.250 [+0.050, +0.450] · verdict pass"},
        {"x": 440.0, "y": 102.0, "verdict": "fail", "href": "run-2/index.html", "lo": 142.0, "hi": 62.0,
         "title": "run-2 (2026-03-02T02:00:00Z) · recall − history_only: -0.050 [-0.300, +0.200] · verdict fail"},
        {"x": 760.0, "y": 78.0, "verdict": "pass", "href": "run-3/index.html", "lo": None, "hi": None,
         "title": "run-3 (2026-03-03T02:00:00Z) · recall − history_only: +0.100 · verdict pass"}]


def test_the_unsupported_claim_chart_draws_the_tolerance_and_the_axis_holds_it() -> None:
    chart = _charts(*_three())[1]
    assert chart["title"] == ("Unsupported-claim difference recall − history_only (95% CI band; dashed: tolerance 0.02)")
    # values within ±0.1: the axis is ±0.1 (y = 14 + 800 (0.1 - v)), the tolerance 0.02 at y 78
    assert chart["threshold"] == 78.0 and chart["zero"] == 94.0
    assert [t["text"] for t in chart["ticks"]] == ["-0.10", "-0.05", "0.00", "+0.05", "+0.10"]
    [series] = chart["series"]
    assert series["cls"] == "c2" and series["lines"] == ["120.0,94.0 440.0,94.0 760.0,94.0"]
    assert series["bands"] == ["120.0,14.0 440.0,14.0 760.0,14.0 760.0,174.0 440.0,174.0 120.0,174.0"]
    wide = _charts(point(summary(unsupported=(0.01, -0.02, 0.05), tolerance=-0.3)))[1]
    assert wide["ticks"][0]["text"] == "-0.30" and wide["threshold"] == 174.0  # |tolerance| widens the axis
    untold = _charts(point(summary(tolerance=None)))[1]
    assert untold["threshold"] is None and untold["title"].endswith("(95% CI band)")


def test_continuity_per_arm_is_drawn_on_a_zero_to_one_axis_one_series_per_arm() -> None:
    chart = _charts(*_three())[2]
    assert chart["title"] == "Continuity accuracy per arm (95% CI bands)"
    assert chart["zero"] is None and chart["threshold"] is None
    assert chart["ticks"] == [{"y": 174.0, "text": "0.00"}, {"y": 134.0, "text": "0.25"}, {"y": 94.0, "text": "0.50"},
                              {"y": 54.0, "text": "0.75"}, {"y": 14.0, "text": "1.00"}]
    baseline, treatment = chart["series"]
    assert (baseline["name"], baseline["cls"], treatment["name"], treatment["cls"]) == ("history_only", "c0", "recall", "c1")
    assert baseline["lines"] == ["120.0,142.0 440.0,126.0 760.0,142.0"]
    assert treatment["lines"] == ["120.0,102.0 440.0,134.0 760.0,102.0"]
    # run-2's recall interval lacks its lower bound: the band passes it by (runs 1 and 3), its dot has no whisker
    assert treatment["bands"] == ["120.0,62.0 760.0,62.0 760.0,142.0 120.0,142.0"]
    assert (treatment["dots"][1]["lo"], treatment["dots"][1]["hi"]) == (None, 94.0)
    assert treatment["dots"][1]["title"] == "run-2 (2026-03-02T02:00:00Z) · recall: 0.250 · verdict fail"
    assert baseline["dots"][0]["title"] == "run-1 (2026-03-01T02:00:00Z) · history_only: 0.200 [0.000, 0.500] · verdict pass"


def test_a_series_break_stops_lines_and_bands_and_its_marker_sits_between_the_runs() -> None:
    points = [point(summary(f"run-{n}", f"2026-03-0{n}T02:00:00Z", seed=0 if n < 3 else 7, epochs=1 if n < 3 else 2),
                    PAGE / f"run-{n}") for n in (1, 2, 3, 4)]
    chart = _charts(*points)[0]
    [series] = chart["series"]
    # runs 213.3 px apart; y(0.25) = 54, bounds at 22 and 86
    assert series["lines"] == ["120.0,54.0 333.3,54.0", "546.7,54.0 760.0,54.0"]
    assert series["bands"] == ["120.0,22.0 333.3,22.0 333.3,86.0 120.0,86.0", "546.7,22.0 760.0,22.0 760.0,86.0 546.7,86.0"]
    assert chart["breaks"] == [{"x": 440.0, "title": "series break: epochs: 1 -> 2; seed: 0 -> 7",
                                "text_y": 24.0}]
    alone = _charts(*points[:2], point(summary("run-3", "2026-03-03T02:00:00Z", seed=7, epochs=2)),
                    point(summary("run-4", "2026-03-04T02:00:00Z")))[0]
    [series] = alone["series"]  # run-3 alone between two breaks: a dot, no line or band
    assert series["lines"] == ["120.0,54.0 333.3,54.0"] and len(series["bands"]) == 1 and len(series["dots"]) == 4
    assert [b["x"] for b in alone["breaks"]] == [440.0, 653.4]  # halfway between 546.7 and 760, to 0.1 px


def test_the_unsupported_claim_and_per_arm_charts_break_where_the_continuity_chart_does() -> None:
    points = [point(summary(f"run-{n}", f"2026-03-0{n}T02:00:00Z", seed=0 if n < 3 else 7), PAGE / f"run-{n}")
              for n in (1, 2, 3, 4)]
    _, unsupported, per_arm = _charts(*points)
    # a line or band joined across the break would draw a trend between runs that cannot be compared
    assert [(b["x"], b["title"]) for b in unsupported["breaks"]] == [(440.0, "series break: seed: 0 -> 7")]
    assert unsupported["breaks"] == per_arm["breaks"]
    [series] = unsupported["series"]  # (0.0, -0.1, 0.1) on the ±0.1 axis: y 94, bounds at 14 and 174
    assert series["lines"] == ["120.0,94.0 333.3,94.0", "546.7,94.0 760.0,94.0"]
    assert series["bands"] == ["120.0,14.0 333.3,14.0 333.3,174.0 120.0,174.0",
                               "546.7,14.0 760.0,14.0 760.0,174.0 546.7,174.0"]
    baseline, treatment = per_arm["series"]  # history_only 0.2 [0, 0.5], recall 0.45 [0.2, 0.7] on 0..1
    assert baseline["lines"] == ["120.0,142.0 333.3,142.0", "546.7,142.0 760.0,142.0"]
    assert treatment["lines"] == ["120.0,102.0 333.3,102.0", "546.7,102.0 760.0,102.0"]
    assert treatment["bands"] == ["120.0,62.0 333.3,62.0 333.3,142.0 120.0,142.0",
                                  "546.7,62.0 760.0,62.0 760.0,142.0 546.7,142.0"]


def test_break_labels_use_ten_rows_then_keep_only_their_markers() -> None:
    points = [point(summary(f"run-{n:03d}", f"2026-03-01T{n // 60:02d}:{n % 60:02d}:00Z", seed=n)) for n in range(100)]
    breaks = _charts(*points)[0]["breaks"]
    assert len(breaks) == 99 and breaks[0]["title"] == "series break: seed: 0 -> 1"
    rows = sorted({b["text_y"] for b in breaks if b["text_y"] is not None})
    assert rows == [24.0 + 14 * k for k in range(10)]  # (160 - 20) // 14 rows, from 10 px under the top
    assert any(b["text_y"] is None for b in breaks)


def test_one_run_is_drawn_in_the_middle_without_a_line() -> None:
    chart = _charts(point(summary()))[0]
    [series] = chart["series"]
    assert [(d["x"], d["y"]) for d in series["dots"]] == [(440.0, 54.0)] and chart["labels"][0]["x"] == 440.0
    assert series["lines"] == [] and series["bands"] == []
    assert _charts(point(summary(continuity=(0.1234, 0.1, 0.2))))[0]["series"][0]["dots"][0]["y"] == 44.6  # to 0.1 px
    undated = point(summary("nightly-9", started_at=""))
    assert _charts(undated)[0]["labels"] == [{"x": 440.0, "text": "nightly-9"}]  # no start time: its id


def test_a_hand_edited_value_off_the_scale_is_drawn_at_the_axis_end_with_its_true_figure() -> None:
    chart = _charts(point(summary(continuity=(1.7, 1.2, 2.0))), point(summary(continuity=(-3, -3, 0))))[0]
    assert chart["ticks"][0]["text"] == "-1.00" and chart["ticks"][-1]["text"] == "+1.00"  # never past ±1
    [series] = chart["series"]
    assert [d["x"] for d in series["dots"]] == [120.0, 760.0]  # two runs: the axis's two ends
    assert [(d["y"], d["lo"], d["hi"]) for d in series["dots"]] == [(14.0, 14.0, 14.0), (174.0, 174.0, 94.0)]
    assert "+1.700 [+1.200, +2.000]" in series["dots"][0]["title"]
    assert "-3.000 [-3.000, +0.000]" in series["dots"][1]["title"]


def test_the_symmetric_axis_rounds_up_to_a_tenth_but_never_past_a_float_error() -> None:
    def top(continuity: tuple[float, float, float]) -> str:
        return _charts(point(summary(continuity=continuity)))[0]["ticks"][-1]["text"]

    assert top((0.1 + 0.2, 0.0, 0.0)) == "+0.30"  # 0.30000000000000004 is 0.3, not a reason for a 0.4 axis
    assert top((0.31, 0.0, 0.0)) == "+0.40"
    assert top((0.0, -0.01, 0.01)) == "+0.10"  # at least ±0.1


def test_values_that_are_not_finite_numbers_draw_no_point() -> None:
    chart = _charts(point(summary(continuity=(True, 0.0, 0.5))), point(summary(continuity=(float("nan"), 0.0, 0.5))),
                    point(summary(continuity=(10 ** 400, 0.0, 0.5))), point(summary(continuity=("0.5", 0.0, 0.5))),
                    point(summary(continuity=(1, 0, 1))))[0]
    [series] = chart["series"]
    assert [d["title"].split(": ")[1].split(" ·")[0] for d in series["dots"]] == ["+1.000 [+0.000, +1.000]"]
    assert chart["ticks"][-1]["text"] == "+1.00"
    bounds = _charts(point(summary(continuity=(0.2, float("inf"), 10 ** 400))))[0]["series"][0]["dots"]
    assert (bounds[0]["lo"], bounds[0]["hi"]) == (None, None) and bounds[0]["title"].endswith(": +0.200 · verdict pass")


def test_each_chart_reads_only_the_overall_row_of_its_model_metric_and_arms() -> None:
    data = summary(continuity=(0.25, 0.05, 0.45))
    decoys = [dict(data["paired"][0], category="project_fact", diff=0.9),
              dict(data["paired"][0], model="other/model", diff=0.8),
              dict(data["paired"][0], metric="adherence_rate", diff=0.7),
              dict(data["paired"][0], arm_a="recall", arm_b="history_only", diff=-0.25),
              dict(data["paired"][0], arm_a="full_history", diff=0.6)]
    data["paired"] = [*decoys, *data["paired"]]
    data["metrics"] = [dict(data["metrics"][0], category="project_fact", value=0.9),
                       dict(data["metrics"][0], model="other/model", value=0.9),
                       dict(data["metrics"][0], metric="adherence_rate", value=0.9),
                       dict(data["metrics"][0], model="other/model", arm="full_history"),
                       dict(data["metrics"][0], metric="adherence_rate", arm="recall_fts"), *data["metrics"]]
    data["run"]["models"] = [MODEL]
    charts = _charts(point(data))
    assert charts[0]["series"][0]["dots"][0]["title"].split(": ")[1].startswith("+0.250 ")
    # an arm this model has no continuity row for gets no series
    assert [s["dots"][0]["title"].split(": ")[1].split(" ")[0] for s in charts[2]["series"]] == ["0.200", "0.450"]
    assert [s["name"] for s in charts[2]["series"]] == ["history_only", "recall"]
    uncategorised = summary(continuity=(0.25, 0.05, 0.45))
    del uncategorised["paired"][0]["category"], uncategorised["metrics"][0]["category"]
    charts = _charts(point(uncategorised))  # a row without a category is the overall one
    assert charts[0]["series"][0]["dots"] and charts[2]["series"][0]["dots"]


def test_every_model_gets_its_charts_and_the_latest_run_names_the_arms() -> None:
    older = summary("run-1", model="b/model")
    middle = summary("run-2", "2026-03-02T02:00:00Z", model="b/model")
    newer = summary("run-3", "2026-03-03T02:00:00Z", model="a/model")
    newer["verdict"]["config"] = {"treatment_arm": "recall_fts", "baseline_arm": "recall", "unsupported_tolerance": 0.05}
    blocks = history_charts([point(older), point(middle), point(newer)], PAGE)
    assert [b["model"] for b in blocks] == ["a/model", "b/model"]
    assert blocks[0]["charts"][0]["title"] == "Continuity difference recall_fts − recall (paired, 95% CI band)"
    assert blocks[0]["charts"][1]["title"].endswith("; dashed: tolerance 0.05)")
    assert blocks[0]["charts"][0]["series"][0]["name"] == "recall_fts − recall"
    assert history_charts([], PAGE) == []
