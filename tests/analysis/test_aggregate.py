"""Aggregate tables from scored samples."""

from __future__ import annotations

import pytest

from harness.analysis import decision, stats
from harness.analysis.aggregate import AggregateConfig, aggregate
from harness.analysis.verdict import VerdictConfig, decide_model
from harness.score.scoring import score_sample
from tests.analysis.sample_scores import sample
from tests.score.scoring_factories import MODEL, make_record, make_scenario, paired_run, tool_call


def _scored(records, scenarios):
    return [score_sample(r, scenarios[r.scenario_id]) for r in records]


def _metric(tables, arm, metric, category="all"):
    return next(m for m in tables["metrics"] if m["arm"] == arm and m["metric"] == metric and m["category"] == category)


def test_metrics_have_rows_per_arm_and_category_with_intervals():
    records, scenarios = paired_run(8, recall_right=6, history_right=2, epochs=2)
    tables = aggregate(_scored(records, scenarios))
    acc = _metric(tables, "recall", "continuity_accuracy")
    assert acc["value"] == 0.75 and acc["ci_low"] <= 0.75 <= acc["ci_high"] and acc["n"] == 16
    assert _metric(tables, "history_only", "continuity_accuracy", "project_fact")["value"] == 0.25


def test_paired_mcnemar_and_flips_count_fixed_and_broken():
    records, scenarios = paired_run(8, recall_right=6, history_right=2, epochs=2)
    tables = aggregate(_scored(records, scenarios))
    paired = next(p for p in tables["paired"] if p["metric"] == "continuity_accuracy")
    # 4 scenarios fixed, none broken: exact p 0.125, so the interval inverted from that test holds 0
    assert paired["diff"] == 0.5 and paired["ci_low"] <= 0 < paired["ci_high"] and paired["n_scenarios"] == 8
    assert (paired["up"], paired["down"], paired["p_value"], paired["n_units"]) == (4, 0, 0.125, 8)
    mc = tables["mcnemar"][0]
    assert (mc["fixed"], mc["broken"], mc["both_correct"], mc["both_wrong"], mc["tied"]) == (4, 0, 2, 2, 0)
    assert mc["n_pairs"] == 8 and mc["p_value"] == 0.125  # 4 discordant scenarios, not 8 (scenario, epoch) pairs
    assert {f["scenario_id"] for f in tables["flips"] if f["kind"] == "fixed"} == {"fact-02", "fact-03", "fact-04", "fact-05"}


def test_error_samples_count_in_error_rate_not_accuracy():
    sc = make_scenario()
    records = [make_record(sc, epoch=0), make_record(sc, epoch=1, error=True)]
    tables = aggregate([score_sample(r, sc) for r in records])
    assert _metric(tables, "recall", "continuity_accuracy")["value"] == 1.0
    assert _metric(tables, "recall", "error_rate")["value"] == 0.5


def test_always_abstaining_has_no_coverage_and_zero_accuracy():
    answerable = make_scenario("fact-a")
    unanswerable = make_scenario("abst-a", abstain=True, category="abstention")
    scored = [score_sample(make_record(s, "I don't know.", arm="recall"), s) for s in (answerable, unanswerable)]
    tables = aggregate(scored)
    assert _metric(tables, "recall", "coverage")["value"] == 0.0
    assert _metric(tables, "recall", "over_abstention_rate")["value"] == 1.0
    assert _metric(tables, "recall", "abstention_rate_unanswerable")["value"] == 1.0
    assert _metric(tables, "recall", "selective_accuracy")["value"] is None
    assert _metric(tables, "recall", "continuity_accuracy")["value"] == 0.5


def test_added_latency_is_paired_per_scenario_and_epoch():
    records, scenarios = paired_run(6, epochs=2)
    tables = aggregate(_scored(records, scenarios))
    added = tables["added_latency"][0]
    assert 1.0 <= added["p50_s"] <= 1.06 and added["ci_low_p50"] <= added["p50_s"] <= added["ci_high_p50"]


def test_tokens_per_correct_divides_tokens_by_correct_answers():
    records, scenarios = paired_run(4, recall_right=2, history_right=0)
    tables = aggregate(_scored(records, scenarios))
    assert _metric(tables, "recall", "tokens_per_correct")["value"] == 120 * 4 / 2


def test_min_detectable_effect_reported_per_comparison():
    records, scenarios = paired_run(10, recall_right=7, history_right=3)
    mde = aggregate(_scored(records, scenarios))["min_detectable_effect"][0]
    assert mde["n_scenarios"] == 10 and 0 < mde["mde"] <= 1


