"""Abstention detection on labelled final answers (tests/score/abstention_cases.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.offline_model._policy import ABSTAIN_ANSWER
from harness.score.abstention import AbstentionCue, abstention_reason, find_abstention, is_abstention
from harness.score.scoring import score_sample
from tests.score.scoring_factories import make_record, make_scenario

_CASES = yaml.safe_load((Path(__file__).parent / "abstention_cases.yaml").read_text(encoding="utf-8"))["cases"]


def test_labelled_set_is_large_and_balanced():
    abstaining = sum(1 for case in _CASES if case["abstain"])
    assert len(_CASES) >= 80 and abstaining >= 40 and len(_CASES) - abstaining >= 40
    assert len({case["id"] for case in _CASES}) == len(_CASES)


@pytest.mark.parametrize("case", _CASES, ids=[case["id"] for case in _CASES])
def test_labelled_answer_is_classified_as_labelled(case):
    assert is_abstention(case["text"]) is case["abstain"], abstention_reason(case["text"])


def test_offline_model_abstention_phrase_is_detected():
    assert is_abstention(ABSTAIN_ANSWER)


def test_empty_or_missing_answer_is_not_an_abstention_cue():
    assert not is_abstention("") and not is_abstention(None) and abstention_reason(None) is None


def test_reason_names_the_sentence_and_the_cue():
    assert abstention_reason("Let me check. I couldn't find it.") == 'sentence 2: "i couldn\'t find" (unable)'


def test_hedge_counts_only_in_the_lead_sentence():
    assert find_abstention("I'm not sure. It might be 8081.").hedge is True  # type: ignore[union-attr]
    assert not is_abstention("It's 8081. I'm not sure whether staging uses the same port.")


def test_preamble_question_does_not_become_the_lead_sentence():
    assert is_abstention("Which font? Not sure, it never came up.")


def test_quoted_text_is_not_the_agents_claim():
    assert not is_abstention('You said: "I don\'t know the port yet." Then you set PORT=8081.')
    assert is_abstention('I searched for "staging host" and found nothing.')


def test_conditional_clause_negation_is_not_an_abstention():
    assert not is_abstention("If no record exists, the webhook is processed once.")
    assert is_abstention("If you mean billing staging, I don't have its host.")


def test_partial_hedge_after_a_full_answer_counts_as_answered():
    assert not is_abstention("It's Postgres 15. I'm not sure about the second part.")
    assert is_abstention("I'm not sure about the second part.")  # the lead sentence itself abstains


def test_world_claim_that_a_value_is_undecided_is_not_an_abstention():
    assert not is_abstention("Hosting for the dashboard is undecided; IT has to approve it first.")


def test_scored_reason_names_the_abstention_cue():
    sc = make_scenario(abstain=True, category="abstention")
    s = score_sample(make_record(sc, "Nothing in my notes covers it."), sc)
    reason = next(x.reason for x in s.scores if x.name == "abstained")
    assert s.outcome == "abstained_correctly" and '"nothing in my notes"' in reason


def test_new_phrasing_abstention_on_unanswerable_is_correct():
    sc = make_scenario(abstain=True, category="abstention")
    s = score_sample(make_record(sc, "I don't have the billing staging hostname."), sc)
    assert s.abstained is True and s.continuity_correct is True


def test_trap_answer_on_unanswerable_is_still_scored_as_answering():
    sc = make_scenario(abstain=True, category="abstention")
    s = score_sample(make_record(sc, "No record is kept of retries, so the job retries 8 times."), sc)
    assert s.abstained is False and s.outcome == "wrong"


def test_always_abstaining_in_new_phrasings_cannot_win_on_answerable():
    sc = make_scenario()
    for text in ("That isn't recorded anywhere I can see.", "没有找到相关记录。", "You haven't told me."):
        s = score_sample(make_record(sc, text), sc)
        assert s.outcome == "abstained_wrongly" and s.continuity_correct is False


def test_cue_start_lookahead_changes_no_result():
    from harness.score import abstention

    plain = abstention._named(abstention.STRONG_CUES, start="")
    for case in _CASES:
        for sentence in abstention._sentences(abstention._normalize(case["text"])):
            fast, slow = abstention._STRONG_RE.search(sentence), plain.search(sentence)
            assert (fast and fast.span()) == (slow and slow.span()), sentence


def test_but_no_record_of_is_an_abstention_cue():
    assert abstention_reason("I have 2 notes but no record of the date.") == 'sentence 1: "no record" (no record)'
    assert not is_abstention("We compress the logs but no information is lost.")


@pytest.mark.parametrize(("answer", "kept"), [
    ("No, you never mentioned that.", "no,"),                       # a leading answer is its own clause
    ("I don't know \u2014 I have no record of that.", ""),            # every clause abstains
    ("I have 2 notes but no record of the date.", ""),              # one clause: all of it abstains
    ("It's Postgres 15, but I don't know the minor version.", "it's postgres 15,"),
    ("I don't have it saved, but it's Postgres 15.", "but it's postgres 15."),
    ("I'm not sure, but I think it's Postgres 15.", "i'm not sure, but i think it's postgres 15."),  # hedges stay
    ("Let me check. I couldn't find it. It may be in the wiki.", "let me check. it may be in the wiki."),
    ("I, honestly, don't know.", ""),                               # a cue across clauses: the whole sentence
    ('The file says "I don\'t know" twice.', 'the file says "i don\'t know" twice.'),  # quotes are not cues
    ("Billing runs Postgres 15.", "billing runs postgres 15."),
    # a sentence's clauses end at its own end: the next sentence's abstention clause does not take "sorry." along
    ("I don't know, sorry. I have no record of it, but it is Postgres 15.", "sorry. but it is postgres 15."),
    # quoted text is no object of "have" here either, as in find_abstention
    ('I don\'t have "the staging key".', 'i don\'t have "the staging key".'),
])
def test_outside_abstention_removes_only_the_abstention_clauses(answer, kept):
    from harness.score.abstention import ABSTENTION_GAP, outside_abstention

    remainder = outside_abstention(answer)
    assert " ".join(remainder.replace(ABSTENTION_GAP.strip(), " ").split()) == kept


def test_removed_clause_leaves_a_gap_words_cannot_match_across():
    from harness.score.abstention import outside_abstention
    from harness.score.matching import contains

    assert not contains(outside_abstention("Postgres, I don't know which version, 15 maybe"), "postgres 15")


def test_reason_quotes_the_cue_words_without_the_punctuation_that_starts_the_cue():
    assert abstention_reason("Well, no record of that.") == 'sentence 1: "no record" (no record)'
    assert find_abstention("Well, no record of that.").text == "no record"


def test_a_strong_cue_is_reported_as_no_hedge_and_a_hedge_as_one():
    assert find_abstention("I don't know.") == AbstentionCue("not know", "i don't know", 1, hedge=False)
    assert find_abstention("If you mean staging, I'm not sure.") == \
        AbstentionCue("not sure", "i'm not sure", 1, hedge=True)


def test_reason_names_the_sentence_of_a_hedge_and_of_a_cue_after_a_condition():
    assert abstention_reason("Let me check. I'm not sure which port it is.") == \
        "sentence 2: \"i'm not sure\" (hedge: not sure)"
    assert abstention_reason("Let me check. If it was changed, I don't know to what.") == \
        "sentence 2: \"i don't know\" (not know)"


def test_a_hedge_in_a_lead_sentence_with_a_condition_still_abstains_but_stays_in_the_stated_text():
    from harness.score.abstention import outside_abstention

    assert is_abstention("If you mean staging, I'm not sure.")
    answer = "If you mean staging, I'm not sure, but it may be 5432."
    assert outside_abstention(answer) == "if you mean staging, i'm not sure, but it may be 5432."
    # a strong cue inside the condition ("you never told me") is no cue; the hedge outside it is kept as stated text
    hedged = "If you never told me the port, I'm not sure which one, maybe 5432."
    assert outside_abstention(hedged) == "if you never told me the port, i'm not sure which one, maybe 5432."


def test_typographic_apostrophes_and_runs_of_spaces_read_as_plain_ones():
    assert abstention_reason("I don\u2018t know.") == 'sentence 1: "i don\'t know" (not know)'
    assert abstention_reason("I don\u2019t know.") == 'sentence 1: "i don\'t know" (not know)'
    assert abstention_reason("I don't  \t know.") == 'sentence 1: "i don\'t know" (not know)'
