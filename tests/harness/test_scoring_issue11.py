"""Issue 11's answer checks: list answers (``must_contain_groups``), informational token F1, the someone_else canary.

Each test names the planted bug it was watched failing against.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.harness.scoring_factories import make_record, make_scenario, paired_run

from harness.analysis.aggregate import aggregate
from harness.runs.compare import is_regression
from harness.score.judge import expected_facts
from harness.report.headlines import unsupported_by_kind
from harness.score.matching import f1_tokens, token_f1
from harness.score.models import CLAIM_KINDS
from harness.score.scoring import score_sample

PETS = {"must_contain_any": [], "must_contain_groups": [["Max"], ["Luna", "Lulu"]], "relevant_items": []}


def _score(answer: str | None, expect: dict[str, Any], **kwargs: Any):
    scenario = make_scenario(expect=expect, **kwargs)
    return score_sample(make_record(scenario, answer), scenario)


# --- must_contain_groups ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["Her pets are Max and Luna.", "Luna, and also Max.", "LUNA and max"])
def test_must_contain_groups_passes_when_every_group_appears_in_any_order(answer: str) -> None:
    """Bug planted: groups compared in order (each group searched after the previous one's match)."""
    s = _score(answer, PETS)
    assert s.continuity_correct is True and s.outcome == "correct"


def test_must_contain_groups_fails_when_one_group_is_missing_and_names_it() -> None:
    """Bug planted: ``any`` over the groups instead of ``all`` (one group was enough)."""
    s = _score("Her dog is Max.", PETS)
    assert s.continuity_correct is False and s.outcome == "wrong"
    assert "no item of group 2 ['Luna', 'Lulu'] appears" in s.scores[0].reason


def test_a_group_matches_on_any_of_its_synonyms() -> None:
    """Bug planted: every synonym of a group required (``all`` within the group)."""
    assert _score("Max and Lulu.", PETS).continuity_correct is True


@pytest.mark.parametrize(("answer", "correct"), [
    ("She has 2 cats, no dogs.", True),
    ("She has 12 cats; I know nothing of dogs.", False),  # "2" inside "12", "no" inside "know"
    ("She has 2.5 cats and not a dog.", False),  # "2" inside "2.5", "no" inside "not"
])
def test_short_group_golds_match_word_bounded(answer: str, correct: bool) -> None:
    """Bug planted: group strings matched as plain substrings (``normalize_text(s) in answer``)."""
    expect = {"must_contain_any": [], "must_contain_groups": [["2", "two"], ["no"]], "relevant_items": []}
    assert _score(answer, expect).continuity_correct is correct


@pytest.mark.parametrize(("answer", "abstained", "outcome"), [
    ("I have no record of Max or Luna.", True, "abstained_wrongly"),  # the golds sit in the abstention clause
    ("Max and Luna. I have no record of a third pet.", False, "correct"),
])
def test_group_gold_only_inside_an_abstention_clause_does_not_count(answer: str, abstained: bool,
                                                                    outcome: str) -> None:
    """Bugs planted: the groups left out of the positive check run outside the abstention clauses (the first
    answer counted as answered); ``has_positive_check`` ignoring groups (the second answer abstained)."""
    s = _score(answer, PETS)
    assert s.abstained is abstained and s.outcome == outcome


def test_groups_count_as_the_current_value_that_excuses_a_stale_mention() -> None:
    """Bug planted: ``has_positive_check`` ignored groups, so a groups-only scenario never excused a stale mention."""
    expect = {**PETS, "canaries": [{"text": "Bella", "kind": "stale"}]}
    s = _score("Max and Luna, not Bella anymore.", expect)
    assert not [c for c in s.unsupported_claims if c.kind == "stale"]
    s = _score("Max, Luna and Bella.", expect)
    assert [c.text for c in s.unsupported_claims if c.kind == "stale"] == ["Bella"]


def test_the_judge_is_shown_the_groups_as_a_positive_check() -> None:
    """Bug planted: ``expected_facts`` skipped ``must_contain_groups`` (the judge saw only the rubric)."""
    expect = make_scenario(expect=PETS).expect
    assert expected_facts(expect) == [
        'states every one of these, in any order (one wording per bracket): ("Max"), ("Luna" | "Lulu")']
    adherence = make_scenario(expect={"adherence": {"must_contain_groups": [["bullet"]]}}).expect
    assert any(line.startswith("its output states every one") for line in expected_facts(adherence, adherence.adherence))


# --- token F1 --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "reference", "f1"), [
    ("Max", "Max", 1.0),
    ("The dog, Max!", "max dog", 1.0),  # articles, commas, punctuation and case removed
    ("Max and Luna", "luna, max", 1.0),  # "and" is removed like an article
    ("“Max”", "Max", 1.0),  # typographic quotes are punctuation too
    ("She adopted a dog named Max", "Max", 2 * (1 / 5) / (1 / 5 + 1)),
    ("max max", "max", 2 * 0.5 / 1.5),  # a repeated token is shared once (multiset intersection)
    ("Luna", "Max", 0.0),
    ("", "Max", 0.0),
    ("the a an", "Max", 0.0),
])
def test_token_f1_uses_locomo_normalisation(answer: str, reference: str, f1: float) -> None:
    """Bugs planted: a set instead of a multiset intersection (``max max`` scored 1.0); "and" kept."""
    assert token_f1(answer, reference) == pytest.approx(f1)