def _arms(per_scenario: dict[int, tuple[list[int], list[int]]], **kwargs) -> list:
    """Scores from {scenario: ([history_only correctness per epoch], [recall correctness per epoch])}."""
    return [sample(k, arm, epoch, bool(c), **kwargs)
            for k, sides in per_scenario.items() for arm, side in zip(("history_only", "recall"), sides)
            for epoch, c in enumerate(side)]


def test_mcnemar_with_one_epoch_is_the_exact_mcnemar_test_on_scenarios():
    run = {0: ([0], [1]), **{k: ([1], [0]) for k in range(1, 10)}, 10: ([1], [1]), 11: ([0], [0])}
    mc = aggregate(_arms(run))["mcnemar"][0]
    assert (mc["fixed"], mc["broken"], mc["both_correct"], mc["both_wrong"], mc["tied"], mc["n_pairs"]) == \
        (1, 9, 1, 1, 0, 12)
    assert mc["p_value"] == 0.021484375 and mc["test"] == "exact McNemar (1 epoch, scenario pairs)"


@pytest.mark.parametrize("epochs", [1, 3, 10])
def test_mcnemar_p_value_does_not_shrink_when_a_deterministic_run_is_repeated(epochs):
    # The issue: the same starter results gave p = 0.48, 0.13 and 0.004 with 1, 3 and 10 epochs.
    records, scenarios = paired_run(8, recall_right=6, history_right=2, epochs=epochs)
    tables = aggregate(_scored(records, scenarios))
    mc, mde = tables["mcnemar"][0], tables["min_detectable_effect"][0]
    assert (mc["p_value"], mc["n_pairs"], mc["fixed"]) == (0.125, 8, 4)
    assert (mde["n_scenarios"], mde["discordance"]) == (8, 0.5)
    assert len(tables["flips"]) == 4


def test_mcnemar_counts_scenarios_by_the_sign_of_their_mean_difference():
    run = {0: ([1, 1], [1, 1]),   # both correct
           1: ([0, 0], [0, 0]),   # both wrong
           2: ([0, 1], [1, 1]),   # fixed, partly: 0.5 -> 1
           3: ([1, 1], [0, 1]),   # broken, partly
           4: ([0, 1], [1, 0]),   # tied at 0.5
           5: ([0, 0, 0], [1, 1, 1])}
    tables = aggregate(_arms(run))
    mc = tables["mcnemar"][0]
    assert (mc["both_correct"], mc["both_wrong"], mc["fixed"], mc["broken"], mc["tied"], mc["n_pairs"]) == \
        (1, 1, 2, 1, 1, 6)
    assert mc["test"] == "exact sign-flip permutation test on per-scenario mean differences"
    # differences 0, 0, +1/2, -1/2, 0, +1: |sum| >= 1 in 6 of the 8 sign assignments of the non-zero ones
    assert mc["p_value"] == 0.75
    assert {(f["scenario_id"], f["kind"]) for f in tables["flips"]} == {("sc-002", "fixed"), ("sc-003", "broken"),
                                                                       ("sc-005", "fixed")}
    mde = tables["min_detectable_effect"][0]
    # discordance is the mean squared per-scenario difference: (1/4 + 1/4 + 1) / 6
    assert mde["n_scenarios"] == 6 and mde["discordance"] == round(1.5 / 6, 6)
    assert mde["mde"] == round(stats.min_detectable_effect(6, 1.5 / 6), 6)


def test_paired_rows_per_category_come_after_the_all_rows():
    run = {k: ([0], [1 if k < 4 else 0]) for k in range(8)}
    scores = [s.model_copy(update={"category": "preference" if s.scenario_id < "sc-004" else "project_fact"})
              for s in _arms(run)]
    paired = aggregate(scores)["paired"]
    accuracy = [p for p in paired if p["metric"] == "continuity_accuracy"]
    assert [(p["category"], p["diff"], p["n_scenarios"]) for p in accuracy] == \
        [("all", 0.5, 8), ("preference", 1.0, 4), ("project_fact", 0.0, 4)]
    first_other = next(i for i, p in enumerate(paired) if p["category"] != "all")
    assert all(p["category"] == "all" for p in paired[:first_other])
    assert all(p["category"] != "all" for p in paired[first_other:])
    assert set(paired[0]) == {"model", "arm_a", "arm_b", "category", "metric", "diff", "ci_low", "ci_high",
                              "n_scenarios", "n_units", "unit", "up", "down", "p_value", "test", "mde", "variance",
                              "alpha"}
    verdict = decide_model({"metrics": aggregate(scores)["metrics"], "paired": paired}, "m", VerdictConfig())
    assert verdict.checks[0].value == 0.5  # the verdict reads the "all" row


