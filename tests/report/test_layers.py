"""'Which layer has earned its complexity': each line's three outcomes, decided by the documented rule.

The samples are hand-made :class:`SampleScores`, so each test states exactly
what the run measured; arms named ``recall_vector`` and ``recall_hybrid``
stand for the vector arms (built elsewhere) as their records will name them.
"""

from __future__ import annotations

from typing import Any

from harness.report.layers import (
    JUSTIFIED,
    MIN_SCENARIOS,
    NOT_JUSTIFIED,
    NOT_MEASURED,
    layers_block,
    layers_lines,
    layers_section,
)
from harness.score import SampleScores
from tests.score.scoring_factories import MODEL, make_scenario


def scores(sid: str, arm: str, *, correct: bool | None = True, recall: float | None = 1.0, epoch: int = 0,
           abstain: bool = False, retrieved: list[str] | None = None, unsupported: bool = False,
           category: str = "project_fact", written: bool | None = True, returned: bool | None = True) -> SampleScores:
    """One ok sample's scores, with only what the layer lines read."""
    claims = [{"kind": "invented", "text": "Postgres 16", "source": "canary"}] if unsupported else []
    return SampleScores.model_validate({
        "sample_id": f"{sid}|{arm}|{MODEL}|{epoch}", "scenario_id": sid, "category": category, "arm": arm,
        "model": MODEL, "epoch": epoch, "status": "ok", "outcome": "correct" if correct else "wrong",
        "should_abstain": abstain, "abstained": False, "continuity_correct": correct,
        "retrieved_recall": recall, "retrieved_items": retrieved if retrieved is not None else ["it-pg-version"],
        "unsupported_claims": claims, "written_holds_expected": written, "retrieved_holds_expected": returned,
    })


def line(block: list[dict[str, Any]], line_id: str) -> dict[str, Any]:
    return next(x for x in block[0]["lines"] if x["id"] == line_id)


def suite(n: int, **kwargs: Any) -> dict[str, Any]:
    return {f"fact-{i:02d}": make_scenario(f"fact-{i:02d}", **kwargs) for i in range(n)}


# ---------------------------------------------------------------- coverage gained by an index


def coverage_run(arm: str, gains: list[float], *, n: int | None = None) -> tuple[list[SampleScores], dict[str, Any]]:
    """``recall`` retrieves half of each scenario's relevant items; ``arm`` that plus ``gains[i]``."""
    n = len(gains) if n is None else n
    scenarios = suite(n)
    rows = []
    for i, sid in enumerate(scenarios):
        rows.append(scores(sid, "recall", recall=0.5, correct=False))
        rows.append(scores(sid, arm, recall=0.5 + gains[i], correct=gains[i] > 0))
    return rows, scenarios


def test_an_index_whose_paired_gain_excludes_zero_is_justified() -> None:
    rows, scenarios = coverage_run("recall_vector", [0.5] * 8 + [0.0] * 4)
    got = line(layers_block(rows, scenarios, ["recall", "recall_vector"]), "vector")
    assert got["outcome"] == JUSTIFIED
    assert got["estimate"]["n"] == 12 and got["estimate"]["ci_low"] > 0
    assert "paired" in got["why"] and "continuity accuracy" in got["why"]


def test_four_scenarios_improved_and_none_worsened_do_not_justify_an_index() -> None:
    """The starter suite's vectors line: 4 up, 0 down is exact p 0.125. A percentile bootstrap over the 12
    scenarios put its interval above 0 and printed ``justified``; the shared rule reads the exact test."""
    rows, scenarios = coverage_run("recall_vector", [0.25] * 4 + [0.0] * 8)
    got = line(layers_block(rows, scenarios, ["recall", "recall_vector"]), "vector")
    assert got["outcome"] == NOT_JUSTIFIED and got["estimate"]["p_value"] == 0.125
    assert got["estimate"]["ci_low"] <= 0 and "(4 up, 0 down), exact p 0.12" in got["why"]


def test_an_index_whose_interval_crosses_zero_is_not_justified() -> None:
    rows, scenarios = coverage_run("recall_hybrid", [0.5, -0.5] * 6 + [0.5])
    got = line(layers_block(rows, scenarios, ["recall", "recall_hybrid"]), "hybrid")
    assert got["estimate"]["ci_low"] < 0 < got["estimate"]["ci_high"]
    assert got["outcome"] == NOT_JUSTIFIED


def test_an_index_arm_the_run_lacks_is_not_measured_by_this_suite() -> None:
    rows, scenarios = coverage_run("recall_fts", [0.5] * 12)
    block = layers_block(rows, scenarios, ["recall", "recall_fts"])
    for line_id, arm in (("vector", "recall_vector"), ("hybrid", "recall_hybrid")):
        got = line(block, line_id)
        assert got["outcome"] == NOT_MEASURED and got["why"] == f"the run has no {arm} arm"
    assert line(block, "fulltext")["outcome"] == JUSTIFIED


def test_an_index_with_fewer_paired_scenarios_than_the_minimum_is_not_measured() -> None:
    rows, scenarios = coverage_run("recall_fts", [0.5] * (MIN_SCENARIOS - 1))
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    assert got["outcome"] == NOT_MEASURED and f"{MIN_SCENARIOS - 1} paired" in got["why"]


