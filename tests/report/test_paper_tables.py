"""The report's papers' metrics tables: our accuracy beside LoCoMo's and LongMemEval's figures, per category."""

from __future__ import annotations

from harness.analysis import aggregate
from harness.report.html import render_html
from harness.report.paper_tables import paper_tables
from harness.score import score_sample
from tests.score.scoring_factories import make_record, make_scenario, tool_call


def _summary() -> dict:
    hop = make_scenario("hop-1", category="single_hop", expect={"f1_reference": "Postgres 15 billing"})
    fact = make_scenario("fact-1")
    records = [make_record(hop, "Billing runs Postgres 15.", calls=[tool_call(["it-pg-version"])]),
               make_record(hop, "I don't know.", arm="history_only"),
               make_record(fact, "Billing runs MySQL.", calls=[tool_call(["it-other-ws"])]),
               make_record(fact, "I don't know.", arm="history_only")]
    scored = [score_sample(r, hop if r.scenario_id == "hop-1" else fact) for r in records]
    return {"run": {"arms": ["history_only", "recall"]}, "metrics": aggregate(scored)["metrics"]}


def test_papers_metrics_sit_beside_continuity_per_category_with_the_task_average() -> None:
    tables = {t["arm"]: t for t in paper_tables(_summary())}
    recall = tables["recall"]
    assert recall["headings"][:3] == ["continuity (ours)", "F1 (LoCoMo)", "BLEU-1 (LoCoMo)"]
    assert "Recall@5 (LongMemEval)" in recall["headings"] and "memory tools p50" in recall["headings"]
    rows = {r["category"]: dict(zip(recall["headings"], r["cells"])) for r in recall["rows"]}
    assert [r["category"] for r in recall["rows"]] == ["all", "project_fact", "single_hop"]
    assert rows["single_hop"]["continuity (ours)"].startswith("1.00")
    assert rows["single_hop"]["F1 (LoCoMo)"].startswith("0.86") and rows["single_hop"]["BLEU-1 (LoCoMo)"].startswith("0.60")
    # Every item of the factory scenario cites session s1, so any disclosed item finds the evidence session.
    assert rows["project_fact"]["Recall@5 (LongMemEval)"].startswith("1.00")
    assert recall["task_averaged"] == "0.50"  # (1 + 0) / 2 categories


def test_papers_metrics_table_is_left_out_for_an_arm_without_any_paper_figure() -> None:
    """history_only has a reference F1 (the hop scenario), so it is shown; an arm with neither F1 nor tools is not."""
    summary = _summary()
    summary["metrics"] = [r for r in summary["metrics"] if r["metric"] not in ("token_f1", "bleu1")]
    assert [t["arm"] for t in paper_tables(summary)] == ["recall"]
    page = render_html(summary, [])
    assert "The papers' metrics, beside ours" in page and "NDCG@5 (LongMemEval)" in page