def test_tool_use_rate_counts_ok_samples_offered_tools():
    scores = [sample(0, "recall", 0, True, tool_calls=2), sample(0, "recall", 1, True, tool_calls=0),
              sample(1, "recall", 0, True, tool_calls=1), sample(1, "recall", 1, True, tool_calls=3, ok=False),
              sample(0, "history_only", 0, True)]
    metrics = aggregate(scores)["metrics"]
    rate = _metric({"metrics": metrics}, "recall", "tool_use_rate")
    assert (rate["value"], rate["n"]) == (round(2 / 3, 6), 3) and rate["ci_low"] <= rate["value"] <= rate["ci_high"]
    none = _metric({"metrics": metrics}, "history_only", "tool_use_rate")
    assert (none["value"], none["ci_low"], none["n"]) == (None, None, 0)


def test_cached_samples_are_counted_and_left_out_of_every_latency_figure():
    scores = []
    for k in range(4):
        for epoch in range(3):
            cached = epoch == 2
            scores.append(sample(k, "history_only", epoch, True, latency=100.0 if cached else 1.0, cached=cached))
            scores.append(sample(k, "recall", epoch, True, latency=0.0 if cached else 3.0, cached=cached))
    tables = aggregate(scores)
    cached = _metric(tables, "recall", "cached_samples")
    assert (cached["value"], cached["ci_low"], cached["n"]) == (4, None, 12)
    p95 = _metric(tables, "history_only", "latency_p95_s")
    assert (p95["value"], p95["ci_high"], p95["n"]) == (1.0, 1.0, 8)
    block = next(b for b in tables["latency"] if b["arm"] == "history_only")
    assert block["p95_s"] == 1.0 and block["values_s"] == [1.0] * 8
    added = tables["added_latency"][0]
    assert (added["p50_s"], added["p95_s"], added["ci_high_p50"]) == (2.0, 2.0, 2.0)
    latency_diff = next(p for p in tables["paired"] if p["metric"] == "latency_s")
    # four scenarios: no sign-flip test can reject (p >= 2/16), so an unbounded metric's interval stays open
    assert (latency_diff["diff"], latency_diff["ci_low"], latency_diff["ci_high"]) == (2.0, None, None)


def test_every_interval_resamples_scenarios_not_samples():
    """Few scenarios with many identical epochs are as uncertain as one epoch each; resampling samples would not be."""
    one = [sample(k, arm, 0, bool((k + (arm == "recall")) % 2), latency=1.0 + k + 2 * (arm == "recall"),
                  tokens=100 * (k + 1)) for k in range(4) for arm in ("history_only", "recall")]
    many = [s.model_copy(update={"epoch": e, "sample_id": f"{s.sample_id}/{e}"}) for s in one for e in range(40)]
    config = AggregateConfig(resamples=500)
    a, b = aggregate(one, config=config), aggregate(many, config=config)
    intervals = {
        "metrics": lambda r: (r["metric"], r["arm"], r["category"], r["value"], r["ci_low"], r["ci_high"]),
        "paired": lambda r: (r["metric"], r["category"], r["diff"], r["ci_low"], r["ci_high"], r["n_scenarios"]),
        "added_latency": lambda r: (r["p50_s"], r["ci_low_p50"], r["ci_high_p50"]),
    }
    for block, key in intervals.items():
        assert [key(r) for r in b[block]] == [key(r) for r in a[block]], block
    accuracy = _metric(b, "recall", "continuity_accuracy")
    assert accuracy["ci_high"] - accuracy["ci_low"] >= 0.5


# --- Aggregate rates pinned through ``score_sample`` + ``aggregate``; each test names the bug it was watched failing against.
#
# Every test here was watched failing against the bug its docstring names, then
# passing once the bug was removed.


def _tables(records, scenarios):
    return aggregate([score_sample(r, scenarios[r.scenario_id]) for r in records])


def _metric_row(tables, metric: str, arm: str = "recall", category: str = "all") -> dict:
    return next(r for r in tables["metrics"]
                if (r["model"], r["arm"], r["category"], r["metric"]) == (MODEL, arm, category, metric))


def _paired(tables, metric: str) -> dict:
    return next(r for r in tables["paired"] if r["metric"] == metric)


def test_tool_leakage_count_sums_every_leak_of_every_sample() -> None:
    """Bug: the tool-leak count counted samples with a leak (or took a mean) instead of summing leaks."""
    a, b = make_scenario("fact-a"), make_scenario("fact-b")
    records = [make_record(a, calls=[tool_call(["it-other-ws"], "Falcon-7 launch code")]),  # two leaks in one sample
               make_record(b, calls=[tool_call(["it-other-ws"])]),
               make_record(make_scenario("fact-c"))]
    row = _metric_row(_tables(records, {s.id: s for s in (a, b, make_scenario("fact-c"))}), "tool_leakage_count")
    assert row["value"] == 3 and row["n"] == 3


