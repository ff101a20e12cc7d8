"""The baseline extractor (``harness/importers/extract.py``): how turns are cut into items and which keys they get.

The broad rules (entities then frequent words, the cap, sentence cuts that
lose no text) are in ``test_common.py``; these pin the edges: a chunk filled
exactly to its limit, blank lines, the key length limit on both sides, and
what the store refuses, each layer on its own.
"""

from __future__ import annotations

from harness.importers.extract import MAX_KEY_CHARS, MAX_KEYS, fact_chunks, keys_for, quoted_pieces, storable_key

FAMILY = "\U0001F469\u200d\U0001F469\u200d\U0001F467"
"""The family emoji: three emoji joined by zero-width joiners, which the store refuses in a key."""

# --- cutting a turn into items ----------------------------------------------------------------------------------


def test_a_blank_turn_gives_no_item() -> None:
    assert fact_chunks("") == [] and fact_chunks("  \n ") == []


def test_a_turn_of_exactly_the_limit_is_kept_as_written() -> None:
    assert fact_chunks("Line one\nLine two", limit=17) == ["Line one\nLine two"]


def test_a_chunk_is_filled_up_to_the_limit_and_never_past_it() -> None:
    assert fact_chunks("Aaaa. Bbbb. Cccc.", limit=11) == ["Aaaa. Bbbb.", "Cccc."]  # 5 + 1 + 5 = 11 fits
    assert fact_chunks("Aaaa. Bbbb. Cccc.", limit=10) == ["Aaaa.", "Bbbb.", "Cccc."]  # 11 does not


def test_a_short_sentence_before_an_overlong_one_is_its_own_chunk() -> None:
    assert fact_chunks("Sure. " + "x" * 450, limit=200) == ["Sure.", "x" * 200, "x" * 200, "x" * 50]
    assert fact_chunks("Sure. " + "x" * 250 + " Done.", limit=200) == ["Sure.", "x" * 200, "x" * 50 + " Done."]


def test_a_blank_line_holding_spaces_does_not_end_the_turn() -> None:
    """Assistant turns in LongMemEval are markdown: a line of spaces between paragraphs is not the end of the text."""
    text = "Here is your packing list:\n \n- hiking boots\n- rain jacket\n \nHave a great trip!"
    assert fact_chunks(text, limit=40) == ["Here is your packing list:", "- hiking boots - rain jacket",
                                           "Have a great trip!"]


# --- keys -------------------------------------------------------------------------------------------------------


def test_a_given_name_found_again_in_the_text_is_one_key() -> None:
    keys = keys_for("Melanie took her kids camping with Caroline", entities=("Melanie", "Caroline"))
    assert [k["key"] for k in keys if k.get("type") == "entity"] == ["Melanie", "Caroline"]


