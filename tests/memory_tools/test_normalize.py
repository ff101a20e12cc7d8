"""Normalization of keys, terms, identifiers and content, and the pure item validation."""

from __future__ import annotations

import dataclasses
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_tools import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    MemoryItemKey,
    MemoryItemSource,
    MemoryValidationError,
    ScopeType,
    TemporalType,
    normalize_content,
    normalize_identifier,
    normalize_search_term,
    validate_item_input,
)
from memory_tools import normalize

SOURCE = MemoryItemSource("s1", "r1", "t1", "e1")


def _item(**changes: object) -> ItemInput:
    base = ItemInput(content="Prefers tabs", kind=Kind.PREFERENCE, keys=(KeyInput("indent"),), sources=(SOURCE,), now=10)
    return dataclasses.replace(base, **changes)


# -- normalize_search_term --------------------------------------------------------------------------
def test_surrounding_whitespace_gives_one_key():
    assert normalize_search_term(" 偏好 ") == normalize_search_term("偏好") == "偏好"


def test_lowercase_without_nfkc_or_casefold():
    assert normalize_search_term("Straße") == "straße"
    assert normalize_search_term("ＡＢＣ") == "ａｂｃ"  # full-width letters stay full-width
    assert normalize_search_term("ΟΔΟΣ") == "οδος"  # final sigma


def test_nfc_applied_before_lowercase():
    assert normalize_search_term("Cafe\u0301") == "caf\u00e9"


@pytest.mark.parametrize("inner", ["\t", "\n", "\r", "\x00", "\x7f", "\x85", "\u200b", "\u200c", "\u200d", "\ufeff"])
def test_inner_control_and_zero_width_characters_rejected(inner: str):
    with pytest.raises(MemoryValidationError, match=r"term must not contain control, zero-width"):
        normalize_search_term(f"a{inner}b")


def test_lone_surrogate_rejected():
    with pytest.raises(MemoryValidationError, match="lone surrogate"):
        normalize_search_term("a\ud800b")


def test_256_code_points_accepted_and_257_rejected():
    assert len(normalize_search_term("x" * 256)) == 256
    with pytest.raises(MemoryValidationError, match=r"at most 256 code points .*\(got 257\)"):
        normalize_search_term("x" * 257)


def test_length_counted_after_trimming_and_before_collapsing():
    assert normalize_search_term("  " + "x" * 256 + "\u3000") == "x" * 256
    with pytest.raises(MemoryValidationError, match="got 257"):
        normalize_search_term("a" + " " * 255 + "b")  # collapses to 3, but 257 before collapsing


def test_ideographic_space_trimmed_at_ends_and_collapsed_inside():
    assert normalize_search_term("\u3000用户\u3000\u3000偏好\u3000") == "用户 偏好"


def test_mixed_whitespace_runs_collapse_to_one_space():
    assert normalize_search_term("a \u00a0\u2003\u202f b") == "a b"


@pytest.mark.parametrize("blank", ["", "   ", "\t\n", "\u3000\ufeff"])
def test_empty_term_rejected(blank: str):
    with pytest.raises(MemoryValidationError, match="term must not be empty"):
        normalize_search_term(blank)


def test_non_string_term_rejected_with_field_name():
    with pytest.raises(MemoryValidationError, match=r"terms\[2\] must be a string \(got int\)"):
        normalize_search_term(5, "terms[2]")


# -- identifiers and content ------------------------------------------------------------------------
def test_identifier_returned_unchanged_and_case_kept():
    assert normalize_identifier("Workspace-A", "workspace_key") == "Workspace-A"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", r"workspace_key must hold 1\.\.512 code points \(got 0\)"),
        ("w" * 513, r"got 513"),
        (" w", "must not start or end with whitespace"),
        ("w\u3000", "must not start or end with whitespace"),
        ("Cafe\u0301", "must already be NFC"),
        (7, "must be a string"),
    ],
)
def test_identifier_rules(value: object, message: str):
    with pytest.raises(MemoryValidationError, match=message):
        normalize_identifier(value, "workspace_key")