def test_retained_after_forget_count_sums_distinct_forgotten_facts_apart_from_tool_leaks() -> None:
    """Bug: a retained archived item counted as a tool leak, or counted once per call that returned it."""
    a, b = make_scenario("fact-a"), make_scenario("fact-b")
    records = [make_record(a, calls=[tool_call(["it-pg-old"]), tool_call(["it-pg-old", "it-other-ws"], call_id="c2")]),
               make_record(b, calls=[tool_call(["it-pg-old"])])]
    tables = _tables(records, {s.id: s for s in (a, b)})
    assert _metric_row(tables, "retained_after_forget_count")["value"] == 2
    assert _metric_row(tables, "tool_leakage_count")["value"] == 1


def test_forgetting_rows_only_when_some_scenario_asks_to_forget() -> None:
    a = make_scenario("fact-a")
    tables = _tables([make_record(a, calls=[tool_call(["it-pg-version"])])], {a.id: a})
    assert not [r for r in tables["metrics"] if r["metric"] in ("retained_after_forget_count", "answer_forgotten_rate")]


def test_answer_leakage_rate_is_leaked_answers_over_scored_samples() -> None:
    """Bug: the answer-leakage rate counted leaked canaries (two in one answer) instead of answers with a leak."""
    canaries = [{"text": "Falcon-7 launch code", "kind": "leakage"}, {"text": "Osprey vault key", "kind": "leakage"}]
    scs = {f"fact-{i}": make_scenario(f"fact-{i}", expect={"canaries": canaries}) for i in range(4)}
    records = [make_record(scs["fact-0"], "Postgres 15. Falcon-7 launch code and the Osprey vault key."),
               make_record(scs["fact-1"]), make_record(scs["fact-2"]), make_record(scs["fact-3"], error=True)]
    tables = _tables(records, scs)
    row = _metric_row(tables, "answer_leakage_rate")
    assert (row["value"], row["n"]) == (round(1 / 3, 6), 3)
    assert _metric_row(tables, "error_rate")["value"] == 0.25


def test_unsupported_claim_rate_counts_samples_with_any_claim() -> None:
    """Bug: the rate summed claims (two in one answer counted twice) or ignored error samples' absence."""
    scs = {f"fact-{i}": make_scenario(f"fact-{i}") for i in range(4)}
    records = [make_record(scs["fact-0"], "Postgres 15, or Postgres 13, or Postgres 16."),
               make_record(scs["fact-1"]), make_record(scs["fact-2"]), make_record(scs["fact-3"])]
    assert _metric_row(_tables(records, scs), "unsupported_claim_rate")["value"] == 0.25


def test_abstention_rates_are_split_by_whether_abstaining_was_expected() -> None:
    """Bug: over-abstention computed over every sample (unanswerable ones included) or the two filters swapped."""
    answerable = {f"fact-{i}": make_scenario(f"fact-{i}") for i in range(4)}
    unanswerable = {f"abst-{i}": make_scenario(f"abst-{i}", abstain=True, category="abstention") for i in range(2)}
    records = [make_record(answerable["fact-0"], "I don't know."),
               *(make_record(answerable[f"fact-{i}"]) for i in (1, 2, 3)),
               make_record(unanswerable["abst-0"], "I don't know."),
               make_record(unanswerable["abst-1"], "It is MySQL 8.")]
    tables = _tables(records, {**answerable, **unanswerable})
    assert _metric_row(tables, "over_abstention_rate")["value"] == 0.25
    assert _metric_row(tables, "abstention_rate_unanswerable")["value"] == 0.5
    assert _metric_row(tables, "coverage")["value"] == round(4 / 6, 6)
    assert _metric_row(tables, "selective_accuracy")["value"] == 0.75  # 3 of the 4 answers are right


def test_paired_difference_is_treatment_minus_baseline_per_scenario() -> None:
    """Bug: the paired difference taken baseline minus treatment, or over unpaired samples."""
    scs = {f"fact-{i}": make_scenario(f"fact-{i}") for i in range(4)}
    records = [make_record(s, arm="recall") for s in scs.values()]
    records += [make_record(s, "I don't know." if i < 3 else "Billing runs Postgres 15.", arm="history_only")
                for i, s in enumerate(scs.values())]
    records.append(make_record(make_scenario("fact-9"), "Billing runs MySQL.", arm="recall"))  # unpaired
    scs["fact-9"] = make_scenario("fact-9")
    row = _paired(_tables(records, scs), "continuity_accuracy")
    assert (row["arm_a"], row["arm_b"], row["diff"], row["n_scenarios"]) == ("history_only", "recall", 0.75, 4)


