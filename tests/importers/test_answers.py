"""Gold answers as checks (``harness/importers/answers.py``), on golds as LoCoMo and LongMemEval write them.

The broad behaviours (dates in every order, lists, salient words, alternatives)
are in ``test_common.py``; these pin the rules' edges: which words and dates
are recognised, the exact variants and groups written into a suite, and what
each layer does on its own.
"""

from __future__ import annotations

import datetime as dt

from harness.importers.answers import (
    alternatives,
    answer_check,
    gold_text,
    is_short,
    list_parts,
    salient_groups,
    unglue_dates,
    unusable_gold,
    variants,
)
from tests.importers.importer_fixtures import passes

# --- the gold as text -------------------------------------------------------------------------------------------


def test_a_final_full_stop_after_a_space_goes_with_the_space() -> None:
    assert gold_text("Lake Tahoe .") == "Lake Tahoe"


def test_an_ellipsis_is_part_of_the_gold_not_a_full_stop() -> None:
    assert gold_text("I am not sure...") == "I am not sure..."
    assert gold_text("Wait..") == "Wait.."


def test_a_value_of_any_other_type_is_unusable_and_named_by_its_type() -> None:
    """Benchmark files are JSON, but a caller may pass anything (a YAML loader's date, a tuple): the reason names it."""
    assert unusable_gold(dt.date(2023, 5, 7)) == "a date"
    assert unusable_gold((7, "days")) == "a tuple"


# --- glued dates ------------------------------------------------------------------------------------------------


def test_an_abbreviated_month_glued_to_a_number_is_spaced_with_or_without_its_full_stop() -> None:
    assert unglue_dates("15Apr 2023") == "15 Apr 2023" and unglue_dates("Sept2023") == "Sept 2023"
    assert unglue_dates("9Apr. 2023") == "9 Apr. 2023" and unglue_dates("Sept.2023") == "Sept. 2023"


def test_a_word_that_only_starts_like_a_month_keeps_its_glued_number() -> None:
    assert unglue_dates("#Marathon2023") == "#Marathon2023"
    assert unglue_dates("Octopus8 and May2023") == "Octopus8 and May 2023"


# --- dates ------------------------------------------------------------------------------------------------------


def test_a_month_year_gold_with_a_long_month_name_gives_its_variants() -> None:
    assert variants("August 2023") == ["August 2023", "August, 2023", "2023-08"]
    assert variants("December 2022") == ["December 2022", "December, 2022", "2022-12"]


def test_a_word_that_only_starts_like_a_month_is_no_date() -> None:
    """``Mayor 2020`` is no May 2020 and ``Marathon 2023`` no March 2023: a month is a month's name or abbreviation."""
    assert variants("Mars 2020") == ["Mars 2020"] and variants("Augusta 2023") == ["Augusta 2023"]
    assert not passes("the May 2020 election", answer_check("the Mayor 2020 election"))
    check = answer_check("She ran the Boston Marathon 2023 in under four hours")
    assert passes("She ran the Boston Marathon 2023 in under 4 hours.", check)
    assert not passes("She ran in Boston in March 2023, in under four hours.", check)
    assert variants("7 Sept. 2023")[1] == "7 September 2023" and variants("Jun. 2023")[1] == "June 2023"


def test_a_month_year_after_a_full_date_is_its_own_group() -> None:
    check = answer_check("She lived in Boston from 7 May 2023 until June 2024")
    assert check["must_contain_groups"][:2] == [
        ["7 May 2023", "May 7, 2023", "May 7 2023", "7 May, 2023", "2023-05-07"],
        ["June 2024", "June, 2024", "2024-06"]]
    assert passes("From May 7, 2023 until 2024-06 she lived in Boston.", check)


def test_the_variants_of_a_rewritten_date_start_with_the_gold_as_written() -> None:
    assert variants("May 7, 2023")[:2] == ["May 7, 2023", "7 May 2023"]
    assert variants("on 9 April, 2023") == [  # the gold with each form of its date, then the date alone in each form
        "on 9 April, 2023", "on 9 April 2023", "on April 9, 2023", "on April 9 2023", "on 2023-04-09",
        "9 April, 2023", "9 April 2023", "April 9, 2023", "April 9 2023", "2023-04-09"]


# --- relative dates ---------------------------------------------------------------------------------------------


def test_a_weekday_before_a_date_later_in_the_week_counts_back_across_the_weekend() -> None:
    # 25 May 2023 is a Thursday: the Sunday before is 21 May
    check = answer_check("The Sunday before 25 May 2023")
    assert "May 21, 2023" in check["must_contain_any"] and passes("It was on 21 May 2023.", check)
    assert not passes("It was on 20 May 2023.", check)


def test_the_same_weekday_before_or_after_a_date_is_a_week_away() -> None:
    # 15 July 2023 is a Saturday
    assert "8 July 2023" in answer_check("the Saturday before 15 July 2023")["must_contain_any"]
    assert "22 July 2023" in answer_check("the Saturday after 15 July 2023")["must_contain_any"]
    assert not passes("7 July 2023", answer_check("the Saturday before 15 July 2023"))
    assert not passes("23 July 2023", answer_check("the Saturday after 15 July 2023"))


def test_a_weekday_before_a_month_names_no_day_so_the_check_asks_for_the_month_and_the_weekday() -> None:
    assert answer_check("The Sunday before June 2023") == {
        "must_contain_groups": [["June 2023", "June, 2023", "2023-06"], ["Sunday"]]}
    assert answer_check("the day after August 2023") == {
        "must_contain_groups": [["August 2023", "August, 2023", "2023-08"], ["day"]]}