def test_identifier_of_512_code_points_accepted():
    assert normalize_identifier("w" * 512, "item_id") == "w" * 512


def test_content_controls_become_spaces_and_zero_width_removed():
    assert normalize_content("\u200b line1\nline2\u200dx\t ") == "line1 line2x"


def test_content_length_measured_after_normalization():
    assert len(normalize_content(" " + "c" * 2000 + "\u200b\u200b")) == 2000
    with pytest.raises(MemoryValidationError, match=r"content must be at most 2000 code points .*\(got 2001\)"):
        normalize_content("c" * 2001)


def test_content_empty_after_normalization_rejected():
    with pytest.raises(MemoryValidationError, match="content must not be empty"):
        normalize_content("\u200b\n\t ")


# -- validate_item_input ----------------------------------------------------------------------------
def test_validate_item_input_is_pure_and_returns_normalized_pieces():
    n = validate_item_input(_item(content=" Prefers tabs\n", keys=(KeyInput(" Indent "),)))
    assert n.content == "Prefers tabs"
    assert n.keys[0].key == "Indent" and n.keys[0].normalized_key == "indent"
    assert n.observed_at == 10 and n.now == 10 and n.item_id is None


def _winner(*keys: KeyInput) -> KeyInput:
    n = validate_item_input(_item(keys=keys))
    assert len(n.keys) == 1
    return KeyInput(n.keys[0].key, n.keys[0].key_type, n.keys[0].key_origin)


def test_key_dedup_prefers_user_over_deterministic_over_llm():
    user = KeyInput("Tabs", KeyType.ALIAS, KeyOrigin.USER)
    deterministic = KeyInput("TABS", KeyType.CODE, KeyOrigin.DETERMINISTIC)
    llm = KeyInput("tabs", KeyType.CODE, KeyOrigin.LLM)
    assert _winner(llm, deterministic, user) == user
    assert _winner(llm, deterministic) == deterministic


def test_key_dedup_then_prefers_type_order():
    ordered = [KeyType.CODE, KeyType.EXACT, KeyType.ENTITY, KeyType.CONCEPT, KeyType.ALIAS]
    for better, worse in zip(ordered, ordered[1:]):
        a, b = KeyInput("Tabs", worse, KeyOrigin.LLM), KeyInput("tabs", better, KeyOrigin.LLM)
        assert _winner(a, b) == b
        assert _winner(b, a) == b


def test_key_dedup_ties_go_to_smaller_original_text():
    upper, lower = KeyInput(" Tabs"), KeyInput("tabs ")
    assert _winner(lower, upper) == KeyInput("Tabs")  # 'T' < 't' in code-point order, compared trimmed


def test_keys_sorted_by_normalized_key_and_counted_after_dedup():
    keys = tuple(KeyInput(f"K{i:02}") for i in range(32)) + (KeyInput("k00"), KeyInput(" K31 "))
    n = validate_item_input(_item(keys=keys))
    assert [k.normalized_key for k in n.keys] == [f"k{i:02}" for i in range(32)]
    with pytest.raises(MemoryValidationError, match=r"keys must hold 1\.\.32 distinct keys .*\(got 33\)"):
        validate_item_input(_item(keys=keys + (KeyInput("k32"),)))


def test_bad_key_error_names_its_index():
    with pytest.raises(MemoryValidationError, match=r"keys\[1\]\.key must not be empty"):
        validate_item_input(_item(keys=(KeyInput("ok"), KeyInput("  "))))
    with pytest.raises(MemoryValidationError, match=r"keys\[0\]\.key_type must be one of exact, entity"):
        validate_item_input(_item(keys=(KeyInput("ok", "bogus"),)))  # type: ignore[arg-type]


