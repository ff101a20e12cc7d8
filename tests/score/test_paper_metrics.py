"""The papers' metrics against values computed by hand: LoCoMo's stemmed token F1 and BLEU-1, LongMemEval's
session-level Recall@k and NDCG@k and its task-averaged accuracy, and tool latency apart from the whole."""

from __future__ import annotations

import math
import string
from collections import Counter
from pathlib import Path

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
    session_metric_order,
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


def test_multi_hop_f1_is_the_mean_over_the_gold_parts_not_the_answer_parts() -> None:
    """Bug planted: the sum divided by the number of answer parts (a longer answer scored lower, a shorter higher)."""
    assert locomo_f1("hiking, painting", "painting, hiking, swimming", "multi_hop") == pytest.approx(2 / 3)
    assert locomo_f1("hiking, painting, chess, golf", "painting, hiking", "multi_hop") == pytest.approx(1.0)


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


def _sessions_scenario(roles: tuple[str, ...] = ("user",) * 4) -> Scenario:
    """Sessions s1-s4, one turn each with the role ``roles`` gives; it-b and it-c (citing s2, s3) are relevant."""
    sessions = [{"id": f"s{i}", "started_at": 1000 * i, "turns": [{"role": role, "content": f"turn {i}"}]}
                for i, role in enumerate(roles, start=1)]
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


def test_longmemevals_population_skips_a_question_whose_targets_are_all_assistant_turns() -> None:
    """Bug planted: ``session_retrieval`` counted every evidence question (ours): an assistant-side question
    entered LongMemEval's mean, which its retrieval evaluation skips (470 oracle questions averaged, not 419)."""
    scenario = _sessions_scenario(("user", "assistant", "assistant", "user"))
    record = make_record(scenario, "x", calls=[tool_call(["it-b"])])
    assert evidence_sessions(scenario, user_side=True) == set() and evidence_sessions(scenario) == {"s2", "s3"}
    scores = score_sample(record, scenario)
    assert scores.session_retrieval is None
    assert scores.ours_session_retrieval == pytest.approx({"recall_any@5": 1.0, "recall_all@5": 0.0, "ndcg@5": 0.5,
                                                          "recall_any@10": 1.0, "recall_all@10": 0.0, "ndcg@10": 0.5})


def test_longmemeval_counts_only_sessions_with_a_user_side_target_as_targets() -> None:
    """s3's target turn is the assistant's: LongMemEval renames it ``noans``, so retrieving s2 alone is recall_all 1
    on its population and 0 on ours (s3 missing)."""
    scenario = _sessions_scenario(("user", "user", "assistant", "user"))
    scores = score_sample(make_record(scenario, "x", calls=[tool_call(["it-b"])]), scenario)
    assert evidence_sessions(scenario, user_side=True) == {"s2"}
    assert scores.session_retrieval["recall_all@5"] == 1.0 and scores.session_retrieval["ndcg@5"] == 1.0
    assert scores.ours_session_retrieval["recall_all@5"] == 0.0 and scores.ours_session_retrieval["ndcg@5"] == 0.5


def test_each_population_is_averaged_under_its_own_name() -> None:
    """Bug planted: the ``ours_session_*`` rows fed from LongMemEval's figures (or the reverse): the means and n of
    the two populations came out equal. Two questions: one user-side (recall_all 1), one assistant-side (0)."""
    user, assistant = _sessions_scenario(), _sessions_scenario(("user", "assistant", "assistant", "user"))
    assistant = assistant.model_copy(update={"id": "lme-2"})
    scored = [score_sample(make_record(s, "x", calls=[tool_call(["it-c"])]), s) for s in (user, assistant)]
    rows = {r["metric"]: r for r in aggregate(scored)["metrics"] if r["category"] == "all"}
    assert (rows["session_recall_all@5"]["value"], rows["session_recall_all@5"]["n"]) == (1.0, 1)
    assert (rows["ours_session_recall_all@5"]["value"], rows["ours_session_recall_all@5"]["n"]) == (1.0, 2)
    # it-c cites s2 then s3: ranked [s2, s3]; LongMemEval's targets {} for lme-2, ours {s2, s3} -> ndcg 1 for both.
    scored = [score_sample(make_record(s, "x", calls=[tool_call(["it-b"])]), s) for s in (user, assistant)]
    rows = {r["metric"]: r for r in aggregate(scored)["metrics"] if r["category"] == "all"}
    assert (rows["session_recall_all@5"]["value"], rows["session_recall_all@5"]["n"]) == (0.0, 1)
    assert (rows["ours_session_ndcg@5"]["value"], rows["ours_session_ndcg@5"]["n"]) == (0.5, 2)


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


