"""Unlabelled probes (logged traffic, no gold): never scored right or wrong, everything else scored as usual."""

from __future__ import annotations

from harness.score.scoring import score_sample
from tests.score.scoring_factories import make_record, make_scenario

UNLABELLED = {"must_contain_any": [], "relevant_items": [], "canaries": [], "unlabelled": True,
              "logged_reply": "Billing runs Postgres 15."}


def test_an_unlabelled_probe_is_neither_right_nor_wrong() -> None:
    scenario = make_scenario(expect=UNLABELLED)
    for answer in ("Billing runs Postgres 15.", "Billing runs MySQL.", "I don't know."):
        scores = score_sample(make_record(scenario, answer), scenario)
        assert scores.outcome == "unlabelled"
        assert scores.continuity_correct is None and scores.pattern_correct is None
        continuity = next(s for s in scores.scores if s.name == "continuity")
        assert continuity.value is None and continuity.passed is None and "no gold" in continuity.reason


def test_an_unlabelled_answer_that_abstains_says_so_without_being_wrong() -> None:
    scenario = make_scenario(expect=UNLABELLED)
    scores = score_sample(make_record(scenario, "I don't know; you never told me."), scenario)
    assert scores.abstained is True and scores.outcome == "unlabelled" and scores.continuity_correct is None


def test_the_logged_reply_is_never_scored_as_a_gold() -> None:
    scenario = make_scenario(expect=UNLABELLED)
    scores = score_sample(make_record(scenario, "Something else entirely."), scenario)
    assert scores.token_f1 is None and scores.outcome == "unlabelled"


def test_unsupported_claims_and_leaks_still_count_on_an_unlabelled_probe() -> None:
    scenario = make_scenario(expect=UNLABELLED)
    scores = score_sample(make_record(scenario, "See it-made-up: Postgres 15."), scenario)
    assert [c.kind for c in scores.unsupported_claims] == ["unknown_item_id"]
    assert "unsupported: unknown_item_id" in next(s for s in scores.scores if s.name == "continuity").reason