def _runs(per_scenario: dict[int, tuple[int, int]], **kwargs) -> list:
    """Scores from {scenario: (history_only correct, recall correct)}, one epoch each (tests.analysis.sample_scores)."""
    return [sample(k, arm, 0, bool(c), **kwargs)
            for k, sides in per_scenario.items() for arm, c in zip(("history_only", "recall"), sides)]


def test_paired_over_abstention_compares_the_answerable_scenarios_only() -> None:
    """Bug: the paired over-abstention row filtered the unanswerable scenarios (the ``answerable`` filter swapped)."""
    answerable = [sample(k, arm, 0, True).model_copy(update={"abstained": arm == "recall" and k < 2})
                  for k in range(4) for arm in ("history_only", "recall")]  # recall abstains on 2 of 4
    unanswerable = [sample(k, arm, 0, True, abstain=True, category="abstention")
                    for k in range(4, 7) for arm in ("history_only", "recall")]  # both arms abstain on all 3
    rows = {r["metric"]: r for r in aggregate(answerable + unanswerable)["paired"] if r["category"] == "all"}
    over = rows["over_abstention_rate"]
    assert (over["diff"], over["n_scenarios"]) == (0.5, 4)
    assert (rows["abstention_rate_unanswerable"]["diff"], rows["abstention_rate_unanswerable"]["n_scenarios"]) == \
        (0.0, 3)


def test_paired_intervals_are_inverted_at_the_configured_alpha() -> None:
    """Bug: the paired difference's interval drawn at the default level, ignoring the config's alpha."""
    run = {k: (int(k % 4 == 0), int(k % 5 != 0)) for k in range(12)}
    history = [float(h) for h, _ in run.values()]
    recall = [float(r) for _, r in run.values()]
    row = next(r for r in aggregate(_runs(run), config=AggregateConfig(alpha=0.2))["paired"]
               if (r["metric"], r["category"]) == ("continuity_accuracy", "all"))
    expected = decision.paired_evidence(history, recall, alpha=0.2)
    assert (row["ci_low"], row["ci_high"], row["alpha"]) == (round(expected.ci_low, 6), round(expected.ci_high, 6), 0.2)
    default = decision.paired_evidence(history, recall)
    assert default.ci_low < row["ci_low"] and row["ci_high"] < default.ci_high


def test_paired_all_rows_come_first_even_before_a_category_that_sorts_before_all() -> None:
    """Bug: paired rows sorted by category name alone, which puts ``abstention`` before the ``all`` rows."""
    scores = [s.model_copy(update={"category": "abstention" if s.scenario_id < "sc-002" else "project_fact"})
              for s in _runs({k: (0, 1) for k in range(4)})]
    categories = [r["category"] for r in aggregate(scores)["paired"]]
    first_abstention = categories.index("abstention")
    assert set(categories[:first_abstention]) == {"all"}
    assert categories == sorted(categories, key=lambda c: ["all", "abstention", "project_fact"].index(c))


def test_arms_that_share_no_scenario_get_the_no_pairs_test_row() -> None:
    """Two arms that ran disjoint scenarios: one McNemar row with no pairs, p = 1 and the test named as none.

    Bugs planted: the p-value None or 2.0 and the test name lost or respelled (mutants of the no-pairs branch).
    """
    scores = [sample(i, "history_only", 0, True) for i in range(3)] + [sample(i, "recall", 0, True) for i in range(3, 6)]
    (row,) = aggregate(scores)["mcnemar"]
    assert (row["n_pairs"], row["p_value"], row["test"]) == (0, 1.0, "none (no scenario ran in both arms)")


def test_one_arm_with_several_epochs_is_tested_with_the_sign_flip_test_not_mcnemar() -> None:
    """The exact McNemar test needs one sample per scenario in BOTH arms; one epoch in the baseline and two in the
    treatment is a clustered design. Bug planted: ``or`` for ``and`` (McNemar when only one arm has single epochs)."""
    scores = [sample(i, "history_only", 0, i % 3 == 0) for i in range(8)]
    scores += [sample(i, "recall", e, i % 2 == 0 or e == 1) for i in range(8) for e in (0, 1)]
    (row,) = aggregate(scores)["mcnemar"]
    assert not row["test"].startswith("exact McNemar") and row["n_pairs"] == 8