# --- the papers' metrics on the published golds, question by question -------------------------------------------
# The reference below is LoCoMo's task_eval/evaluation.py (normalize_answer, f1_score, f1 and the category rules of
# eval_question_answering) rewritten from its text, and BLEU-1 as its formula (clipped unigram precision times the
# brevity penalty, 0 without a shared unigram) over NLTK's Treebank tokens, as mem0 scores LoCoMo. None of it calls
# recall-eval's code, so a drift of ours from the published procedure shows as a difference.


def _published_normalize(text: str) -> str:
    import regex

    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return " ".join(regex.sub(r"\b(a|an|the|and)\b", " ", text).split())


def _published_f1_score(prediction: str, gold: str) -> float:
    from nltk.stem import PorterStemmer

    stem = PorterStemmer().stem
    predicted = [stem(w) for w in _published_normalize(prediction).split()]
    wanted = [stem(w) for w in _published_normalize(gold).split()]
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def _published_question_f1(output: str, answer: object, category: int) -> float:
    gold = str(answer)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return _published_f1_score(output, gold)
    outputs, golds = [p.strip() for p in output.split(",")], [g.strip() for g in gold.split(",")]
    return sum(max(_published_f1_score(o, g) for o in outputs) for g in golds) / len(golds)


def _published_bleu1(output: str, gold: str) -> float:
    from nltk.tokenize import NLTKWordTokenizer

    hypothesis = NLTKWordTokenizer().tokenize(output.lower())
    reference = NLTKWordTokenizer().tokenize(gold.lower())
    clipped = sum((Counter(hypothesis) & Counter(reference)).values())
    if not hypothesis or clipped == 0:
        return 0.0
    brevity = 1.0 if len(hypothesis) > len(reference) else math.exp(1 - len(reference) / len(hypothesis))
    return brevity * clipped / len(hypothesis)


#: (question, published gold, LoCoMo category, the answer scored): golds the importer repairs for its own checks
#: (a trailing full stop, a number glued to a word, an int) and answers with Unicode punctuation LoCoMo keeps.
PUBLISHED = [
    ("What job is Joanna beginning?", "filmmaker.", 3, "Joanna wants to be a screenwriter who directs her films one day, she says."),
    ("When was Deborah's parents' wedding?", "in 1993", 2, "Deborah’s parents married in 1993 — a spring wedding."),
    ("When did Ana go to Sweden?", "The week before 9April, 2023", 2, "The week before 9 April, 2023."),
    ("How many cups did the team win?", 2, 4, "They won 2 cups."),
    ("Which countries did Ben hike in?", "Sweden, Canada.", 1, "Canada, Sweden, and Norway."),
    ("Would Ana like a job abroad?", "Likely yes; she loved Sweden.", 3, "Yes — she loved living in Sweden."),
]


def test_token_f1_keeps_unicode_punctuation_as_locomo_does() -> None:
    """Bug planted: Unicode punctuation dropped too (our own ``f1_tokens``): 4/9 instead of LoCoMo's 0.4 here.

    By hand: answer tokens deborah’s parents married in 1993 — spring wedding (8; ``a`` removed), gold in 1993
    (2): 2 shared, P 2/8, R 1, F1 0.4. Without ``—`` and ``’`` the answer has 7 tokens: F1 4/9.
    """
    assert locomo_f1(PUBLISHED[1][3], "in 1993", "temporal") == pytest.approx(0.4)
    assert locomo_f1(PUBLISHED[1][3], "in 1993", "temporal") == pytest.approx(_published_question_f1(PUBLISHED[1][3], "in 1993", 2))


def test_bleu1_scores_the_published_trailing_full_stop() -> None:
    """Against ``filmmaker.`` the answer's own final ``.`` is the one shared unigram: 1 of its 16 tokens, 0.0625
    (joanna wants to be a screenwriter who directs her films one day , she says .); the repaired gold scores 0."""
    assert bleu1(PUBLISHED[0][3], "filmmaker.") == pytest.approx(1 / 16)
    assert bleu1(PUBLISHED[0][3], "filmmaker") == 0.0