def test_sources_dedup_by_event_id_and_conflicting_provenance_rejected():
    n = validate_item_input(_item(sources=(SOURCE, MemoryItemSource("s2", "r2", "t2", "e2"), SOURCE)))
    assert [s.event_id for s in n.sources] == ["e1", "e2"]
    with pytest.raises(MemoryValidationError, match=r"sources\[1\]: event_id 'e1' already appears in sources\[0\]"):
        validate_item_input(_item(sources=(SOURCE, MemoryItemSource("s9", "r1", "t1", "e1"))))


def test_sources_limits():
    with pytest.raises(MemoryValidationError, match=r"sources must hold 1\.\.256 distinct sources \(got 0\)"):
        validate_item_input(_item(sources=()))
    many = tuple(MemoryItemSource("s", "r", "t", f"e{i}") for i in range(257))
    with pytest.raises(MemoryValidationError, match=r"got 257"):
        validate_item_input(_item(sources=many))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"temporal_type": TemporalType.UNDATED, "event_started_at": 5}, "must be null for an undated item"),
        ({"temporal_type": TemporalType.POINT}, "event_started_at is required for a point item"),
        ({"temporal_type": TemporalType.POINT, "event_started_at": 5, "event_ended_at": 5}, "later than"),
        ({"temporal_type": TemporalType.INTERVAL, "event_started_at": 5}, "event_ended_at is required"),
        (
            {"temporal_type": TemporalType.INTERVAL, "event_started_at": 5, "event_ended_at": 4},
            "event_ended_at must be later than event_started_at for an interval item",
        ),
        ({"temporal_type": TemporalType.OPEN_ENDED, "event_started_at": 5, "event_ended_at": 9}, "must be null"),
        ({"scope_type": ScopeType.GLOBAL, "scope_key": "w1"}, "scope_key must be null for a global item"),
        ({"scope_type": ScopeType.WORKSPACE}, "scope_key is required for a workspace item"),
        ({"scope_type": ScopeType.WORKSPACE, "scope_key": " w1"}, "scope_key must not start or end"),
        ({"observed_at": -1}, "observed_at must be a non-negative integer"),
        ({"observed_at": True}, "observed_at must be a non-negative integer"),
        ({"kind": "mood"}, "kind must be one of preference, identity"),
        ({"item_id": ""}, r"item_id must hold 1\.\.512"),
    ],
)
def test_item_rules_name_the_field(changes: dict[str, object], message: str):
    with pytest.raises(MemoryValidationError, match=message):
        validate_item_input(_item(**changes))


def test_valid_temporal_shapes_accepted():
    validate_item_input(_item(temporal_type=TemporalType.POINT, event_started_at=5))
    validate_item_input(_item(temporal_type=TemporalType.POINT, event_started_at=5, event_ended_at=6))
    validate_item_input(_item(temporal_type=TemporalType.INTERVAL, event_started_at=5, event_ended_at=6))
    validate_item_input(_item(temporal_type=TemporalType.OPEN_ENDED, event_started_at=0))


def test_enum_values_given_as_strings_accepted():
    n = validate_item_input(_item(kind="note", keys=(KeyInput("x", "code", "user"),)))  # type: ignore[arg-type]
    assert n.kind is Kind.NOTE and n.keys[0].key_type is KeyType.CODE


def test_the_format_character_table_is_every_cf_character_of_this_python():
    """``FORMAT_CHARACTERS`` matches exactly the code points of category Cf (a Python with a newer Unicode fails here)."""
    import sys
    import unicodedata

    from memory_tools.normalize import FORMAT_CHARACTERS, strip_format_characters

    cf = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    matched = {chr(c) for c in range(sys.maxunicode + 1) if 0xD800 > c or c > 0xDFFF if FORMAT_CHARACTERS.fullmatch(chr(c))}
    assert matched == cf
    assert strip_format_characters("North\u200bwind \u00adand\u2060 Straße") == "Northwind and Straße"


# -- remembered keys (issue 22: a suite repeats a few thousand keys hundreds of thousands of times) ----------------


