"""``harness.score.superseded``: when a stale value is mentioned as superseded, tested on the rule itself.

The scorer's tests (``test_scoring.py``) reach this module through whole answers; these pin its parts
alone: the cue patterns' builder (run once at import, where a scorer test cannot see it), the sentence
a cue must share with the value, and the occurrence finder.
"""

from __future__ import annotations

import re

import pytest

from harness.score.superseded import _alternation, is_superseded_mention, occurrences


def _superseded(text: str, value: str) -> bool:
    start = text.index(value)
    return is_superseded_mention(text, start, start + len(value))


def test_cue_alternatives_are_tried_longest_first() -> None:
    """Longest first, ties in the order given: "used to be" is tried before "used to", so a match spans the whole cue."""
    assert _alternation(("to", "used to be", "not")) == r"used\s+to\s+be|not|to"
    assert _alternation(("b", "aa", "c")) == "aa|b|c"
    assert re.match(_alternation(("used to", "used to be")), "used to be 5433").group() == "used to be"


def test_a_cue_of_several_words_matches_any_whitespace_between_them() -> None:
    pattern = re.compile(rf"^(?:{_alternation(('no longer', 'instead of'))})$")
    assert all(pattern.match(text) for text in ("no longer", "no  longer", "instead\nof"))
    assert not pattern.match("nolonger")


def test_cue_words_are_matched_literally() -> None:
    pattern = re.compile(rf"^(?:{_alternation(('->', 'a.b'))})$")
    assert pattern.match("->") and pattern.match("a.b") and not pattern.match("axb")


@pytest.mark.parametrize("text", ["not 5433; use 5432", "previously 5433, now 5432", "之前的端口是5433，现在是5432"])
def test_a_cue_at_the_very_start_of_the_answer_counts(text: str) -> None:
    assert _superseded(text, "5433")


@pytest.mark.parametrize("text", ["the port is 5433. it was 5432 previously.", "端口是5433。之前是5432。",
                                  "the port is 5433; 5432 is no longer used"])
def test_a_cue_in_the_next_sentence_does_not_excuse_the_value(text: str) -> None:
    assert not _superseded(text, "5433")


def test_from_needs_a_change_verb_in_the_same_sentence() -> None:
    assert _superseded("it moved from eu-west-1 to eu-central-1", "eu-west-1")
    assert not _superseded("deploy from eu-west-1", "eu-west-1")
    assert not _superseded("we moved. deploy from eu-west-1", "eu-west-1")  # the verb is in another sentence


def test_occurrences_finds_every_occurrence_in_order() -> None:
    assert occurrences("a 5433, b 5433, c 5433", "5433") == [(2, 6), (10, 14), (18, 22)]


def test_occurrences_include_overlapping_ones() -> None:
    assert occurrences("aaa", "aa") == [(0, 2), (1, 3)]
    assert occurrences("abab ab", "ab") == [(0, 2), (2, 4), (5, 7)]


def test_occurrences_of_an_empty_or_absent_needle_are_none() -> None:
    assert occurrences("abc", "") == [] and occurrences("abc", "x") == []


@pytest.mark.parametrize(("text", "value"), [
    ("formats with ruff format; black and isort were removed.", "isort"),
    ("shared passwords are in bitwarden; lastpass was cancelled.", "lastpass"),
    ("use the 12s timeout (the 30s default has been dropped)", "30s"),
    ("retention is 14 days again (the 30-day setting was reverted over storage cost)", "30-day"),
    ("the app is on react native 0.73.6; we rolled back from 0.74.1 after hermes crashes", "0.74.1"),
    ("the upgrade to 0.74.1 has been rolled back, pin 0.73.6", "0.74.1"),
    ("plan n = 164 in total (corrected from n = 120)", "n = 120"),
    ("the meeting id is 381 552 970; 381 552 907 was corrected", "381 552 907"),
    ("meeting id 381 552 970 (381 552 907 was a typo)", "381 552 907"),
])
def test_a_value_said_to_be_removed_cancelled_reverted_or_corrected_is_superseded(text: str, value: str) -> None:
    """The acceptance runs scored "black and isort were removed" as claiming isort (upd-010, upd-016), and "the
    30-day setting was reverted" as claiming 30 days (upd-045)."""
    assert _superseded(text, value)


def test_a_removal_cue_binds_only_to_the_value_it_follows() -> None:
    text = "the team uses lastpass. the bitwarden trial was cancelled."
    assert not _superseded(text, "lastpass")
    assert _superseded(text, "bitwarden trial")


def test_a_revert_cue_binds_only_to_the_value_it_concerns() -> None:
    """"Reverted to X" names the value in force; the stale value of another sentence stays a claim."""
    text = "logs are kept 30 days. the change was reverted to 14 days."
    assert not _superseded(text, "30 days")
    assert not _superseded("we reverted to 0.73.6 and deploy 0.74.1 builds", "0.74.1")


@pytest.mark.parametrize(("text", "value"), [
    ("send it via gcash to ate joy's number, no longer through palawan express.", "palawan express"),
    ("payments go via stripe now, not via the old paypal account", "paypal"),
    ("use gcash; it no longer goes through palawan express", "palawan express"),
    ("the invoices are not sent via paypal any more", "paypal"),
])
def test_a_channel_after_through_via_or_goes_is_bound_to_its_cue(text: str, value: str) -> None:
    """The acceptance audit scored "no longer through Palawan Express" as claiming the old channel (ml-035); "no longer goes through" too."""
    assert _superseded(text, value)


def test_through_or_via_alone_marks_nothing_superseded() -> None:
    assert not _superseded("send it through palawan express, as usual", "palawan express")
    assert not _superseded("it goes through palawan express", "palawan express")


@pytest.mark.parametrize("text", [
    "the kita fee is 310 euros a month, up from the provisional 280.",
    "the fee is 310 euros (was 280).",
    "pay 310 euros instead of the provisional 280.",
    "it came down from the estimated 280 to 250.",
])
def test_a_provisional_value_named_as_replaced_is_superseded(text: str) -> None:
    """upd-047's right answers named the provisional fee as replaced ("up from", "(was 280)", "instead of the
    provisional 280") and were counted as claiming it."""
    assert _superseded(text, "280")


@pytest.mark.parametrize("text", ["the fee was 280 euros.", "the fee is 280 (provisional).", "the fee went up 280 euros."])
def test_a_bare_was_or_up_before_a_value_still_claims_it(text: str) -> None:
    assert not _superseded(text, "280")