def test_the_index_gain_is_paired_by_scenario_not_pooled() -> None:
    """Each arm answers a different half of the scenarios: pooled means would show a gain, pairs show none.

    recall covers the odd scenarios fully, the index arm only the even ones; on
    the scenarios both ran the per-scenario differences average 0.
    """
    scenarios = suite(20)
    rows = []
    for i, sid in enumerate(scenarios):
        rows.append(scores(sid, "recall", recall=1.0 if i % 2 else 0.0))
        if i % 2 == 0 or i < 10:  # the index arm ran only 15 scenarios, mostly where recall missed
            rows.append(scores(sid, "recall_fts", recall=1.0 if i % 2 == 0 else 0.0))
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    assert got["estimate"]["n"] == 15  # only the scenarios both arms ran
    assert got["estimate"]["value"] == round((10 - 5) / 15, 4)  # +1 on 10 even, -1 on 5 odd, paired


def test_an_index_line_reports_each_category_with_its_own_interval() -> None:
    scenarios = {**suite(6), **{f"pref-{i}": make_scenario(f"pref-{i}", category="preference") for i in range(6)}}
    rows = []
    for sid, sc in scenarios.items():
        gain = 0.5 if sc.category == "preference" else 0.0
        rows += [scores(sid, "recall", recall=0.5), scores(sid, "recall_fts", recall=0.5 + gain)]
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    by = {c["category"]: c for c in got["by_category"]}
    assert by["preference"]["recall_gain"]["value"] == 0.5 and by["preference"]["recall_gain"]["n"] == 6
    assert by["project_fact"]["recall_gain"]["value"] == 0.0


# ---------------------------------------------------------------- where wrong answers are lost


def test_losses_at_retrieval_above_the_threshold_justify_a_better_index() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=False, returned=False) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "stages")
    assert got["outcome"] == JUSTIFIED and got["shares"]["retrieval"]["value"] == 1.0
    assert got["shares"]["answer"]["value"] == 0.0


def test_losses_mostly_at_the_answer_do_not_justify_a_better_index() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=False, returned=i != 0) for i, sid in enumerate(scenarios)]
    got = line(layers_block(rows, scenarios, ["recall"]), "stages")
    assert got["shares"]["answer"]["value"] > 0.9 and got["shares"]["retrieval"]["value"] > 0
    assert got["outcome"] == NOT_JUSTIFIED


def test_no_wrong_answer_leaves_the_loss_line_not_measured() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall") for sid in scenarios]
    assert line(layers_block(rows, scenarios, ["recall"]), "stages")["outcome"] == NOT_MEASURED


# ---------------------------------------------------------------- source-range recall


def test_wrong_or_unsupported_answers_despite_retrieval_justify_source_range_recall() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=i % 2 == 0, unsupported=i % 2 == 0) for i, sid in enumerate(scenarios)]
    got = line(layers_block(rows, scenarios, ["recall"]), "source_range")
    assert got["estimate"]["value"] == 1.0 and got["outcome"] == JUSTIFIED  # wrong or unsupported: every sample


def test_answers_right_once_the_item_is_retrieved_do_not_justify_source_range_recall() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=i != 0) for i, sid in enumerate(scenarios)]
    got = line(layers_block(rows, scenarios, ["recall"]), "source_range")
    assert got["estimate"]["ci_low"] <= 0.10 and got["outcome"] == NOT_JUSTIFIED


def test_source_range_recall_counts_only_samples_that_retrieved_the_item() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=False, recall=0.0) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "source_range")
    assert got["outcome"] == NOT_MEASURED and "retrieved its relevant item" in got["why"]


# ---------------------------------------------------------------- working projection


def conversation_suite(conversations: int, probes: int) -> dict[str, Any]:
    return {f"conv-{c}/q{p}": make_scenario(f"conv-{c}/q{p}", expect={"relevant_items": ["it-global"]})
            for c in range(conversations) for p in range(probes)}