def _key_outcome(keys: tuple[KeyInput, ...]) -> object:
    try:
        return validate_item_input(_item(keys=keys)).keys
    except MemoryValidationError as exc:
        return str(exc)


class _Key(str):
    """A str subclass: never remembered in a plain str's place."""


_KEY_TEXTS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["Oslo", " Oslo ", "OSLO", "a\u200bb", "\x00", "  ", "e\u0301", "\u00e9", "x" * 257, "\ud800", "a\u3000\u3000b"]),
)


@given(st.lists(st.tuples(_KEY_TEXTS, st.sampled_from(list(KeyType)), st.sampled_from(list(KeyOrigin))), min_size=1, max_size=6))
@settings(max_examples=300, deadline=None)
def test_remembered_keys_normalize_and_fail_exactly_as_fresh_ones(texts: list[tuple[str, KeyType, KeyOrigin]]) -> None:
    """With every key remembered (twice over) the store gives the same keys, or the same message, as with none."""
    keys = tuple(KeyInput(text, key_type, key_origin) for text, key_type, key_origin in texts)
    remembering = normalize._cached_term_parts, normalize._stored_key
    normalize._cached_term_parts, normalize._stored_key = normalize._term_parts, MemoryItemKey  # the reference: all anew
    try:
        fresh = _key_outcome(keys)
    finally:
        normalize._cached_term_parts, normalize._stored_key = remembering
    normalize._TERM_CACHE.clear()
    assert _key_outcome(keys) == fresh
    assert _key_outcome(keys) == fresh


def test_a_str_subclass_key_is_not_remembered_and_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    normalize._TERM_CACHE.clear()
    assert _key_outcome((KeyInput(_Key("Oslo")),)) == _key_outcome((KeyInput("Oslo"),))
    assert all(type(text) is str for text in normalize._TERM_CACHE)
    monkeypatch.setattr(normalize, "_TERM_CACHE_SIZE", 3)
    for n in range(10):
        validate_item_input(_item(keys=(KeyInput(f"k{n}"),)))
        assert len(normalize._TERM_CACHE) <= 3


def test_a_remembered_stored_key_keeps_the_type_and_origin_of_each_item_it_is_written_for() -> None:
    """The same text written with each type and origin in turn, after every other: each item keeps its own."""
    pairs = [(t, o) for t in KeyType for o in KeyOrigin]
    for first in pairs:
        for then in pairs:
            validate_item_input(_item(keys=(KeyInput("Oslo", *first),)))
            (key,) = validate_item_input(_item(keys=(KeyInput("Oslo", *then),))).keys
            assert (key.key, key.key_type, key.key_origin, key.normalized_key) == ("Oslo", *then, "oslo")


def test_every_control_character_content_replaces_is_unprintable() -> None:
    """Why printable content may skip the control-character pass: no character that pass replaces is printable."""
    assert not any(chr(code).isprintable() for code in range(0x110000) if normalize._CONTROL.match(chr(code)))


@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\x00", "\x1f", "\x7f", "\x85", "\x9f", "\u200b", "\ufeff", "\u2028", "\t"]), max_size=30))
@settings(max_examples=300, deadline=None)
def test_content_normalizes_as_with_the_control_pass_always_run(text: str) -> None:
    def reference(raw: str) -> object:
        if not raw.isascii():
            if normalize._SURROGATE.search(raw) is not None:
                return "surrogate"
            raw = normalize._ZERO_WIDTH.sub("", unicodedata.normalize("NFC", raw))
        raw = normalize._CONTROL.sub(" ", raw).strip(normalize._JS_WHITESPACE)
        return raw if raw and len(raw) <= normalize.MAX_CONTENT_CODE_POINTS else "refused"

    try:
        got: object = normalize_content(text)
    except MemoryValidationError as exc:
        got = "surrogate" if "surrogate" in str(exc) else "refused"
    assert got == reference(text)