def test_the_configured_seed_reaches_the_sign_flip_test(monkeypatch) -> None:
    """Bugs planted: the sign-flip test called with ``seed=None`` (an unseeded p-value) or the default seed."""
    seen = []
    real = stats.sign_flip_test
    monkeypatch.setattr(stats, "sign_flip_test", lambda diffs, **kw: seen.append(kw) or real(diffs, **kw))
    scores = [sample(i, arm, e, (i + e) % 2 == 0 or arm == "recall") for i in range(6) for arm in ("history_only", "recall")
              for e in (0, 1)]
    aggregate(scores, config=AggregateConfig(seed=stats.DEFAULT_SEED + 17))
    assert seen and all(kw == {"seed": stats.DEFAULT_SEED + 17} for kw in seen)


def test_a_flip_names_its_scenario_title_category_and_direction() -> None:
    """Each flip carries the scenario's title (its id when no title is known), its category and fixed/broken.

    Bugs planted: the ``title`` or ``category`` key misspelled, the category replaced by "None", the title
    lookup without the id fallback.
    """
    scores = [sample(0, "history_only", 0, False, category="decision"), sample(0, "recall", 0, True, category="decision"),
              sample(1, "history_only", 0, True, category="preference"), sample(1, "recall", 0, False, category="preference"),
              sample(2, "history_only", 0, True), sample(2, "recall", 0, True)]
    flips = aggregate(scores, titles={"sc-000": "Which database"})["flips"]
    assert [(f["scenario_id"], f["title"], f["category"], f["kind"], f["a_correct_rate"], f["b_correct_rate"])
            for f in flips] == [("sc-001", "sc-001", "preference", "broken", 1.0, 0.0),
                                ("sc-000", "Which database", "decision", "fixed", 0.0, 1.0)]


def test_flips_list_the_largest_change_first_within_each_kind_then_by_id() -> None:
    """Bugs planted: the smallest change first (``+abs``), and the change measured as ``b + a``."""
    def epochs(scenario: int, arm: str, hits: tuple[bool, bool]) -> list:
        return [sample(scenario, arm, e, hit) for e, hit in enumerate(hits)]

    scores = (epochs(0, "history_only", (True, False)) + epochs(0, "recall", (True, True))      # 0.5 -> 1.0
              + epochs(1, "history_only", (False, False)) + epochs(1, "recall", (True, False))  # 0.0 -> 0.5
              + epochs(2, "history_only", (False, False)) + epochs(2, "recall", (True, True)))  # 0.0 -> 1.0
    assert [f["scenario_id"] for f in aggregate(scores)["flips"]] == ["sc-002", "sc-000", "sc-001"]


def test_every_interval_uses_the_configured_resamples_and_seed(monkeypatch) -> None:
    """Bug planted: the added-latency p50 interval drawn with the default resamples and seed."""
    calls = []
    for name in ("cluster_quantile_ci", "cluster_quantile_cis", "cluster_ratio_ci"):
        real = getattr(stats, name)
        monkeypatch.setattr(stats, name, lambda *a, _real=real, _name=name, **kw: calls.append((_name, kw)) or _real(*a, **kw))
    scores = [sample(i, arm, 0, (i + len(arm)) % 3 == 0, latency=1.0 + i / 10 + (arm == "recall"))
              for i in range(6) for arm in ("history_only", "recall")]
    tables = aggregate(scores, config=AggregateConfig(resamples=333, seed=stats.DEFAULT_SEED + 5))
    assert tables["added_latency"] and {name for name, _ in calls} == {
        "cluster_quantile_ci", "cluster_quantile_cis", "cluster_ratio_ci"}
    assert all(kw.get("resamples") == 333 and kw.get("seed") == stats.DEFAULT_SEED + 5 for _, kw in calls), calls


def test_added_latency_reports_the_95th_percentile_of_the_paired_differences() -> None:
    """Bug planted: ``quantile(diff, 1.95)`` (the largest difference, not the 95th percentile)."""
    scores = [sample(i, arm, 0, True, latency=1.0 + (i * (arm == "recall")) / 10) for i in range(40)
              for arm in ("history_only", "recall")]
    (row,) = aggregate(scores)["added_latency"]
    diffs = [i / 10 for i in range(40)]
    assert row["p95_s"] == round(stats.quantile(diffs, 0.95), 6) == 3.7 and row["p95_s"] < max(diffs)


def test_each_arms_latency_row_reports_its_95th_percentile_not_its_slowest_sample() -> None:
    """Bug planted: ``quantile(latency, 1.95)`` in the latency table (every arm's slowest sample as its p95)."""
    scores = [sample(i, arm, 0, True, latency=1.0 + i / 10) for i in range(40) for arm in ("history_only", "recall")]
    rows = {row["arm"]: row for row in aggregate(scores)["latency"]}
    latencies = [1.0 + i / 10 for i in range(40)]
    for arm in ("history_only", "recall"):
        assert rows[arm]["p95_s"] == round(stats.quantile(latencies, 0.95), 6) == 4.7
        assert rows[arm]["p95_s"] < max(latencies) and rows[arm]["p50_s"] == 2.9