def test_f1_tokens_follow_locomo_order_of_steps() -> None:
    """Commas go before punctuation ("1,240" is one token "1240"); apostrophes are removed inside words."""
    assert f1_tokens("It's 1,240 dollars, and the rest.") == ["its", "1240", "dollars", "rest"]


def test_token_f1_is_reported_but_never_decides_correctness() -> None:
    """Bug planted: a token F1 of 1.0 counted as passing continuity (``correct = pattern_correct or f1 == 1``)."""
    expect = {"must_contain_any": ["Postgres 15"], "f1_reference": "Postgres 13"}
    wrong_but_overlapping = _score("Billing runs Postgres 13 and 15? No: Postgres 13.", expect)
    right = _score("Postgres 15.", expect)
    assert right.continuity_correct is True and right.token_f1 == pytest.approx(0.5)
    exact_f1 = _score("Postgres 13", {"must_contain_any": ["Postgres 15"], "f1_reference": "Postgres 13",
                                      "canaries": []})
    assert exact_f1.token_f1 == 1.0 and exact_f1.continuity_correct is False and exact_f1.outcome == "wrong"
    assert wrong_but_overlapping.continuity_correct is False
    score = next(s for s in right.scores if s.name == "token_f1")
    assert score.passed is None and score.reason.startswith("informational, not part of correctness")


def test_token_f1_is_none_without_a_reference_or_for_an_error_sample() -> None:
    """Bug planted: token F1 of 0.0 for scenarios without a reference (they would drag every mean down)."""
    assert _score("Postgres 15", {}).token_f1 is None
    scenario = make_scenario(expect={"f1_reference": "Postgres 15"})
    assert score_sample(make_record(scenario, error=True), scenario).token_f1 is None
    assert not [s for s in _score("Postgres 15", {}).scores if s.name == "token_f1"]


def _metric(tables: dict[str, list[dict[str, Any]]], arm: str, metric: str, category: str = "all") -> dict[str, Any]:
    return next(r for r in tables["metrics"] if (r["arm"], r["metric"], r["category"]) == (arm, metric, category))


def test_token_f1_mean_per_arm_and_category_is_a_metric_outside_pairing_and_verdict() -> None:
    """Bug planted: the token F1 column averaged over every ok sample, scenarios without a reference as 0."""
    ref = make_scenario("ref-1", category="single_hop", expect={"f1_reference": "Postgres 15"})
    noref = make_scenario("noref-1")
    scored = [score_sample(make_record(ref, "Postgres 15", arm="recall"), ref),
              score_sample(make_record(ref, "It is Postgres 13", arm="history_only"), ref),
              score_sample(make_record(noref, "Postgres 15", arm="recall"), noref),
              score_sample(make_record(noref, "I don't know", arm="history_only"), noref)]
    tables = aggregate(scored)
    assert _metric(tables, "recall", "token_f1")["value"] == 1.0 and _metric(tables, "recall", "token_f1")["n"] == 1
    assert _metric(tables, "history_only", "token_f1", "single_hop")["value"] == pytest.approx(1 / 3, abs=1e-6)
    assert _metric(tables, "history_only", "token_f1", "project_fact")["value"] is None
    assert not [r for r in tables["paired"] if r["metric"] == "token_f1"]


