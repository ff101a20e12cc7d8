"""What a reader sees (:mod:`harness.score.visible`): the ignorables, markup and homoglyphs leak matching folds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import regex

from harness.score.visible import (
    _skeleton_table,
    fold_markup,
    shows,
    strip_default_ignorables,
    visible_forms,
    visibly_contains,
)

#: Default_Ignorable_Code_Point as Unicode's DerivedCoreProperties.txt (15.1 and 16.0) lists it; "Total code points: 4174".
DERIVED_CORE_PROPERTIES = """
00AD 034F 061C 115F..1160 17B4..17B5 180B..180D 180E 180F 200B..200F 202A..202E 2060..2064 2065 2066..206F 3164
FE00..FE0F FEFF FFA0 FFF0..FFF8 1BCA0..1BCA3 1D173..1D17A E0000 E0001 E0002..E001F E0020..E007F E0080..E00FF
E0100..E01EF E01F0..E0FFF
"""


@pytest.fixture(autouse=True)
def _fold_tables_built_by_each_test() -> Iterator[None]:
    """Each test folds with tables it built itself (the confusables table costs 0.06 s), not ones a test before it cached.

    mutmut maps a function to the tests that call it: with the cache kept, ``_preference`` and ``_union_classes``
    were mapped to the first test that folded a homoglyph alone, and their mutants survived the tests that pin them.
    """
    _skeleton_table.cache_clear()
    visible_forms.cache_clear()
    yield


def _listed() -> set[int]:
    points: set[int] = set()
    for field in DERIVED_CORE_PROPERTIES.split():
        first, _, last = field.partition("..")
        points.update(range(int(first, 16), int(last or first, 16) + 1))
    return points


def test_the_default_ignorables_dropped_are_exactly_unicodes_set() -> None:
    """The ``regex`` package's Default_Ignorable_Code_Point is DerivedCoreProperties.txt's, all 4,174 code points."""
    listed = _listed()
    pattern = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    assert len(listed) == 4174
    assert {c for c in range(0x110000) if pattern.match(chr(c))} == listed
    assert all(strip_default_ignorables(f"a{chr(c)}b") == "ab" for c in listed)


def test_markup_folds_to_the_text_it_renders() -> None:
    assert fold_markup("North**wind**, __South__ern, ~~Ea~~st, `co`de") == "Northwind, Southern, East, code"
    assert fold_markup("[North](https://x.example/a)wind ![Sou](i.png)th <https://x.example>") == "Northwind South https://x.example"
    assert fold_markup("North<b>wind</b> <span class='x'>a</span> &amp; North&#119;ind \\*x\\*") == "Northwind a & Northwind x"


def test_homoglyphs_of_either_case_fold_to_the_latin_letters() -> None:
    """Cyrillic capitals (``Т`` like T), lowercase (``г`` like r), Greek, fullwidth and mathematical letters all show ``Northwind``."""
    for spelled in ("N\u043erthwind", "N\u041eR\u0422HWIND", "N\u043e\u0433thwind", "\u039dorthwind", "Ｎｏｒｔｈｗｉｎｄ",
                    "\U0001d40d\U0001d428rthwind", "NORTHW\u0406ND"):
        assert visibly_contains(f"it was {spelled}.", "Northwind"), spelled


def test_a_different_word_is_not_shown() -> None:
    for text in ("North wind", "Nortwind", "Northwlnd", "Southwind"):
        assert not visibly_contains(text, "Northwind"), text
    assert not shows("I don't know.", "No") and shows("No, never.", "no")


def test_a_short_canary_is_still_word_bounded() -> None:
    """Folding keeps the short-needle rule: ``N\u043e`` (Cyrillic o) shows "No", "Kn\u043ew" does not."""
    assert visibly_contains("N\u043e, never.", "No")
    assert not visibly_contains("I don't kn\u043ew.", "No")


def test_a_short_capitalised_needle_inside_a_word_is_not_shown_though_o_and_i_look_like_digits() -> None:
    """``OIL`` is not in ``FOIL`` or ``TOIL``: the letters that look like digits (O and 0, I and l and 1) fold to a
    letter, so the short-needle rule still sees a word around them; ``0IL`` written with a zero still shows it."""
    assert not shows("FOIL", "OIL") and not shows("TOIL and SOIL", "OIL")
    assert shows("Crude OIL", "OIL") and shows("crude 0IL", "OIL")


def test_the_canary_side_is_folded_too() -> None:
    """A canary written with a homoglyph or markup matches the plain word in the answer."""
    assert visibly_contains("the Northwind account", "N\u043erth**wind**")


def test_a_text_holding_every_kind_of_markup_at_once_is_still_folded() -> None:
    folded = fold_markup("North**wind**, _a_ ~~b~~ `c` [d](https://x) <b>e</b> &amp; \\*f")
    assert folded == "Northwind, a b c d e & f"