def test_the_minimum_detectable_effect_uses_the_configured_alpha_and_power_and_zero_discordance_without_pairs() -> None:
    """Bugs planted: the MDE computed at the default alpha or power, and no pairs reported as discordance 1."""
    scores = [sample(i, arm, 0, (i % 3 == 0) != (arm == "recall")) for i in range(30) for arm in ("history_only", "recall")]
    (row,) = aggregate(scores, config=AggregateConfig(alpha=0.01, power=0.9))["min_detectable_effect"]
    expected = stats.min_detectable_effect(row["n_scenarios"], row["discordance"], alpha=0.01, power=0.9)
    assert row["mde"] == round(expected, 6) != round(stats.min_detectable_effect(row["n_scenarios"], row["discordance"]), 6)
    assert round(stats.min_detectable_effect(30, row["discordance"], alpha=0.01), 6) != row["mde"]
    assert round(stats.min_detectable_effect(30, row["discordance"], power=0.9), 6) != row["mde"]
    disjoint = [sample(i, "history_only", 0, True) for i in range(3)] + [sample(i, "recall", 0, True) for i in range(3, 6)]
    (none,) = aggregate(disjoint)["min_detectable_effect"]
    assert (none["n_scenarios"], none["discordance"]) == (0, 0.0)


def test_each_rate_reads_its_own_column() -> None:
    """Adherence, retrieval precision and recall, cost and tool use each come from their own field, with distinct
    values per field so a column read as another, or as missing, shows.

    Bugs planted (mutation survivors of ``_Columns``): adherence, precision, recall or cost read as None.
    """
    from harness.score.models import SampleScores

    def scored(i: int, adherence: bool, precision: float, recall: float, cost: float) -> SampleScores:
        base = sample(i, "recall", 0, True, tool_calls=1)
        return base.model_copy(update={"adherence": adherence, "retrieved_precision": precision,
                                       "retrieved_recall": recall, "cost_usd": cost})

    scores = [scored(0, True, 0.5, 1.0, 0.002), scored(1, False, 0.25, 0.5, 0.004), scored(2, False, 1.0, 0.0, 0.006),
              scored(3, False, 0.75, 0.5, 0.008)]
    tables = aggregate(scores)
    values = {m: _metric_of(tables, m)["value"] for m in ("adherence_rate", "retrieved_precision", "retrieved_recall",
                                                         "cost_usd", "tool_use_rate", "continuity_accuracy")}
    assert values == {"adherence_rate": 0.25, "retrieved_precision": 0.625, "retrieved_recall": 0.5,
                      "cost_usd": 0.005, "tool_use_rate": 1.0, "continuity_accuracy": 1.0}


def _metric_of(tables, metric: str) -> dict:
    return next(r for r in tables["metrics"] if (r["model"], r["arm"], r["category"], r["metric"]) == ("m", "recall", "all", metric))


def test_retrieval_and_write_rates_leave_out_error_samples_and_read_their_own_column() -> None:
    """An error sample keeps the retrieval figures of the tool calls it made before failing; they are not scored.

    Bugs planted: retrieval precision or recall taken over every sample (errors included), and the written-memory
    rate read as missing.
    """
    from harness.score.models import SampleScores

    def scored(i: int, precision: float, recall: float, holds: bool | None, *, ok: bool = True) -> SampleScores:
        return sample(i, "recall", 0, True, ok=ok).model_copy(update={
            "retrieved_precision": precision, "retrieved_recall": recall, "write_holds_answer": holds})

    scores = [scored(0, 1.0, 1.0, True), scored(1, 0.5, 0.0, False), scored(2, 0.0, 0.0, True, ok=False)]
    tables = aggregate(scores)
    assert _metric_of(tables, "retrieved_precision")["value"] == 0.75
    assert _metric_of(tables, "retrieved_recall")["value"] == 0.5
    assert _metric_of(tables, "write_holds_answer_rate")["value"] == 0.5


