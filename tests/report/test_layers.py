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