def test_a_word_of_exactly_the_key_limit_is_a_key_and_one_letter_more_is_refused() -> None:
    longest = "ha" * (MAX_KEY_CHARS // 2)
    refused: list[str] = []
    assert {"key": longest, "origin": "deterministic"} in keys_for(f"She laughed {longest}", refused=refused)
    assert refused == []
    over = longest + "h"
    assert keys_for(f"She laughed {over}", refused=refused) == [{"key": "laughed", "origin": "deterministic"}]
    assert refused == [over]


def test_a_given_name_the_store_refuses_is_left_out_and_reported() -> None:
    refused: list[str] = []
    keys = keys_for("Caroline went to the support group", entities=("Caroline\u200b",), refused=refused)
    assert refused == ["Caroline\u200b"] and all("\u200b" not in k["key"] for k in keys)


def test_a_refused_name_and_a_refused_word_are_both_reported() -> None:
    refused: list[str] = []
    over = "ha" * MAX_KEY_CHARS
    keys_for(f"Caroline laughed {over}", entities=("Caroline\u200b",), refused=refused)
    assert refused == ["Caroline\u200b", over]


def test_names_and_words_together_stay_within_the_key_cap() -> None:
    text = ("Melanie and Caroline went camping near Lake Tahoe with Oscar; hiking, swimming, fishing, kayaking, "
            "climbing, cooking, singing, reading, painting, running, biking")
    keys = keys_for(text)
    assert len(keys) == MAX_KEYS
    assert [k["key"] for k in keys if k.get("type") == "entity"] == ["Caroline", "Lake Tahoe", "Oscar"]


def test_a_turn_whose_only_word_the_store_refuses_gets_the_key_conversation() -> None:
    assert not storable_key(FAMILY) and storable_key("conversation")
    assert keys_for(FAMILY) == [{"key": "conversation", "origin": "deterministic"}]
    assert keys_for("\U0001F44D") == [{"key": "\U0001F44D", "origin": "deterministic"}]  # a thumbs-up is a key


def test_a_key_the_store_refuses_is_not_storable() -> None:
    assert not storable_key("") and not storable_key("x" * 257) and not storable_key("Caro\u200bline")
    assert storable_key("x" * 256) and storable_key("Caroline")


def test_a_name_that_opens_the_turn_and_recurs_keeps_its_first_place_under_the_entity_cap() -> None:
    """A capitalized word opening a sentence counts where it stands when it is capitalized elsewhere too."""
    text = "Biscuit chased the ball. Then Caroline, Melanie, Oscar, Priya and Jonas came over to play with Biscuit."
    names = [k["key"] for k in keys_for(text) if k.get("type") == "entity"]
    assert names == ["Biscuit", "Caroline", "Melanie", "Oscar", "Priya"]  # five names at most: Jonas is cut, not Biscuit


def test_each_piece_of_a_turn_is_quoted_by_its_place_and_a_piece_joined_across_a_line_break_keeps_its_text() -> None:
    text = "First sentence here. Second one.\n\nThird after a break. Fourth."
    found = quoted_pieces(text, limit=40)
    assert found == [("First sentence here. Second one.", [0, 32]), ("Third after a break. Fourth.", [34, 62])]
    assert all(text[start:end] == piece for piece, (start, end) in found)
    assert quoted_pieces("One.\nTwo. Three is the longest.", limit=12)[0] == ("One. Two.", None)
    assert quoted_pieces("A short turn.") == [("A short turn.", [0, 13])]


# --- the fast patterns find what their plain definitions find ----------------------------------------------------

_EDGE_TEXTS = [
    "Caroline met Mel. \"Yes,\" said Jo. (Paris) is far: Rome too! Was it? I think so.",
    "  \n Leading space. Then the Bank of England and Real de Madrid met the Duke of the North.",
    "éAbc, 3Com, _Foo, x-Ray, O'Neil, Rock’n’Roll, AT&T and A-Team; ZZ Top. A. B? C!",
    "well-known don't it's ab-cd 'quoted' -dash- a'b'c'd five sixty-six x-y-z abc'-def rock'n'roll",
    "\"Opening quote then Words\" and 'Single Quotes'.\tTabbed Word\u00a0Nbsp Name\u2003Em Space",
    "",
    "no capitals here at all, only words of some length and a few short ones",
    "ALLCAPS WORD and MiXeD CaSe; ends with Name",
]


def test_the_fast_entity_word_and_sentence_opening_patterns_find_what_their_definitions_find() -> None:
    """The patterns are written for speed (a leading character class, no alternation with ``\\A``, no short words);
    each must find exactly the matches of the plain pattern the module docstring describes."""
    import re

    from harness.importers import extract

    entity = re.compile(r"\b[A-Z][A-Za-z0-9'’&-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][A-Za-z0-9'’&-]*)*")
    word = re.compile(r"[a-z][a-z'-]*[a-z]")
    opening = re.compile(r"(?:\A|[.!?:\"'(])\s*")
    for text in _EDGE_TEXTS:
        assert [(m.start(), m[0]) for m in extract._ENTITY.finditer(text)] == [(m.start(), m[0]) for m in entity.finditer(text)], text
        lowered = text.lower()
        assert extract._WORD.findall(lowered) == [w for w in word.findall(lowered) if len(w) >= 4], text
        fast = {m.end() for m in extract._SENTENCE_OPEN.finditer(text)} | {extract._LEADING_SPACE.match(text).end()}  # type: ignore[union-attr]
        assert fast == {m.end() for m in opening.finditer(text)}, text
