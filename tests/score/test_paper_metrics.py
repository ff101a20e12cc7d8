"""The papers' metrics against values computed by hand: LoCoMo's stemmed token F1 and BLEU-1, LongMemEval's
session-level Recall@k and NDCG@k and its task-averaged accuracy, and tool latency apart from the whole."""

from __future__ import annotations

import math

import pytest

from harness.analysis import aggregate
from harness.scenarios.models import Scenario
from harness.score import score_sample
from harness.score.paper_metrics import (
    bleu1,
    evidence_sessions,
    locomo_f1,
    ranked_session_metrics,
    ranked_sessions,
    session_retrieval,
    stemmed_f1,
    task_averaged,
)
from tests.analysis.sample_scores import sample
from tests.score.scoring_factories import make_record, make_scenario, tool_call


def test_token_f1_stems_tokens_as_locomo_does() -> None:
    """Bug planted: F1 without stemming ("painting" != "paints", "landscapes" != "landscape") gave 0.0."""
    # answer stems: she, wa, paint, landscap; gold: paint, landscap -> P 2/4, R 2/2, F1 2/3.
    assert stemmed_f1("She was painting landscapes", "paints landscape") == pytest.approx(2 / 3)
    assert stemmed_f1("The dog, and a cat", "dogs cats") == pytest.approx(1.0)  # articles, 'and', commas dropped
    assert stemmed_f1("", "Max") == 0.0 and stemmed_f1("Max", "") == 0.0


def test_token_f1_of_multi_hop_averages_the_best_match_of_each_sub_answer() -> None:
    """Bug planted: multi_hop scored on the whole strings (0.8 here) instead of per comma-separated sub-answer."""
    # gold "painting": best of "hiking and painting" (P 1/2, R 1 -> 2/3) and "swimming" (0); "hiking" likewise.
    assert locomo_f1("hiking and painting, swimming", "painting, hiking", "multi_hop") == pytest.approx(2 / 3)
    assert locomo_f1("hiking and painting, swimming", "painting, hiking", "single_hop") == pytest.approx(0.8)


def test_token_f1_of_open_domain_scores_the_gold_first_part() -> None:
    assert locomo_f1("a dog", "a dog; maybe a cat", "open_domain") == pytest.approx(1.0)
    assert locomo_f1("a dog", "a dog; maybe a cat", "single_hop") == pytest.approx(0.5)  # [dog] vs [dog, mayb, cat]


def test_bleu1_clips_unigram_counts_and_applies_the_brevity_penalty() -> None:
    """Bugs planted: no brevity penalty (1.0 for the short answer), unclipped counts (1.0 for 'cat cat cat')."""
    assert bleu1("the cat sat", "the cat sat on the mat") == pytest.approx(math.exp(1 - 6 / 3))
    assert bleu1("cat cat cat", "the cat") == pytest.approx(1 / 3)
    assert bleu1("", "the cat") == 0.0


def test_session_recall_and_ndcg_use_longmemeval_discount() -> None:
    """Bug planted: NDCG without the log2 discount gave 1.0 at k=5 (DCG 2 over ideal 2) instead of 0.75."""
    got = ranked_session_metrics(["s4", "s2", "s1", "s3"], {"s2", "s3"}, ks=(1, 3, 5))
    assert got == pytest.approx({
        "recall_any@1": 0.0, "recall_all@1": 0.0, "ndcg@1": 0.0,
        # top 3: s4 s2 s1 -> DCG 0 + 1/log2(2) + 0 = 1; ideal two relevant = 1 + 1 = 2.
        "recall_any@3": 1.0, "recall_all@3": 0.0, "ndcg@3": 0.5,
        # top 5: DCG 0 + 1 + 0 + 1/log2(4) = 1.5; ideal 2.
        "recall_any@5": 1.0, "recall_all@5": 1.0, "ndcg@5": 0.75,
    })


def test_session_ndcg_ties_rank_one_and_two_and_grades_lower_ranks() -> None:
    """LongMemEval's DCG weighs ranks 1 and 2 alike (1/log2(2) = 1); rank 3 weighs 1/log2(3).

    Bug planted: the textbook discount 1/log2(r + 1) gave 0.63 for the evidence at rank 2.
    """
    assert ranked_session_metrics(["s2", "s3"], {"s2", "s3"}, ks=(5,))["ndcg@5"] == pytest.approx(1.0)
    assert ranked_session_metrics(["s4", "s2"], {"s2"}, ks=(5,))["ndcg@5"] == pytest.approx(1.0)
    assert ranked_session_metrics(["s4", "s1", "s2"], {"s2"}, ks=(5,))["ndcg@5"] == pytest.approx(1 / math.log2(3))
    assert ranked_session_metrics([], {"s2"}, ks=(5,)) == {"recall_any@5": 0.0, "recall_all@5": 0.0, "ndcg@5": 0.0}


