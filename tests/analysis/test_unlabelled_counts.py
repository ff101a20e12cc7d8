"""Unlabelled probes are counted apart: continuity n/a for them, out of over-abstention, a count of their own."""

from __future__ import annotations

from harness.analysis.aggregate import AggregateConfig, aggregate
from harness.analysis.verdict import VerdictConfig, decide_model
from harness.score.scoring import score_sample
from tests.score.scoring_factories import MODEL, make_record, make_scenario
from tests.score.test_unlabelled import UNLABELLED


def _tables(labelled: int, unlabelled: int, answer: str = "I don't know."):
    scores = []
    for i in range(labelled + unlabelled):
        scenario = make_scenario(f"s-{i:02d}", expect=UNLABELLED if i >= labelled else None)
        for arm in ("history_only", "recall"):
            right = "Billing runs Postgres 15."
            scores.append(score_sample(make_record(scenario, right if i < labelled else answer, arm=arm), scenario))
    return aggregate(scores, config=AggregateConfig(resamples=200))


def _row(tables, metric, arm="recall"):
    return next(r for r in tables["metrics"] if r["metric"] == metric and r["arm"] == arm and r["category"] == "all")


def test_continuity_counts_only_labelled_probes_and_unlabelled_ones_apart() -> None:
    tables = _tables(labelled=3, unlabelled=2)
    assert _row(tables, "continuity_accuracy")["n"] == 3 and _row(tables, "continuity_accuracy")["value"] == 1.0
    assert _row(tables, "unlabelled_probes")["value"] == 2 and _row(tables, "unlabelled_probes")["n"] == 5


def test_an_abstention_on_an_unlabelled_probe_is_not_over_abstention() -> None:
    tables = _tables(labelled=3, unlabelled=2, answer="I don't know.")
    assert _row(tables, "over_abstention_rate")["n"] == 3 and _row(tables, "over_abstention_rate")["value"] == 0.0


def test_a_suite_without_unlabelled_probes_has_no_unlabelled_row() -> None:
    assert not [r for r in _tables(labelled=3, unlabelled=0)["metrics"] if r["metric"] == "unlabelled_probes"]


def test_a_run_of_only_unlabelled_probes_says_so_in_the_verdict() -> None:
    verdict = decide_model(_tables(labelled=0, unlabelled=3), MODEL, VerdictConfig())
    continuity = verdict.checks[0]
    assert continuity.passed is None and "unlabelled (logged traffic, no gold)" in continuity.reason