def test_the_papers_metrics_score_each_imported_question_on_its_published_gold(tmp_path: Path) -> None:
    """Bug planted: the importer's ``f1_reference`` the repaired gold (``filmmaker``, ``9 April``): BLEU-1 and F1
    moved off the published procedure's values question by question. Each probe is imported, loaded, scored by
    ``score_sample`` and set against the published procedure on the published gold."""
    from harness.importers import run_import
    from harness.scenarios import load_suite
    from tests.importers.importer_fixtures import locomo_sample, write_source

    qa = [{"question": q, "answer": gold, "evidence": ["D1:1"], "category": c} for q, gold, c, _ in PUBLISHED]
    texts = ("I love Sweden and Canada.", "We won 2 cups.", "Joanna writes movie scripts.")
    run_import("locomo", write_source(tmp_path, "locomo10.json", [locomo_sample(qa, texts=texts)]), tmp_path / "suite",
               echo=lambda _line: None)
    scenarios = {s.id: s for s in load_suite([tmp_path / "suite"]).scenarios}
    assert len(scenarios) == len(PUBLISHED)
    for n, (_question, gold, category, answer) in enumerate(PUBLISHED, start=1):
        scenario = scenarios[f"conv-9/q{n:03d}"]
        assert scenario.expect.f1_reference == str(gold)
        scores = score_sample(make_record(scenario, answer), scenario)
        assert scores.token_f1 == pytest.approx(_published_question_f1(answer, gold, category)), (n, gold)
        assert scores.bleu1 == pytest.approx(_published_bleu1(answer, str(gold))), (n, gold)


def test_a_named_speakers_turn_is_a_persons_side_whatever_its_role() -> None:
    """LoCoMo's speaker_b plays the assistant role but is a person: LongMemEval's rule (skip the assistant's own
    words) must not drop LoCoMo's questions about speaker_b. Bug planted: the rule read the role alone (713 of
    LoCoMo's 1,312 evidence questions counted on the real file, not all of them)."""
    scenario = _sessions_scenario(("user", "assistant", "assistant", "user"))
    named = [s.model_copy(update={"turns": [t.model_copy(update={"speaker": "Melanie"}) for t in s.turns]})
             for s in scenario.sessions]
    scenario = scenario.model_copy(update={"sessions": named})
    assert evidence_sessions(scenario, user_side=True) == {"s2", "s3"}
    scores = score_sample(make_record(scenario, "x", calls=[tool_call(["it-c"])]), scenario)
    assert scores.session_retrieval == scores.ours_session_retrieval and scores.session_retrieval["recall_all@5"] == 1.0


def test_multi_hop_gold_parts_are_split_on_commas_only_so_a_part_may_hold_several_words() -> None:
    """Bug planted: the gold split on whitespace, so "New York" became two parts each half answered."""
    assert locomo_f1("New York, Paris", "New York, Paris", "multi_hop") == 1.0
    assert locomo_f1("Paris", "New York, Paris", "multi_hop") == pytest.approx(0.5)


def test_session_ndcg_without_any_evidence_session_is_zero_not_a_division_by_zero() -> None:
    assert ranked_session_metrics(["s1", "s2"], set(), ks=(5,)) == {
        "recall_any@5": 0.0, "recall_all@5": 1.0, "ndcg@5": 0.0}


def test_an_id_the_scenario_does_not_hold_adds_no_session_to_the_ranking() -> None:
    """A product's own id, credited because the scenario cannot check it, cites no session of ours."""
    scenario = _sessions_scenario()
    record = make_record(scenario, "x", calls=[tool_call(["mem0-7f3a", "it-c"])])
    assert ranked_sessions(record, scenario) == ["s2", "s3"]


def test_task_averaged_accuracy_of_no_category_is_none() -> None:
    assert task_averaged({}) is None


def test_session_rows_are_ordered_longmemevals_first_then_by_k_then_any_all_ndcg() -> None:
    """Bug planted: k compared as text, so @10 rows came before @5."""
    expected = [f"{prefix}session_{figure}@{k}" for prefix in ("", "ours_") for k in (5, 10)
                for figure in ("recall_any", "recall_all", "ndcg")]
    shuffled = expected[7:] + expected[:7][::-1]
    assert sorted(shuffled, key=session_metric_order) == expected
    assert session_metric_order("session_recall_any@10") == (False, 10, "0")
    assert session_metric_order("ours_session_mrr@5") == (True, 5, "mrr")
    assert session_metric_order("session_recall_any") == (False, 0, "0")