def test_the_same_preference_retrieved_by_every_probe_justifies_a_working_projection() -> None:
    scenarios = conversation_suite(12, 3)
    rows = [scores(sid, "recall", retrieved=["it-global"]) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"]["value"] == 1.0 and got["repeats"]["n"] == 12  # clustered by conversation
    assert got["outcome"] == JUSTIFIED and "97.5%" in got["why"]


def test_preferences_retrieved_once_and_never_missed_do_not_justify_a_working_projection() -> None:
    scenarios = conversation_suite(12, 2)
    rows = [scores(sid, "recall", retrieved=["it-global"] if sid.endswith("q0") else ["it-pg-version"])
            for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"]["value"] == 0.0 and got["misses"]["value"] == 0.0
    assert got["outcome"] == NOT_JUSTIFIED


def test_one_probe_stories_without_preference_questions_leave_the_projection_not_measured() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall") for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["outcome"] == NOT_MEASURED and "one probe per story" in got["why"]


# ---------------------------------------------------------------- observation / reflection


def episode_suite(n: int) -> dict[str, Any]:
    return suite(n, expect={"relevant_items": ["it-pg-version", "it-global"]})


def test_episode_questions_the_pasted_sessions_answer_and_recall_misses_justify_observation() -> None:
    scenarios = episode_suite(12)
    rows = [x for sid in scenarios for x in (scores(sid, "recall", correct=False),
                                             scores(sid, "full_history", correct=True))]
    got = line(layers_block(rows, scenarios, ["recall", "full_history"]), "observation")
    assert got["outcome"] == JUSTIFIED and got["failure_rate"]["value"] == 1.0


def test_episode_questions_recall_answers_as_well_as_the_ceiling_do_not_justify_observation() -> None:
    scenarios = episode_suite(12)
    rows = [x for i, sid in enumerate(scenarios) for x in (scores(sid, "recall", correct=i % 3 != 0),
                                                           scores(sid, "full_history", correct=i % 3 != 1))]
    got = line(layers_block(rows, scenarios, ["recall", "full_history"]), "observation")
    assert got["estimate"]["value"] == 0.0 and got["outcome"] == NOT_JUSTIFIED


def test_observation_without_the_ceiling_arm_or_episode_questions_is_not_measured() -> None:
    scenarios = episode_suite(12)
    rows = [scores(sid, "recall", correct=False) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "observation")
    assert got["outcome"] == NOT_MEASURED and "no full_history arm" in got["why"]
    single = suite(12)
    rows = [x for sid in single for x in (scores(sid, "recall"), scores(sid, "full_history"))]
    got = line(layers_block(rows, single, ["recall", "full_history"]), "observation")
    assert got["outcome"] == NOT_MEASURED and "two or more relevant items" in got["why"]


# ---------------------------------------------------------------- rendering


def test_the_ladder_renders_every_line_for_the_page_and_the_terminal() -> None:
    rows, scenarios = coverage_run("recall_fts", [0.5] * 12)
    summary = {"layers": layers_block(rows, scenarios, ["recall", "recall_fts"])}
    section = layers_section(summary)
    assert section is not None and len(section[0]["lines"]) == 7
    assert {x["outcome"] for x in section[0]["lines"]} <= {JUSTIFIED, NOT_JUSTIFIED, NOT_MEASURED}
    terminal = layers_lines(summary)
    assert terminal[1] == "  justified: an index: full text (FTS5)"
    assert all(len(x) <= 80 for x in terminal)
    assert layers_section({}) is None and layers_lines({}) == []


# ---------------------------------------------------------------- what each line says, word for word


INDEX_TRIGGER = "exact/prefix key search has inadequate measured coverage"


def test_an_index_line_at_exactly_the_minimum_decides_and_names_its_rung_arms_and_reason() -> None:
    """10 paired scenarios decide (fewer do not); the line carries its rung, trigger and arms, and the reason
    prints the gain, the units, the exact p and the continuity gain beside it."""
    rows, scenarios = coverage_run("recall_fts", [0.5] * MIN_SCENARIOS)
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    assert {k: got[k] for k in ("id", "layer", "trigger", "arm", "against", "outcome")} == {
        "id": "fulltext", "layer": "an index: full text (FTS5)", "trigger": INDEX_TRIGGER, "arm": "recall_fts",
        "against": "recall", "outcome": JUSTIFIED}
    assert got["why"] == ("retrieved-item recall@k gained by full text (FTS5) (recall_fts - recall) +50.0 pp "
                          "[+8.4, +76.3] over 10 paired scenarios (10 up, 0 down), exact p 0.002: the interval is "
                          "above 0; continuity accuracy +100.0 pp [+44.5, +100.0]")
    assert got["estimate"] == {"value": 0.5, "ci_low": 0.0837, "ci_high": 0.7634, "n": 10, "p_value": 0.001953125,
                               "evidence": got["estimate"]["evidence"], "signed": True}
    assert got["estimate"]["evidence"]["diff"] == 0.5 and got["estimate"]["evidence"]["alpha"] == 1 - 0.95
    assert got["continuity_gain"]["value"] == 1.0 and got["continuity_gain"]["n"] == 10


def test_an_index_line_without_its_arm_or_without_recall_names_the_missing_arm_and_estimates_nothing() -> None:
    rows, scenarios = coverage_run("recall_fts", [0.5] * 12)
    block = layers_block(rows, scenarios, ["recall_fts"])
    for line_id, layer in (("fulltext", "an index: full text (FTS5)"), ("vector", "an index: vectors"),
                           ("hybrid", "an index: full text and vectors (hybrid)")):
        got = line(block, line_id)
        assert got["layer"] == layer and got["trigger"] == INDEX_TRIGGER and got["against"] == "recall"
        assert got["estimate"] is None and got["continuity_gain"] is None and got["by_category"] == []
    assert line(block, "fulltext")["why"] == "the run has no recall arm"
    assert line(block, "vector")["why"] == "the run has no recall_vector arm"


def test_an_index_short_of_the_minimum_says_how_many_scenarios_paired_and_an_absent_arm_pairs_none() -> None:
    rows, scenarios = coverage_run("recall_vector", [0.5] * (MIN_SCENARIOS - 1))
    got = line(layers_block(rows, scenarios, ["recall", "recall_vector"]), "vector")
    assert got["outcome"] == NOT_MEASURED and got["why"].startswith(
        "retrieved-item recall@k gained by vectors (recall_vector - recall): 9 paired scenario(s), fewer than the "
        "10 a decision needs; continuity accuracy +100.0 pp")
    rows = [x for x in rows if x.arm == "recall"]  # the arm is in the run's list but none of its samples is ok
    got = line(layers_block(rows, scenarios, ["recall", "recall_vector"]), "vector")
    assert got["outcome"] == NOT_MEASURED and got["estimate"] is None and got["by_category"] == []
    assert got["why"] == ("retrieved-item recall@k gained by vectors (recall_vector - recall): 0 paired scenario(s), "
                          "fewer than the 10 a decision needs")


def test_an_index_not_shown_above_zero_says_so_with_its_interval_and_units() -> None:
    rows, scenarios = coverage_run("recall_hybrid", [0.5, -0.5] * 6 + [0.5])
    got = line(layers_block(rows, scenarios, ["recall", "recall_hybrid"]), "hybrid")
    iv = got["estimate"]
    shown = f"{iv['value'] * 100:+.1f} pp [{iv['ci_low'] * 100:+.1f}, {iv['ci_high'] * 100:+.1f}]"
    assert got["why"].startswith(f"retrieved-item recall@k gained by full text and vectors (hybrid) (recall_hybrid - "
                                 f"recall) {shown} over 13 paired scenarios (7 up, 6 down), exact p ")
    assert ": not shown above 0; continuity accuracy " in got["why"]


def test_only_ok_samples_of_known_scenarios_count_and_each_scenario_is_the_mean_of_its_epochs() -> None:
    """An errored sample, a sample of a scenario the run does not know, and a None recall are left out; two
    epochs of one scenario make one pair at their mean."""
    rows, scenarios = coverage_run("recall_fts", [0.5] * 12)
    extra = [scores("fact-00", "recall_fts", recall=0.0, epoch=1), scores("fact-01", "recall_fts", recall=None, epoch=1),
             scores("stray-01", "recall", recall=0.0), scores("stray-01", "recall_fts", recall=1.0)]
    broken = scores("fact-02", "recall_fts", recall=0.0, epoch=2).model_copy(update={"status": "error"})
    got = line(layers_block([*rows, *extra, broken], scenarios, ["recall", "recall_fts"]), "fulltext")
    assert got["estimate"]["n"] == 12  # the stray scenario is not paired
    assert got["estimate"]["value"] == round((11 * 0.5 + 0.0) / 12, 4)  # fact-00: (1.0 + 0.0) / 2 - 0.5
    assert got["estimate"]["evidence"]["up"] == 11 and got["estimate"]["evidence"]["down"] == 0


def test_each_category_gets_its_recall_and_continuity_gain_and_a_category_no_pair_ran_is_left_out() -> None:
    scenarios = {**suite(6), **{f"pref-{i}": make_scenario(f"pref-{i}", category="preference") for i in range(6)},
                 "lone-0": make_scenario("lone-0", category="adversarial")}
    rows = []
    for sid, sc in scenarios.items():
        gain = 0.5 if sc.category == "preference" else 0.0
        rows.append(scores(sid, "recall", recall=0.5, correct=False))
        if sc.category != "adversarial":  # the index arm never ran this scenario, whose category sorts first
            rows.append(scores(sid, "recall_fts", recall=0.5 + gain, correct=gain > 0))
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    assert [c["category"] for c in got["by_category"]] == ["preference", "project_fact"]
    by = {c["category"]: c for c in got["by_category"]}
    assert by["preference"]["continuity_gain"]["value"] == 1.0 and by["preference"]["continuity_gain"]["n"] == 6
    assert by["project_fact"]["continuity_gain"]["value"] == 0.0 and by["project_fact"]["recall_gain"]["n"] == 6


def test_the_loss_line_at_exactly_the_minimum_prints_every_stage_and_below_it_is_not_measured() -> None:
    scenarios = suite(MIN_SCENARIOS)
    rows = [scores(sid, "recall", correct=False, returned=False) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "stages")
    assert {k: got[k] for k in ("id", "layer", "trigger", "arm", "wrong", "outcome")} == {
        "id": "stages", "layer": "a better index (losses at retrieval)",
        "trigger": "wrong answers are lost where the stored fact was not returned", "arm": "recall", "wrong": 10,
        "outcome": JUSTIFIED}
    assert got["why"] == ("share of recall's wrong answers lost at retrieval 100.0% [47.3, 100.0] over 10 scenarios "
                          "(exact p 0.002 against 10%): above 10% with its interval (of 10: extraction 0.0% [0.0, "
                          "0.0], retrieval 100.0% [47.3, 100.0], answer 0.0% [0.0, 0.0])")
    assert got["estimate"] == got["shares"]["retrieval"] and got["estimate"]["n"] == 10
    short = {sid: scenarios[sid] for sid in list(scenarios)[:-1]}
    got = line(layers_block(rows[:-1], short, ["recall"]), "stages")
    assert got["outcome"] == NOT_MEASURED and got["why"].startswith(
        "share of recall's wrong answers lost at retrieval: 9 scenario(s), fewer than the 10 a decision needs (of 9:")


def test_the_loss_line_places_losses_at_extraction_and_counts_only_wrong_answers_with_a_stored_fact() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=False, written=i >= 6, returned=False) for i, sid in enumerate(scenarios)]
    rows += [scores(sid, "recall", correct=False, written=None, epoch=1) for sid in scenarios]  # nothing stored
    rows += [scores(sid, "recall", correct=True, epoch=2) for sid in scenarios]  # right: not a loss
    got = line(layers_block(rows, scenarios, ["recall"]), "stages")
    assert got["wrong"] == 12
    assert got["shares"]["extraction"]["value"] == 0.5 and got["shares"]["retrieval"]["value"] == 0.5
    assert "(of 12: extraction 50.0% [" in got["why"]
    nothing = [scores(sid, "recall", correct=False, written=None) for sid in scenarios]
    got = line(layers_block(nothing, scenarios, ["recall"]), "stages")
    assert got["outcome"] == NOT_MEASURED and got["estimate"] is None and got["wrong"] == 0
    assert got["why"] == "no wrong answer of recall with a stored fact to place (or no recall arm)"


