"""The verdict decides continuity on the protocol's headline scenarios, not on every category.

A LoCoMo-shaped run: the history-only arm abstains on everything, so it wins
every adversarial probe and loses every answerable one; recall answers the
answerable ones better and falls for the traps. Over all categories recall
looks worse; over the headline (categories 1-4) it is better, which is what
the published protocol reports.
"""

from __future__ import annotations

from harness.analysis import HEADLINE, aggregate, decide
from tests.analysis.sample_scores import sample

ANSWERABLE = ("single_hop", "multi_hop", "temporal", "open_domain")


def _locomo_like() -> tuple[list, frozenset[str]]:
    scores, headline = [], set()
    n = 0
    for category in ANSWERABLE:
        for i in range(6):
            n += 1
            headline.add(f"sc-{n:03d}")
            scores.append(sample(n, "history_only", 0, False, category=category))
            scores.append(sample(n, "recall", 0, i < 3, category=category))  # recall right on half
    for _ in range(30):  # adversarial: abstaining is right; recall answers the trap
        n += 1
        scores.append(sample(n, "history_only", 0, True, category="adversarial", abstain=True))
        scores.append(sample(n, "recall", 0, False, category="adversarial", abstain=True))
    return scores, frozenset(headline)


def _continuity(verdict: dict) -> dict:
    return next(c for c in verdict["per_model"]["m"]["checks"] if c["name"] == "continuity_improves")


def test_the_verdict_reads_the_headline_rows_when_the_suite_has_a_protocol() -> None:
    scores, headline = _locomo_like()
    tables = aggregate(scores, headline=headline)
    check = _continuity(decide(tables, {"m"}, headline="LoCoMo: single_hop, multi_hop, temporal, open_domain"))
    assert check["passed"] is True and check["value"] == 0.5
    assert "over the headline (LoCoMo: single_hop" in check["reason"]


def test_without_a_protocol_the_adversarial_category_still_sinks_the_verdict() -> None:
    scores, _ = _locomo_like()
    check = _continuity(decide(aggregate(scores), {"m"}))
    assert check["passed"] is False and check["value"] < 0  # the artefact the protocol exists to avoid


def test_headline_rows_cover_exactly_the_headline_scenarios() -> None:
    scores, headline = _locomo_like()
    tables = aggregate(scores, headline=headline)
    rows = {(r["arm"], r["metric"]): r for r in tables["metrics"] if r["category"] == HEADLINE}
    assert rows[("recall", "continuity_accuracy")]["n"] == 24 and rows[("recall", "continuity_accuracy")]["value"] == 0.5
    assert rows[("history_only", "continuity_accuracy")]["value"] == 0.0
    paired = [r for r in tables["paired"] if r["category"] == HEADLINE and r["metric"] == "continuity_accuracy"]
    assert [r["n_scenarios"] for r in paired] == [24]
    categories = [r["category"] for r in tables["paired"] if r["metric"] == "continuity_accuracy"]
    assert categories[:2] == ["all", HEADLINE]  # headline right after all, before the categories


def test_no_headline_rows_without_a_protocol() -> None:
    scores, _ = _locomo_like()
    tables = aggregate(scores)
    assert not [r for r in tables["metrics"] + tables["paired"] if r["category"] == HEADLINE]


def test_a_missing_headline_leaves_continuity_undecided_rather_than_reading_all() -> None:
    scores, _ = _locomo_like()
    check = _continuity(decide(aggregate(scores), {"m"}, headline="LoCoMo"))  # protocol said, no headline rows
    assert check["passed"] is None


def test_a_run_holding_no_headline_scenario_leaves_continuity_and_unsupported_claims_undecided() -> None:
    """Both read the headline's groups: a run of the adversarial category alone decides neither (its own
    unsupported claims belong to the group reported apart, not to the headline)."""
    scores, _ = _locomo_like()
    adversarial = [s for s in scores if s.category == "adversarial"]
    verdict = decide(aggregate(adversarial, headline=frozenset()), {"m"}, headline="LoCoMo: categories 1-4")
    checks = {c["name"]: c for c in verdict["per_model"]["m"]["checks"]}
    assert checks["continuity_improves"]["passed"] is None
    assert "no scored scenario of the headline (LoCoMo: categories 1-4)" in checks["continuity_improves"]["reason"]
    assert checks["unsupported_claims_within_tolerance"]["passed"] is None
    assert "no scored scenario of the headline" in checks["unsupported_claims_within_tolerance"]["reason"]
