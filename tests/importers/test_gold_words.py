"""Gold words no answer would write: glued words and misspellings, told from ordinary words by wordfreq's list."""

from __future__ import annotations

import pytest

from harness.importers.gold_words import english_word, glued_words, misspellings

#: Words of a conversation in which each ordinary word below also splits into two of its words.
WORDS = {"sun", "day", "some", "what", "cork", "board", "shine", "blue", "berry", "film", "maker", "per", "form",
         "watching", "movies", "street", "fighter", "he", "knows", "and", "how", "his", "video", "of", "self"}


@pytest.mark.parametrize("word", ["sunday", "Somewhat", "corkboard", "Sunshine", "blueberry", "filmmaker", "perform"])
def test_an_ordinary_english_word_is_not_glued_though_it_splits_into_two_words_of_the_conversation(word: str) -> None:
    """Bug planted: the word list ignored (the old rule: absent from the conversation, two of its words): the seven
    ordinary words LoCoMo's audit flagged, e.g. 'filmmaker' (written apart: 'film maker'), came back."""
    assert english_word(word)
    assert glued_words(f"She is a {word}.", WORDS) == []
    assert misspellings(f"She is a {word}.", WORDS) == []


def test_words_run_together_are_glued_whatever_their_length() -> None:
    text = "watchingmovies, heknows andhow ofself hisvideo"
    assert glued_words(text, WORDS) == [("watchingmovies", "watching movies"), ("heknows", "he knows"),
                                        ("andhow", "and how"), ("ofself", "of self"), ("hisvideo", "his video")]


def test_two_capitalised_words_run_together_are_glued_even_when_the_list_knows_the_compound() -> None:
    """``streetfighter`` is in wordfreq's list (a web spelling); ``StreetFighter`` still shows where the space was."""
    assert english_word("streetfighter")
    assert glued_words("StreetFighter", WORDS) == [("StreetFighter", "Street Fighter")]
    assert glued_words("Streetfighter", WORDS) == []


def test_a_misspelled_gold_is_labelled_with_the_spelling_an_answer_would_use() -> None:
    """Bug planted: corrections taken only from the conversation and the month names: 'inpsiring' (LoCoMo conv-43
    q062, whose conversation never writes 'inspiring') went unreported."""
    assert misspellings("21Janury, 2022", {"2022"}) == [("21Janury", "21 January")]
    assert misspellings("an inpsiring book", set()) == [("inpsiring", "inspiring")]
    assert misspellings("Januarty 5", set()) == [("Januarty", "January")]
    assert misspellings("one-on-one metoring", {"mentoring", "one"}) == [("metoring", "mentoring")]
    assert glued_words("21Janury, 2022", {"2022"}) == []  # one finding, the misspelling


def test_glued_words_are_never_called_misspellings_of_a_word_one_edit_away() -> None:
    """``andhow`` is one edit from ``anyhow``, but it is ``and how`` run together."""
    assert misspellings("andhow", WORDS) == [] and glued_words("andhow", WORDS) == [("andhow", "and how")]


def test_a_word_the_conversation_writes_or_a_rare_word_one_edit_from_nothing_common_is_no_finding() -> None:
    assert misspellings("Pixel loves Mochi", {"pixel", "mochi", "loves"}) == []
    assert misspellings("Zyxwvut", set()) == []  # no common word one edit away: not called a misspelling
    assert misspellings("cats", set()) == []  # shorter than five letters: left alone