def test_source_range_counts_answerable_scored_samples_that_retrieved_the_item_by_id_or_by_its_answer() -> None:
    """Without relevant ids (recall None), the expected answer in the tool results counts as retrieved; an
    abstention question, an unscored sample and a recall of 0 are not asked about."""
    scenarios = suite(12)
    rows = [scores(sid, "recall") for sid in scenarios]
    rows += [scores("fact-00", "recall", correct=False, recall=None, returned=True, epoch=1),  # counted: wrong
             scores("fact-01", "recall", correct=False, recall=None, returned=None, epoch=1),
             scores("fact-01", "recall", correct=False, recall=None, returned=None, epoch=2),
             scores("fact-02", "recall", correct=False, abstain=True, epoch=1),
             scores("fact-03", "recall", correct=None, epoch=1),
             scores("fact-04", "recall", correct=False, recall=0.0, epoch=1),
             scores("fact-05", "recall", correct=True, unsupported=True, epoch=1)]  # counted: unsupported
    got = line(layers_block(rows, scenarios, ["recall"]), "source_range")
    assert got["estimate"]["value"] == round((0.5 + 0.5) / 12, 4) and got["estimate"]["n"] == 12
    assert {k: got[k] for k in ("id", "layer", "trigger", "arm", "outcome")} == {
        "id": "source_range", "layer": "source-range recall (the original evidence)",
        "trigger": "unsupported answers or trust failures although the item was found", "arm": "recall",
        "outcome": NOT_JUSTIFIED}
    assert got["why"] == ("wrong or unsupported answers despite the relevant item retrieved 8.3% [0.0, 37.7] over 12 "
                          "scenarios (exact p 0.87 against 10%): the interval does not lie above 10%")