def test_token_f1_is_no_metric_when_no_scenario_has_a_reference() -> None:
    """Bug planted: a token_f1 row (all null) in every report, also for suites without references."""
    records, scenarios = paired_run(3)
    tables = aggregate([score_sample(r, scenarios[r.scenario_id]) for r in records])
    assert not [r for r in tables["metrics"] if r["metric"] == "token_f1"]


def test_token_f1_never_gates_compare() -> None:
    """Bug planted: ``token_f1`` listed as higher-is-better in ``compare`` (an informational figure failing CI)."""
    a = {"value": 0.8, "ci_low": 0.75, "ci_high": 0.85}
    b = {"value": 0.2, "ci_low": 0.15, "ci_high": 0.25}
    assert is_regression("continuity_accuracy", a, b) is True  # the same drop gates an accuracy metric
    assert is_regression("token_f1", a, b) is False


# --- someone_else canary --------------------------------------------------------------------------------------


SUNSET = {"canaries": [{"text": "sunset", "kind": "someone_else"}, {"text": "Postgres 16", "kind": "invented"}]}


@pytest.mark.parametrize("answer", ["Postgres 15, and Caroline painted a sunset.",
                                    "Postgres 15. Not Caroline: Melanie painted the sunset."])
def test_someone_else_canary_is_an_unsupported_claim_of_its_own_kind(answer: str) -> None:
    """Bug planted: someone_else canaries filed under ``invented`` (the report could not split them)."""
    s = _score(answer, SUNSET)
    assert [(c.kind, c.text) for c in s.unsupported_claims] == [("someone_else", "sunset")]
    assert s.continuity_correct is False and s.unsupported
    assert "someone_else 'sunset'" in s.scores[0].reason


def test_someone_else_in_an_abstention_is_still_a_claim() -> None:
    """Bug planted: the adversarial trap excused when the answer also abstains (like a superseded stale value)."""
    s = _score("I have no record of Caroline painting; Melanie painted a sunset.", {**SUNSET, "must_contain_any": []},
               abstain=True, category="abstention")
    assert s.abstained is True and s.outcome == "wrong"
    assert [c.kind for c in s.unsupported_claims] == ["someone_else"]


def test_reports_split_someone_else_from_invented() -> None:
    """Bug planted: ``unsupported_by_kind`` merged both kinds into one row."""
    scored = [_score("Postgres 15 and a sunset.", SUNSET), _score("Postgres 16.", SUNSET)]
    rows = {r["kind"]: r for r in unsupported_by_kind(scored)}
    assert rows["someone_else"]["claims"] == 1 and rows["invented"]["claims"] == 1
    assert CLAIM_KINDS.index("someone_else") == CLAIM_KINDS.index("invented") + 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=60) | st.text(max_size=40))
def test_f1_tokens_of_ascii_text_are_those_of_the_character_by_character_rule(text: str) -> None:
    """The ASCII fast path drops exactly what the per-character rule drops (ASCII punctuation and symbols, Unicode P*).

    Bug planted: the fast path removing ``string.punctuation`` minus the symbols (``$`` and ``+`` kept), and one
    removing only the Unicode P* characters: both disagree with the rule on generated text.
    """
    import string
    import unicodedata

    lowered = text.replace(",", "").lower()
    kept = "".join(ch for ch in lowered if ch not in string.punctuation and not unicodedata.category(ch).startswith("P"))
    assert f1_tokens(text) == re.sub(r"\b(?:a|an|the|and)\b", " ", kept).split()
