"""The scenario x arm grid's data: a row per scenario, a column per model x arm, what each cell says."""

from __future__ import annotations

from typing import Any

from harness.report.grid import answer_head, scenario_grid
from harness.report.html import _sorted_samples, render_html
from tests.report.report_fixtures import make_report_data


def _sample(scenario: str, arm: str, outcome: str, epoch: int = 0, model: str = "m", answer: str = "an answer",
            status: str = "ok") -> dict[str, Any]:
    return {"scenario_id": scenario, "title": f"title of {scenario}", "category": "decision", "arm": arm,
            "model": model, "epoch": epoch, "outcome": outcome, "status": status, "final_answer": answer,
            "error": {"type": "RateLimitError", "message": "429"} if status == "error" else None}


def _grid(samples: list[dict[str, Any]], arms: tuple[str, ...] = ("history_only", "recall")) -> dict[str, Any]:
    summary = {"run": {"arms": list(arms)}}
    return scenario_grid(_sorted_samples(samples, summary), summary)


def test_a_row_per_scenario_and_a_column_per_model_and_arm() -> None:
    summary, samples = make_report_data(n_scenarios=5, models=("a/x", "b/y"))
    grid = scenario_grid(_sorted_samples(samples, summary), summary)
    assert [r["scenario_id"] for r in grid["rows"]] == sorted({s["scenario_id"] for s in samples})
    assert [c["name"] for c in grid["columns"]] == [f"{arm} · {model}" for model in ("a/x", "b/y")
                                                    for arm in ("history_only", "recall", "full_history")]
    assert all(len(r["cells"]) == 6 for r in grid["rows"])


def test_a_cell_counts_correct_epochs_and_is_mixed_when_they_disagree() -> None:
    grid = _grid([_sample("s1", "recall", "correct", 0), _sample("s1", "recall", "wrong", 1),
                  _sample("s1", "recall", "correct", 2), _sample("s1", "history_only", "wrong", 0),
                  _sample("s1", "history_only", "wrong", 1), _sample("s1", "history_only", "wrong", 2)])
    history, recall = grid["rows"][0]["cells"]
    assert (recall["outcome"], recall["count"], recall["rate"]) == ("mixed", "2/3", round(2 / 3, 4))
    assert (history["outcome"], history["count"], history["rate"]) == ("wrong", "0/3", 0.0)
    assert [mark for _, _, mark in recall["links"]] == ["✓", "✗", "✓"]
    assert grid["rows"][0]["differ"] is True


def test_errors_are_counted_apart_from_the_correct_rate() -> None:
    grid = _grid([_sample("s1", "recall", "error", 0, status="error", answer=None),
                  _sample("s1", "recall", "correct", 1), _sample("s1", "history_only", "correct", 0),
                  _sample("s1", "history_only", "correct", 1)])
    history, recall = grid["rows"][0]["cells"]
    assert recall["count"] == "1/1 +1 err" and recall["rate"] == 1.0 and recall["head"] == "an answer"
    assert grid["rows"][0]["differ"] is False  # both columns right whenever scored


def test_a_cell_of_only_errors_names_the_error_and_has_no_rate() -> None:
    grid = _grid([_sample("s1", "recall", "error", status="error", answer=None), _sample("s1", "history_only",
                                                                                         "correct")])
    recall = grid["rows"][0]["cells"][1]
    assert recall["head"] == "error: RateLimitError" and recall["rate"] is None


def test_a_missing_cell_is_none() -> None:
    grid = _grid([_sample("s1", "recall", "correct"), _sample("s2", "history_only", "correct"),
                  _sample("s2", "recall", "correct")])
    assert grid["rows"][0]["cells"][0] is None and grid["rows"][1]["cells"][0] is not None


def test_the_answer_head_is_its_first_two_lines_cut_with_an_ellipsis() -> None:
    assert answer_head("one\n\n two \nthree") == "one two"
    assert answer_head("x" * 300) == "x" * 99 + "…"
    assert answer_head(None) == ""


def test_every_grid_cell_links_to_a_sample_panel_of_its_scenario_and_arm() -> None:
    import re

    summary, samples = make_report_data(n_scenarios=4, epochs=2)
    page = render_html(summary, samples)
    grid = page[page.index('id="grid"'):page.index('id="metrics"')]
    panels = dict(re.findall(r'<details class="p" id="(s\d+)"><summary>(.*?)</summary>', page))
    for row in re.findall(r"<tr data-cat.*?</tr>", grid, re.S):
        scenario = re.search(r"<code>([^<]+)</code>", row).group(1)
        arms = ["history_only", "recall", "full_history"]
        cells = re.findall(r'<td class="gc[^"]*"[^>]*><a href="#(s\d+)">', row)
        assert len(cells) == 3
        for arm, pid in zip(arms, cells):
            assert scenario in panels[pid] and f"· {arm} ·" in panels[pid]