def test_source_range_prints_its_rate_and_test_when_justified_and_says_when_nothing_retrieved() -> None:
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=False) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "source_range")
    assert got["why"] == ("wrong or unsupported answers despite the relevant item retrieved 100.0% [53.9, 100.0] over "
                          "12 scenarios (exact p 0.00049 against 10%): above 10% with its interval")
    assert got["estimate"]["evidence"]["alpha"] == 1 - 0.95
    rows = [scores(sid, "recall", correct=False, recall=0.0) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "source_range")
    assert got["why"] == "no answerable recall sample retrieved its relevant item" and got["estimate"] is None


PROJECTION = {"id": "working_projection", "layer": "a small working projection (pinned preferences)",
              "trigger": "repeatedly retrieving ubiquitous preferences creates measurable cost or misses",
              "arm": "recall"}


def test_a_repeated_preference_justifies_the_projection_with_each_test_at_97_5_percent() -> None:
    scenarios = conversation_suite(12, 3)
    rows = [scores(sid, "recall", retrieved=["it-global"]) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert {k: got[k] for k in PROJECTION} == PROJECTION
    assert got["why"] == ("ubiquitous preferences retrieved again by another probe of the same conversation 100.0% "
                          "[43.9, 100.0] over 12 conversations (exact p 0.00049 against 10%): above 10% with its "
                          "interval; questions on a stored preference whose item was not retrieved 0.0% [0.0, 0.0] "
                          "over 12 conversations (exact p 0.00049 against 10%): the interval does not lie above 10% "
                          "(each at 97.5%)")
    assert got["repeats"]["unit"] == "conversations" and got["estimate"] == got["misses"]
    for test in (got["repeats"], got["misses"]):
        assert abs(test["evidence"]["alpha"] - 0.025) < 1e-12


def test_a_preference_counts_as_repeated_only_when_another_probe_of_the_same_epoch_retrieved_it() -> None:
    """Epoch 0's first probe and epoch 1's second probe retrieve the same preference: no repeat. A one-story
    scenario id (no ``/``) has no other probe to repeat it."""
    scenarios = conversation_suite(12, 2)
    rows = [scores(sid, "recall", retrieved=["it-global"], epoch=0 if sid.endswith("q0") else 1) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"]["value"] == 0.0 and got["repeats"]["n"] == 12 and got["outcome"] == NOT_JUSTIFIED
    assert (got["repeats"]["ci_low"], got["repeats"]["ci_high"]) == (0.0, 0.0)  # a rate cannot fall below 0
    single = suite(12, expect={"relevant_items": ["it-global"]})
    rows = [scores(sid, "recall", retrieved=["it-global"]) for sid in single]
    got = line(layers_block(rows, single, ["recall"]), "working_projection")
    assert got["repeats"] is None
    assert got["why"].startswith("no conversation whose probes share stored preferences (one probe per story); ")


def test_missed_preferences_alone_justify_the_projection_and_only_answerable_preference_questions_count() -> None:
    scenarios = {**conversation_suite(12, 1), **suite(4)}  # suite(): relevant item not a preference
    rows = [scores(sid, "recall", recall=0.0, retrieved=[]) for sid in scenarios]
    rows += [scores("conv-0/q0", "recall", recall=None, retrieved=[], epoch=1),
             scores("conv-1/q0", "recall", recall=0.0, abstain=True, retrieved=[], epoch=1),
             scores("conv-2/q0", "recall", recall=1.0, retrieved=[], epoch=2)]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"] is None and got["misses"]["n"] == 12
    assert got["misses"]["value"] == round((11 + 0.5) / 12, 4)  # conv-2: one miss of two asks
    assert got["outcome"] == JUSTIFIED
    assert got["why"].startswith("no conversation whose probes share stored preferences (one probe per story); "
                                 "questions on a stored preference whose item was not retrieved ")
    rows = [scores(sid, "recall", retrieved=[]) for sid in scenarios]  # every preference question found its item
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["outcome"] == NOT_JUSTIFIED and got["misses"]["value"] == 0.0
    few = conversation_suite(MIN_SCENARIOS - 1, 1)
    got = line(layers_block([scores(sid, "recall", recall=0.0, retrieved=[]) for sid in few], few, ["recall"]),
               "working_projection")
    assert got["outcome"] == NOT_MEASURED
    assert got["why"] == ("no conversation whose probes share stored preferences (one probe per story); questions on "
                          "a stored preference whose item was not retrieved: 9 scenario(s), fewer than the 10 a "
                          "decision needs (each at 97.5%)")


OBSERVATION = {"id": "observation", "layer": "observation/reflection (episodes)",
               "trigger": "atomic item recall fails on questions that need several items or an episode",
               "arm": "recall", "against": "full_history"}


def test_the_observation_line_prints_the_gap_to_the_pasted_sessions_and_recalls_failure_rate() -> None:
    scenarios = episode_suite(12)
    rows = [x for sid in scenarios for x in (scores(sid, "recall", correct=False),
                                             scores(sid, "full_history", correct=True))]
    got = line(layers_block(rows, scenarios, ["recall", "full_history"]), "observation")
    assert {k: got[k] for k in OBSERVATION} == OBSERVATION
    assert got["why"] == ("accuracy the pasted sessions reach and atomic recall misses (full_history - recall, on "
                          "multi-item or episode questions) +100.0 pp [+51.5, +100.0] over 12 paired scenarios (12 up, "
                          "0 down), exact p 0.00049: the interval is above 0; recall fails 100.0% [53.9, 100.0] of them")
    assert got["estimate"]["value"] == 1.0 and got["estimate"]["n"] == 12
    got = line(layers_block(rows, scenarios, ["full_history"]), "observation")
    assert got["outcome"] == NOT_MEASURED and got["estimate"] is None
    assert got["why"] == ("the run has no recall arm: without the pasted sessions, a failure of atomic recall cannot "
                          "be told from a question nothing could answer")


def test_episode_questions_are_multi_item_or_multi_hop_or_multi_session_and_answerable_only() -> None:
    """A one-item question of category multi_hop or multi_session needs an episode; one of another category does
    not, nor does an abstention question; only those scenarios pair, and an unscored sample is not a failure."""
    scenarios = {**{f"hop-{i}": make_scenario(f"hop-{i}", category="multi_hop") for i in range(5)},
                 **{f"ses-{i}": make_scenario(f"ses-{i}", category="multi_session") for i in range(5)},
                 **suite(6), "no-0": make_scenario("no-0", abstain=True,
                                                    expect={"relevant_items": ["it-pg-version", "it-global"]})}
    rows = [x for sid in scenarios for x in (scores(sid, "recall", correct=False),
                                             scores(sid, "full_history", correct=True))]
    rows.append(scores("hop-0", "recall", correct=None, epoch=1))
    got = line(layers_block(rows, scenarios, ["recall", "full_history"]), "observation")
    assert got["estimate"]["n"] == 10 and got["outcome"] == JUSTIFIED
    assert got["failure_rate"]["n"] == 10 and got["failure_rate"]["value"] == 1.0
    got = line(layers_block(rows, scenarios, ["recall"]), "observation")  # no ceiling: the rate alone is kept
    assert got["failure_rate"]["value"] == 1.0 and got["estimate"] is None
    assert got["why"].startswith("the run has no full_history arm: ")
    nothing = line(layers_block(rows, suite(12), ["recall", "full_history"]), "observation")
    assert nothing["failure_rate"] is None and nothing["estimate"] is None and nothing["outcome"] == NOT_MEASURED
    assert nothing["why"] == "no answerable question needs two or more relevant items or an episode"
    assert {k: nothing[k] for k in OBSERVATION} == OBSERVATION


def test_the_observation_line_without_scored_recall_samples_leaves_the_failure_rate_out_of_its_reason() -> None:
    scenarios = episode_suite(12)
    rows = [x for sid in scenarios for x in (scores(sid, "recall", correct=None),
                                             scores(sid, "full_history", correct=True))]
    got = line(layers_block(rows, scenarios, ["recall", "full_history"]), "observation")
    assert got["failure_rate"] is None and got["outcome"] == NOT_MEASURED
    assert got["why"] == ("accuracy the pasted sessions reach and atomic recall misses (full_history - recall, on "
                          "multi-item or episode questions): 0 paired scenario(s), fewer than the 10 a decision needs")


# ---------------------------------------------------------------- per model, the rule, and rendering


def test_each_model_gets_its_own_ladder_in_name_order_under_the_same_rule() -> None:
    rows, scenarios = coverage_run("recall_fts", [0.5] * 12)
    other = [r.model_copy(update={"model": "a-model", "sample_id": r.sample_id + "|a"}) for r in rows
             if r.arm == "recall"]  # a-model ran recall only
    block = layers_block([*rows, *other], scenarios, ["recall", "recall_fts"])
    assert [b["model"] for b in block] == ["a-model", MODEL]
    assert block[0]["lines"][0]["outcome"] == NOT_MEASURED and "0 paired" in block[0]["lines"][0]["why"]
    assert block[1]["lines"][0]["outcome"] == JUSTIFIED
    assert block[0]["rule"] == block[1]["rule"] == {
        "level": 0.95, "min_scenarios": 10, "rate_threshold": 0.1, "base_arm": "recall",
        "gain": "exact sign-flip test of the per-scenario differences (by conversation) and the interval inverted "
                "from it; justified when the test rejects and the interval lies above 0",
        "rate": "exact sign-flip test of each scenario's rate minus 10% and the interval inverted from it; "
                "justified when the test rejects and the interval lies above 10%"}


def test_the_terminal_names_each_model_when_there_are_several_and_cuts_a_long_rung_to_the_width() -> None:
    summary = {"layers": [{"model": "m-1", "lines": [{"outcome": JUSTIFIED, "layer": "an index: vectors"}]},
                          {"model": "m-2", "lines": [{"outcome": NOT_MEASURED, "layer": "x" * 60}]}, "junk"]}
    assert layers_lines(summary, width=40) == [
        "which layer has earned its complexity (seed 000; rule: docs/layers.md):", "  m-1:",
        "  justified: an index: vectors", "  m-2:", "  not measured by this suite: " + "x" * 7 + "..."]  # 40 wide
    exact = "  justified: an index: vectors"
    assert layers_lines(summary, width=len(exact))[2] == exact  # a line exactly the width is kept whole
    one = {"layers": [{"model": "m-1", "lines": [{"outcome": JUSTIFIED, "layer": "an index: vectors"}]}]}
    assert layers_lines(one) == ["which layer has earned its complexity (seed 000; rule: docs/layers.md):", exact]
    assert layers_lines({"layers": ["junk"]}) == [] and layers_lines({"layers": None}) == []
    wide = {"layers": [{"model": "m-1", "lines": [{"outcome": JUSTIFIED, "layer": "y" * (81 - len("  justified: "))}]}]}
    assert layers_lines(wide)[1] == "  justified: " + "y" * (77 - len("  justified: ")) + "..."  # 80 by default


def test_the_page_marks_each_outcome_and_prints_category_gains_with_unknown_ends_as_question_marks() -> None:
    gain = {"value": 0.5, "ci_low": None, "ci_high": 0.7, "signed": True}
    rate = {"value": 0.25, "ci_low": 0.1, "ci_high": None}
    summary = {"layers": [{"model": "m-1", "lines": [
        {"outcome": JUSTIFIED, "layer": "L1", "trigger": "T1", "why": "W1",
         "by_category": [{"category": "c1", "recall_gain": gain, "continuity_gain": rate},
                         {"category": "c2", "recall_gain": None, "continuity_gain": {"value": None}}, "junk"]},
        {"outcome": NOT_JUSTIFIED, "layer": "L2"}, "junk", {"outcome": NOT_MEASURED, "layer": "L3"}]}, "junk"]}
    section = layers_section(summary)
    assert section is not None and len(section) == 1 and section[0]["model"] == "m-1"
    assert section[0]["lines"] == [
        {"outcome": JUSTIFIED, "cls": "justified", "layer": "L1", "trigger": "T1", "why": "W1", "by_category": [
            {"category": "c1", "recall_gain": "+50.0 pp [?, +70.0]", "continuity_gain": "25.0% [10.0, ?]"},
            {"category": "c2", "recall_gain": "—", "continuity_gain": "—"}]},
        {"outcome": NOT_JUSTIFIED, "cls": "not", "layer": "L2", "trigger": None, "why": None, "by_category": []},
        {"outcome": NOT_MEASURED, "cls": "unmeasured", "layer": "L3", "trigger": None, "why": None,
         "by_category": []}]
    assert layers_section({"layers": ["junk"]}) is None and layers_section({"layers": None}) is None


def test_a_saved_line_with_a_blank_outcome_renders_unclassed_instead_of_failing_the_page() -> None:
    """A hand-edited or truncated ``summary.json`` (an outcome of "" or spaces) still renders: it has no class."""
    summary = {"layers": [{"model": "m-1", "lines": [{"outcome": "", "layer": "L1"}, {"outcome": "  ", "layer": "L2"}]}]}
    section = layers_section(summary)
    assert section is not None
    assert [(x["outcome"], x["cls"]) for x in section[0]["lines"]] == [("", ""), ("  ", "")]


def test_a_category_without_relevant_ids_still_shows_its_continuity_gain() -> None:
    """No relevant ids (recall None in both arms): no recall gain to pair, but the continuity gain stands."""
    scenarios = {**suite(10), **{f"open-{i}": make_scenario(f"open-{i}", category="open_domain") for i in range(4)}}
    rows = []
    for sid, sc in scenarios.items():
        recall = None if sc.category == "open_domain" else 0.5
        rows += [scores(sid, "recall", recall=recall, correct=False),
                 scores(sid, "recall_fts", recall=None if recall is None else 1.0, correct=True)]
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    by = {c["category"]: c for c in got["by_category"]}
    assert by["open_domain"]["recall_gain"] is None and by["open_domain"]["continuity_gain"]["value"] == 1.0
    assert got["estimate"]["n"] == 10 and got["continuity_gain"]["n"] == 14


def test_a_run_without_recall_samples_leaves_every_recall_line_not_measured() -> None:
    """The index, loss, source-range, projection and observation lines all read ``recall``: with none of its
    samples (the arm failed, or the run never had it) each says so instead of failing."""
    scenarios = episode_suite(12)
    rows = [x for sid in scenarios for x in (scores(sid, "recall_fts"), scores(sid, "full_history"))]
    block = layers_block(rows, scenarios, ["recall", "recall_fts", "full_history"])
    assert {x["id"]: x["outcome"] for x in block[0]["lines"]} == {
        "fulltext": NOT_MEASURED, "vector": NOT_MEASURED, "hybrid": NOT_MEASURED, "stages": NOT_MEASURED,
        "source_range": NOT_MEASURED, "working_projection": NOT_MEASURED, "observation": NOT_MEASURED}
    assert "0 paired scenario(s)" in line(block, "fulltext")["why"]
    assert line(block, "observation")["failure_rate"] is None
    no_ceiling = [x for x in rows if x.arm != "full_history"] + [scores(sid, "recall") for sid in scenarios]
    got = line(layers_block(no_ceiling, scenarios, ["recall", "full_history"]), "observation")
    assert got["outcome"] == NOT_MEASURED and got["estimate"] is None and "0 paired scenario(s)" in got["why"]


def test_a_probe_without_a_preference_neither_repeats_another_nor_ends_the_count() -> None:
    """q0 retrieved no preference: q1's preference is not repeated (q0 did not retrieve it), and the probes
    after q0 still count; two probes sharing a preference is already a repeat."""
    scenarios = conversation_suite(12, 2)
    rows = [scores(sid, "recall", retrieved=["it-pg-version"] if sid.endswith("q0") else ["it-global"])
            for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"]["value"] == 0.0 and got["repeats"]["n"] == 12
    scenarios = conversation_suite(12, 3)
    rows = [scores(sid, "recall", retrieved=["it-pg-version"] if sid.endswith("q0") else ["it-global"])
            for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"]["value"] == 1.0 and got["repeats"]["n"] == 12 and got["outcome"] == JUSTIFIED


def _two_preferences(sid: str) -> Any:
    from harness.scenarios.models import Scenario

    data = make_scenario(sid, expect={"relevant_items": ["it-global"]}).model_dump(mode="json")
    pref = next(i for i in data["items"] if i["id"] == "it-global")
    data["items"].append({**pref, "id": "it-tabs", "content": "User likes tabs"})
    return Scenario.model_validate(data)


def test_a_probe_counts_the_share_of_its_preferences_another_probe_retrieved_too() -> None:
    """q0 retrieves two preferences, one of which q1 retrieves too (share 1/2); q1's one is repeated (1/1)."""
    scenarios = {f"conv-{c}/q{p}": _two_preferences(f"conv-{c}/q{p}") for c in range(12) for p in range(2)}
    rows = [scores(sid, "recall", retrieved=["it-global", "it-tabs"] if sid.endswith("q0") else ["it-global"])
            for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert got["repeats"]["value"] == 0.75 and got["repeats"]["n"] == 12
    assert (got["repeats"]["ci_low"], got["repeats"]["ci_high"]) == (0.2631, 0.9686)


def test_a_zero_rate_prints_as_zero_never_as_minus_zero() -> None:
    """A share of 0 comes back as (0 - 10%) + 10%, which rounded to -0.0 and printed "-0.0% [0.0, -0.0]"."""
    scenarios = suite(12)
    rows = [scores(sid, "recall", correct=False, returned=i != 0) for i, sid in enumerate(scenarios)]
    got = line(layers_block(rows, scenarios, ["recall"]), "stages")
    assert "-0.0" not in got["why"] and "extraction 0.0% [0.0, 0.0]" in got["why"]
    assert str(got["shares"]["extraction"]["value"]) == "0.0"


def test_an_index_gain_over_probes_of_shared_conversations_is_tested_by_conversation() -> None:
    """Two probes of one conversation share its history: the pairs cluster into 12 conversations, not 24."""
    scenarios = conversation_suite(12, 2)
    rows = [x for sid in scenarios for x in (scores(sid, "recall", recall=0.5), scores(sid, "recall_fts", recall=1.0))]
    got = line(layers_block(rows, scenarios, ["recall", "recall_fts"]), "fulltext")
    assert got["estimate"]["n"] == 12 and got["estimate"]["evidence"]["unit"] == "conversation"
    assert got["estimate"]["evidence"]["n_scenarios"] == 24 and got["estimate"]["evidence"]["alpha"] == 1 - 0.95
    assert " over 12 paired conversations (12 up, 0 down), exact p 0.00049: the interval is above 0" in got["why"]


def test_a_repeat_rate_interval_reaches_down_to_zero_not_to_twice_the_threshold() -> None:
    """Both probes of 4 conversations share the preference, the other 8 repeat nothing: the interval's lower end
    stops at a rate of 0 (the bound of a rate less 10%), not at 20%."""
    scenarios = conversation_suite(12, 2)
    rows = [scores(sid, "recall", retrieved=["it-global"] if sid.endswith("q1") or sid.split("/")[0] in
                   ("conv-0", "conv-1", "conv-2", "conv-3") else []) for sid in scenarios]
    got = line(layers_block(rows, scenarios, ["recall"]), "working_projection")
    assert (got["repeats"]["value"], got["repeats"]["ci_low"], got["repeats"]["ci_high"]) == (0.5, 0.0, 0.8571)


def test_a_suite_of_one_probe_fact_stories_says_why_neither_projection_trigger_can_be_measured() -> None:
    scenarios = suite(12)
    got = line(layers_block([scores(sid, "recall") for sid in scenarios], scenarios, ["recall"]), "working_projection")
    assert {k: got[k] for k in PROJECTION} == PROJECTION and got["outcome"] == NOT_MEASURED
    assert got["why"] == ("no conversation whose probes share stored preferences (one probe per story); no answerable "
                          "question whose relevant item is a stored preference (each at 97.5%)")
    assert got["estimate"] is None and got["repeats"] is None and got["misses"] is None