def _sessions_scenario() -> Scenario:
    sessions = [{"id": f"s{i}", "started_at": 1000 * i, "turns": [{"role": "user", "content": f"turn {i}"}]}
                for i in range(1, 5)]
    items = [
        {"id": "it-a", "content": "a", "kind": "knowledge", "keys": ["a"], "sources": [{"session": "s1", "turn": "t1"}]},
        {"id": "it-b", "content": "b", "kind": "knowledge", "keys": ["b"], "sources": [{"session": "s2", "turn": "t1"}]},
        {"id": "it-c", "content": "c", "kind": "knowledge", "keys": ["c"],
         "sources": [{"session": "s2", "turn": "t1"}, {"session": "s3", "turn": "t1"}]},
        {"id": "it-d", "content": "d", "kind": "knowledge", "keys": ["d"], "sources": [{"session": "s4", "turn": "t1"}]},
    ]
    return Scenario.model_validate({
        "id": "lme-1", "title": "t", "category": "multi_session", "description": "d", "sessions": sessions,
        "items": items, "probe": {"started_at": 9000, "message": "q?"},
        "expect": {"must_contain_any": ["x"], "relevant_items": ["it-b", "it-c"]},
    })


def test_session_retrieval_ranks_the_sessions_the_disclosed_items_cite() -> None:
    """Bug planted: only each item's first source counted, so s3 (cited second by it-c) was never retrieved."""
    scenario = _sessions_scenario()
    record = make_record(scenario, "x", calls=[tool_call(["it-a", "it-c"]), tool_call(["it-b"], call_id="c2")])
    assert evidence_sessions(scenario) == {"s2", "s3"}
    assert ranked_sessions(record, scenario) == ["s1", "s2", "s3"]
    got = score_sample(record, scenario).session_retrieval
    # DCG 0 + 1/log2(2) + 1/log2(3) over ideal 2.
    assert got == pytest.approx({"recall_any@5": 1.0, "recall_all@5": 1.0, "ndcg@5": (1 + 1 / math.log2(3)) / 2,
                                 "recall_any@10": 1.0, "recall_all@10": 1.0, "ndcg@10": (1 + 1 / math.log2(3)) / 2})


def test_session_retrieval_is_none_without_tools_evidence_or_success() -> None:
    scenario = _sessions_scenario()
    assert session_retrieval(make_record(scenario, "x", arm="history_only"), scenario) is None
    assert session_retrieval(make_record(scenario, "x", error=True), scenario) is None
    bare = make_scenario(abstain=True)
    assert session_retrieval(make_record(bare, "I don't know."), bare) is None


def test_task_averaged_accuracy_weighs_each_category_alike() -> None:
    """Bug planted: the task average taken over samples (5/7) instead of over categories ((1 + 0 + 0.75) / 3)."""
    assert task_averaged({"a": 1.0, "b": 0.0, "c": 0.75}) == pytest.approx(1.75 / 3)
    scores = ([sample(1, "recall", 0, True, category="a"), sample(2, "recall", 0, True, category="a"),
               sample(3, "recall", 0, False, category="b")]
              + [sample(4 + i, "recall", 0, i < 3, category="c") for i in range(4)])
    rows = [r for r in aggregate(scores)["metrics"] if r["metric"] == "task_averaged_accuracy"]
    assert rows == [{"model": "m", "arm": "recall", "category": "all", "metric": "task_averaged_accuracy",
                     "value": pytest.approx(round(1.75 / 3, 6)), "ci_low": None, "ci_high": None, "n": 7}]


def test_paper_metrics_are_aggregated_per_arm_and_category() -> None:
    scenario = make_scenario(category="single_hop", expect={"f1_reference": "Postgres 15 billing"})
    records = [make_record(scenario, "Billing runs Postgres 15.", calls=[tool_call(["it-pg-version"])]),
               make_record(scenario, "I don't know.", arm="history_only")]
    tables = aggregate([score_sample(r, scenario) for r in records])
    found = {(r["arm"], r["category"], r["metric"]): r["value"] for r in tables["metrics"]}
    # answer stems billing->bill, runs->run: [bill, run, postgr, 15] vs [postgr, 15, bill]: P 3/4, R 1.
    assert found[("recall", "single_hop", "token_f1")] == pytest.approx(round(6 / 7, 6))
    # tokens [billing, runs, postgres, 15, .] vs [postgres, 15, billing]: 3 of 5, no brevity penalty.
    assert found[("recall", "single_hop", "bleu1")] == pytest.approx(0.6)
    assert found[("recall", "single_hop", "session_recall_all@5")] == 1.0
    assert found[("recall", "single_hop", "session_ndcg@10")] == 1.0
    assert found[("history_only", "single_hop", "session_ndcg@10")] is None  # no tools, nothing retrieved


def test_tool_latency_is_reported_apart_from_total_latency() -> None:
    """Bug planted: the tool latency rows read latency_s (the whole, 2.0 s) instead of the tool calls' time."""
    scenario = make_scenario()
    calls = [tool_call(["it-pg-version"]), tool_call(["it-pg-version"], call_id="c2")]  # 0.001 s each
    record = make_record(scenario, calls=calls, latency=2.0)
    scores = score_sample(record, scenario)
    assert scores.tool_latency_s == pytest.approx(0.002) and scores.latency_s == pytest.approx(2.002)
    found = {(r["arm"], r["category"], r["metric"]): r for r in aggregate([scores])["metrics"]}
    assert found[("recall", "project_fact", "tool_latency_p50_s")]["value"] == pytest.approx(0.002)
    assert found[("recall", "project_fact", "tool_latency_p95_s")]["value"] == pytest.approx(0.002)
    assert found[("recall", "project_fact", "latency_p50_s")]["value"] == pytest.approx(2.002)
