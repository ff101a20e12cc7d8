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


def test_a_number_glued_to_a_word_is_spaced_unless_an_ordinal_a_unit_or_written_so_by_the_conversation() -> None:
    """``3dogs`` is ``3 dogs`` when the conversation writes ``dogs``; ``2nd``, ``3pm`` (in any case), a word the
    conversation does not write, and a glued form the conversation itself writes (``4runner``) stay as they are."""
    from harness.importers.gold_words import unglue_digits

    words = {"dogs", "place", "pm", "runner", "4runner", "2"}
    assert unglue_digits("3dogs and 2nd place at 3pm", words) == "3 dogs and 2nd place at 3pm"
    assert unglue_digits("3Dogs at 3PM, 2ND place", words) == "3 Dogs at 3PM, 2ND place"
    assert unglue_digits("a 4runner, 12cats and 2dogs", words) == "a 4runner, 12cats and 2 dogs"
    assert unglue_digits("at 60MPH", {"mph"}) == "at 60MPH"  # a unit of three letters, upper case


def test_a_number_glued_to_a_word_is_a_finding_whether_or_not_the_word_is_in_the_list() -> None:
    """``15April`` (LoCoMo writes dates so), ``12Zyxwvut`` (no word one edit away: not a misspelling) are glued; the
    ordinals and units before them, in any case, are not, and neither is a glued form the conversation writes."""
    assert glued_words("on the 2nd, at 3PM: 15April", {"april", "15"}) == [("15April", "15 April")]
    assert glued_words("room 12Zyxwvut", set()) == [("12Zyxwvut", "12 Zyxwvut")]
    assert glued_words("a 4runner", {"4runner", "runner"}) == []


def test_a_compound_the_conversation_writes_or_a_short_word_or_a_capital_inside_one_word_is_not_glued() -> None:
    """The conversation writing ``StreetFighter`` makes it its word; words under six letters (``andhe``) are left
    alone; ``McDonalds`` has a capital inside but is one word of the list."""
    assert glued_words("StreetFighter", WORDS | {"streetfighter"}) == []
    assert glued_words("andhe", WORDS) == []
    assert glued_words("We met at McDonalds", WORDS) == []


def test_every_glued_word_of_a_text_is_found_after_words_that_are_not() -> None:
    text = "I like watchingmovies, StreetFighter and hisvideo"
    assert glued_words(text, WORDS) == [("watchingmovies", "watching movies"), ("StreetFighter", "Street Fighter"),
                                        ("hisvideo", "his video")]


def test_a_glued_word_splits_into_two_words_of_two_letters_or_more_both_written() -> None:
    """``helloi``/``ihello`` would need a one-letter part; ``watchingzorbs`` has only one part the conversation writes."""
    words = {"hello", "i", "watching"}
    assert glued_words("helloi ihello watchingzorbs", words) == []


def test_a_plural_or_past_form_of_a_word_the_conversation_writes_is_not_glued() -> None:
    """The conversation writes ``moviebuff``: the gold's ``moviebuffs`` is its plural, not ``movie buffs`` glued."""
    assert glued_words("moviebuffs", {"moviebuff", "movie", "buffs"}) == []
    assert glued_words("moviebuffs", {"movie", "buffs"}) == [("moviebuffs", "movie buffs")]


def test_a_misspelling_is_one_edit_anywhere_in_the_word_the_last_letters_included() -> None:
    assert misspellings("Decembe 5", set()) == [("Decembe", "December")]  # a letter dropped at the end
    assert misspellings("Januayr 5", set()) == [("Januayr", "January")]  # the last two letters swapped
    assert misspellings("Janusry 5", set()) == [("Janusry", "January")]  # a letter changed


def test_a_misspelling_needs_five_letters_all_of_them_letters() -> None:
    assert misspellings("Mrach 3", set()) == [("Mrach", "March")]  # five letters: checked
    assert misspellings("Jnue 3", set()) == []  # four: left alone, though one swap from June
    assert misspellings("Jan2uary", set()) == []


def test_a_misspelled_word_of_the_conversation_is_corrected_to_it_and_only_to_words_of_the_list() -> None:
    """``Bergmao``: the conversation writes ``Bergamo`` (a rare word), which beats the commoner ``Bergman``; a name
    the conversation writes that is not in the list (``qwixle``) is no correction, nor a rare word it does not write."""
    assert misspellings("Bergmao", {"bergamo"}) == [("Bergmao", "Bergamo")]
    assert misspellings("Qwixlee", {"qwixle"}) == []
    assert misspellings("Byrgamo", set()) == []  # only 'bergamo' (Zipf 2.3) is one edit away: too rare to offer


def test_with_several_words_one_edit_away_the_commonest_is_offered() -> None:
    """``braed``: ``brand`` (Zipf 4.8) before ``bread`` (4.5) and ``braid`` (3.2), among the conversation's words and
    among common words alike; a word at exactly the common bar (``amazement``, Zipf 3.0) is common."""
    assert misspellings("braed", {"bread", "brand", "braid"}) == [("braed", "brand")]
    assert misspellings("braed", set()) == [("braed", "brand")]
    assert misspellings("amazemnt", set()) == [("amazemnt", "amazement")]


def test_normalize_folds_case_width_quotes_and_spaces_as_the_scorer_does() -> None:
    from harness.importers.gold_words import normalize

    assert normalize("Hello   World\n") == "hello world"
    assert normalize("Ｃafé  it\u2019s \u2018x") == "café it's 'x"


def test_a_unit_of_three_letters_or_more_glued_to_a_number_in_any_case_is_not_glued_nor_stops_the_search() -> None:
    """``60MPH``, ``10mins`` are how numbers are written; a glued word after them is still found."""
    assert glued_words("at 60MPH for 10mins on 15April", {"april"}) == [("15April", "15 April")]