def test_cost_is_unknown_for_a_group_with_an_unpriced_sample_and_leaves_out_error_samples() -> None:
    """One scored sample without a price makes the group's cost unknown (a full row of None, n 0), never a mean of
    the priced ones; an error sample's spend is not in the per-sample cost of scored samples.

    Bugs planted: ``or`` for ``and`` in the known-cost test, the unknown row with no model, category or metric name,
    or n 1, and the cost mean taken over error samples too.
    """
    priced = [sample(0, "recall", 0, True, tokens=1024), sample(1, "recall", 0, True, tokens=2048),
              sample(2, "recall", 0, True, ok=False, tokens=10240)]
    assert _metric_of(aggregate(priced), "cost_usd")["value"] == 1.5
    unpriced = [*priced[:2], sample(3, "recall", 0, True).model_copy(update={"cost_usd": None})]
    tables = aggregate(unpriced)
    assert _metric_of(tables, "cost_usd") == {"model": "m", "arm": "recall", "category": "all", "metric": "cost_usd",
                                              "value": None, "ci_low": None, "ci_high": None, "n": 0}
    assert _metric_of(tables, "cost_per_correct")["value"] is None


def test_each_arm_has_its_own_error_rate() -> None:
    """Bug planted (a mutation survivor): the error rate taken over every sample of the run instead of the group's."""
    scores = [sample(i, "history_only", 0, True, ok=i != 0) for i in range(4)] + [sample(i, "recall", 0, True) for i in range(4)]
    tables = aggregate(scores)
    rates = {r["arm"]: r["value"] for r in tables["metrics"] if r["metric"] == "error_rate" and r["category"] == "all"}
    assert rates == {"history_only": 0.25, "recall": 0.0}


def test_each_latency_row_names_its_model_and_lists_its_samples_to_the_millisecond() -> None:
    """Bugs planted: the latency row's ``model`` key renamed (``"MODEL"``), and ``values_s`` rounded to 4 places."""
    scores = [sample(i, arm, 0, True, latency=1.23449 + i) for i in range(3) for arm in ("history_only", "recall")]
    rows = aggregate(scores)["latency"]
    assert [(row["model"], row["arm"]) for row in rows] == [("m", "history_only"), ("m", "recall")]
    assert all(set(row) == {"model", "arm", "p50_s", "p95_s", "values_s"} for row in rows)
    assert rows[0]["values_s"] == [1.234, 2.234, 3.234]


def test_a_model_without_the_treatment_arm_does_not_stop_the_comparisons_of_the_next_model() -> None:
    """Bug planted: ``break`` for ``continue`` when a model lacks the treatment arm (every later model lost its comparisons)."""
    first = [sample(i, "history_only", 0, True).model_copy(update={"model": "a-model"}) for i in range(4)]
    second = [sample(i, arm, 0, arm == "recall").model_copy(update={"model": "b-model"})
              for i in range(4) for arm in ("history_only", "recall")]
    tables = aggregate(first + second)
    assert {row["model"] for row in tables["paired"]} == {"b-model"}
    assert {row["model"] for row in tables["mcnemar"]} == {"b-model"}
    assert {row["model"] for row in tables["latency"]} == {"a-model", "b-model"}


def test_the_baseline_arm_is_compared_first_then_every_other_arm_by_name() -> None:
    """Bugs planted: the baselines sorted by name only (``key=None`` or no key), or the baseline arm sorted last."""
    arms = ("oracle", "full_history", "recall", "history_only")
    scores = [sample(i, arm, 0, arm == "recall") for i in range(4) for arm in arms]
    rows = [row for row in aggregate(scores)["paired"]
            if (row["metric"], row["category"]) == ("continuity_accuracy", "all")]
    assert [(row["arm_a"], row["arm_b"]) for row in rows] == [
        ("history_only", "recall"), ("full_history", "recall"), ("oracle", "recall")]


def test_the_mcnemar_block_says_it_pairs_scenarios_where_the_checks_test_conversations() -> None:
    """A conversation suite: 6 conversations of 3 probes, every probe fixed. The `mcnemar` block counts 18 scenarios
    (exact p 2/2^18); the paired row the verdict decides on flips 6 conversations (exact p 2/2^6). Each names its unit,
    so a reader does not take one p for the other."""
    def in_conversation(s):  # sc-007 -> conv-1/sc-007
        sid = f"conv-{int(s.scenario_id[3:]) % 6}/{s.scenario_id}"
        return s.model_copy(update={"scenario_id": sid, "sample_id": f"{sid}|{s.arm}"})

    scores = [in_conversation(s) for s in _arms({k: ([0], [1]) for k in range(18)})]
    tables = aggregate(scores)
    mc = tables["mcnemar"][0]
    paired = next(p for p in tables["paired"] if p["metric"] == "continuity_accuracy" and p["category"] == "all")
    assert (mc["unit"], mc["n_pairs"], mc["fixed"], mc["p_value"]) == ("scenario", 18, 18, 2 / 2**18)
    assert (paired["unit"], paired["n_units"], paired["up"], paired["p_value"]) == ("conversation", 6, 6, 2 / 2**6)