# --- numbers ----------------------------------------------------------------------------------------------------


def test_a_number_past_twenty_has_no_word_form() -> None:
    assert variants("20") == ["20", "twenty"] and variants("21") == ["21"]


# --- articles ---------------------------------------------------------------------------------------------------


def test_a_leading_article_adds_the_gold_without_it_after_the_gold_itself() -> None:
    assert variants("the Golden Gate Bridge") == ["the Golden Gate Bridge", "Golden Gate Bridge"]
    assert variants("a trip to Paris") == ["a trip to Paris", "trip to Paris"]


# --- short golds and lists --------------------------------------------------------------------------------------


def test_a_date_alone_is_a_short_gold() -> None:
    assert is_short("May 7, 2023") and is_short("2023-05-07") and is_short("7th May, 2023")


def test_a_gold_of_exactly_four_words_is_matched_whole() -> None:
    assert is_short("the Golden Gate Bridge") and not is_short("a walk over the Golden Gate Bridge")
    assert answer_check("a trip to Paris") == {"must_contain_any": ["a trip to Paris", "trip to Paris"]}


def test_a_list_with_a_serial_comma_drops_the_and_of_its_last_part() -> None:
    assert list_parts("pottery, camping, and painting") == ["pottery", "camping", "painting"]
    assert list_parts("Sweden; Canada; or Peru") == ["Sweden", "Canada", "Peru"]


def test_list_parts_of_exactly_four_words_are_parts_and_five_are_not() -> None:
    assert list_parts("camping at the beach, pottery") == ["camping at the beach", "pottery"]
    assert list_parts("camping at the sunny beach, pottery") is None


def test_a_lone_and_splits_a_gold_only_for_a_list_answer() -> None:
    assert answer_check("Pottery and camping") == {"must_contain_any": ["Pottery and camping"]}
    assert answer_check("Pottery and camping", list_answer=True) == {"must_contain_groups": [["Pottery"], ["camping"]]}


# --- long golds -------------------------------------------------------------------------------------------------


def test_a_long_gold_keeps_its_longest_content_words_in_the_gold_s_order() -> None:
    # "struggle" (8) and the first two six-letter words: "people" before "mental" and "health" ("wanted" is a stop word)
    assert salient_groups("She wanted to help people who struggle with mental health") == [
        ["people"], ["struggle"], ["mental"]]
    assert salient_groups("Melanie painted a sunset over Lake Tahoe") == [["Melanie"], ["painted"], ["sunset"]]


def test_a_three_letter_content_word_of_a_long_gold_is_salient() -> None:
    assert salient_groups("She bought a red car") == [["bought"], ["red"], ["car"]]


def test_each_number_in_a_long_gold_is_a_group_with_its_word_form() -> None:
    assert salient_groups("She has 3 kids and two dogs at home") == [
        ["3", "three"], ["two", "2"], ["kids"], ["dogs"], ["home"]]
    # a number word is a number group, never also a content word
    assert salient_groups("She has been to Paris two times") == [["two", "2"], ["Paris"], ["times"]]


def test_a_grouped_number_in_a_long_gold_is_a_group_with_and_without_its_separators() -> None:
    assert salient_groups("She paid $25,000 for the car in cash") == [["25,000", "25000"], ["paid"], ["car"], ["cash"]]
    assert passes("She paid $25000 in cash for that car.", answer_check("She paid $25,000 for the car in cash"))


def test_dates_and_numbers_leave_no_word_behind_in_a_range() -> None:
    """A range written with a hyphen (``9 June 2023-12 June 2023``, ``$20,000-$25,000``) leaves only its words."""
    assert salient_groups("She was in Paris from 9 June 2023-12 June 2023") == [
        ["9 June 2023", "June 9, 2023", "June 9 2023", "9 June, 2023", "2023-06-09"],
        ["12 June 2023", "June 12, 2023", "June 12 2023", "12 June, 2023", "2023-06-12"], ["Paris"]]
    assert salient_groups("a budget of $20,000-$25,000 for the car") == [
        ["20,000", "20000"], ["25,000", "25000"], ["budget"], ["car"]]


def test_a_long_gold_of_stop_words_only_is_matched_whole() -> None:
    assert answer_check("Not that I know of") == {"must_contain_any": ["Not that I know of"]}


# --- alternatives -----------------------------------------------------------------------------------------------


def test_an_alternative_that_starts_with_a_capital_is_an_alternative() -> None:
    assert alternatives("Spanish. Catalan is also acceptable.") == ["Spanish", "Catalan"]


def test_a_main_answer_of_several_sentences_is_kept_whole_before_its_alternatives() -> None:
    assert alternatives("2 hours. The commute takes 2 hours each way. 4 hours is also acceptable.") == [
        "2 hours. The commute takes 2 hours each way", "4 hours"]


def test_an_empty_gold_has_no_alternatives() -> None:
    assert alternatives("") == [] and alternatives(None) == []


def test_alternatives_that_are_not_each_one_phrase_give_the_main_answer_s_check() -> None:
    check = answer_check("She moved to Boston for a new job. Cambridge is also acceptable.")
    assert check == {"must_contain_groups": [["moved"], ["Boston"], ["new"]]}


def test_a_list_answer_s_alternatives_are_split_as_lists_too() -> None:
    gold = "Pottery and camping. Painting and camping are also acceptable."
    assert answer_check(gold, list_answer=True) == {"must_contain_groups": [["Pottery"], ["camping"]]}
    assert answer_check(gold) == {"must_contain_any": ["Pottery and camping", "Painting and camping"]}
