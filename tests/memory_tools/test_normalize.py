"""Normalization of keys, terms, identifiers and content (``normalize``), and the pure item validation with its
memory of keys seen before (``item_validation``)."""

from __future__ import annotations

import dataclasses
import hashlib
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
    check_item_input,
    item_validation,
    normalize,
    normalize_content,
    normalize_identifier,
    normalize_search_term,
    validate_item_input,
)

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
        ("", "workspace_key must hold 1..512 code points (got 0)"),
        ("w" * 513, "workspace_key must hold 1..512 code points (got 513)"),
        ("é" * 513, "workspace_key must hold 1..512 code points (got 513)"),
        (" w", "workspace_key must not start or end with whitespace (got ' w')"),
        ("w\u3000", "workspace_key must not start or end with whitespace (got 'w\\u3000')"),
        ("w\ufeff", "workspace_key must not start or end with whitespace (got 'w\\ufeff')"),  # a BOM is JavaScript whitespace
        ("w\ud800", "workspace_key must not contain lone surrogates (got 'w\\ud800')"),
        ("Cafe\u0301", "workspace_key must already be NFC-normalized (got 'Cafe\u0301')"),
        (7, "workspace_key must be a string (got int)"),
    ],
)
def test_identifier_rules(value: object, message: str):
    with pytest.raises(MemoryValidationError) as refused:
        normalize_identifier(value, "workspace_key")
    assert str(refused.value) == message


def test_identifier_of_512_code_points_accepted():
    assert normalize_identifier("w" * 512, "item_id") == "w" * 512


@pytest.mark.parametrize("value", ["é", "日", "é" * 512, "Café-Øst"])
def test_non_ascii_identifiers_from_one_to_512_code_points_accepted_unchanged(value: str):
    """Non-ASCII ids skip the ASCII fast path: the full check alone must accept them (a one-letter id too)."""
    assert normalize_identifier(value, "workspace_key") == value


def test_content_is_nfc_normalized_and_hashed_as_nfc():
    assert normalize_content("Cafe\u0301 au lait") == "Caf\u00e9 au lait"
    n = validate_item_input(_item(content="Cafe\u0301"))
    assert n.content == "Caf\u00e9" and n.content_hash == hashlib.sha256("Caf\u00e9".encode()).hexdigest()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5, "content must be a string (got int)"),
        (None, "content must be a string (got NoneType)"),
        ("note \ud800", "content must not contain lone surrogates"),
    ],
)
def test_content_refusals_name_the_field_and_the_rule(value: object, message: str):
    with pytest.raises(MemoryValidationError) as refused:
        normalize_content(value)
    assert str(refused.value) == message


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


@pytest.mark.parametrize(("smaller", "larger"), [("Tabs", "tabs"), ("tAbs", "tabs"), ("tab  width", "tab width")])
def test_key_dedup_ties_go_to_smaller_original_text_whichever_comes_first(smaller: str, larger: str):
    assert _winner(KeyInput(larger), KeyInput(smaller)) == KeyInput(smaller)
    assert _winner(KeyInput(smaller), KeyInput(larger)) == KeyInput(smaller)


def test_keys_sorted_by_normalized_key_and_counted_after_dedup():
    keys = tuple(KeyInput(f"K{i:02}") for i in range(32)) + (KeyInput("k00"), KeyInput(" K31 "))
    n = validate_item_input(_item(keys=keys))
    assert [k.normalized_key for k in n.keys] == [f"k{i:02}" for i in range(32)]
    with pytest.raises(MemoryValidationError, match=r"keys must hold 1\.\.32 distinct keys .*\(got 33\)"):
        validate_item_input(_item(keys=keys + (KeyInput("k32"),)))


def test_sources_dedup_by_event_id_and_conflicting_provenance_rejected():
    n = validate_item_input(_item(sources=(SOURCE, MemoryItemSource("s2", "r2", "t2", "e2"), SOURCE)))
    assert [s.event_id for s in n.sources] == ["e1", "e2"]
    with pytest.raises(MemoryValidationError, match=r"sources\[1\]: event_id 'e1' already appears in sources\[0\]"):
        validate_item_input(_item(sources=(SOURCE, MemoryItemSource("s9", "r1", "t1", "e1"))))


def test_sources_after_a_repeated_event_are_kept():
    second = MemoryItemSource("s1", "r1", "t2", "e2")
    n = validate_item_input(_item(sources=(SOURCE, SOURCE, second)))
    assert n.sources == (SOURCE, second)


def test_sources_limits():
    with pytest.raises(MemoryValidationError, match=r"sources must hold 1\.\.256 distinct sources \(got 0\)"):
        validate_item_input(_item(sources=()))
    many = tuple(MemoryItemSource("s", "r", "t", f"e{i}") for i in range(257))
    assert len(validate_item_input(_item(sources=many[:256])).sources) == 256
    with pytest.raises(MemoryValidationError, match=r"got 257"):
        validate_item_input(_item(sources=many))


_TIME = "must be a non-negative integer (UTC milliseconds) or null"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"temporal_type": TemporalType.UNDATED, "event_started_at": 5}, "event_started_at and event_ended_at must be null for an undated item"),
        ({"temporal_type": TemporalType.POINT}, "event_started_at is required for a point item"),
        ({"temporal_type": TemporalType.OPEN_ENDED}, "event_started_at is required for an open-ended item"),
        (
            {"temporal_type": TemporalType.POINT, "event_started_at": 5, "event_ended_at": 5},
            "event_ended_at must be later than event_started_at for a point item",
        ),
        ({"temporal_type": TemporalType.INTERVAL, "event_started_at": 5}, "event_ended_at is required for an interval item"),
        (
            {"temporal_type": TemporalType.INTERVAL, "event_started_at": 5, "event_ended_at": 4},
            "event_ended_at must be later than event_started_at for an interval item",
        ),
        ({"temporal_type": TemporalType.OPEN_ENDED, "event_started_at": 5, "event_ended_at": 9}, "event_ended_at "
                                                                                                 "must be null for an open-ended item"),
        ({"scope_type": ScopeType.GLOBAL, "scope_key": "w1"}, "scope_key must be null for a global item (got 'w1')"),
        ({"scope_type": ScopeType.WORKSPACE}, "scope_key is required for a workspace item"),
        ({"scope_type": ScopeType.WORKSPACE, "scope_key": " w1"}, "scope_key must not start or end with whitespace (got ' w1')"),
        ({"now": -1}, f"now {_TIME} (got -1)"),
        ({"temporal_type": TemporalType.POINT, "event_started_at": -5}, f"event_started_at {_TIME} (got -5)"),
        ({"temporal_type": TemporalType.INTERVAL, "event_started_at": 5, "event_ended_at": "9"}, f"event_ended_at {_TIME} (got '9')"),
        ({"observed_at": -1}, f"observed_at {_TIME} (got -1)"),
        ({"observed_at": True}, f"observed_at {_TIME} (got True)"),
        ({"kind": "mood"}, "kind must be one of preference, identity, context, knowledge, failure, note (got 'mood')"),
        ({"kind": ["note"]}, "kind must be one of preference, identity, context, knowledge, failure, note (got ['note'])"),
        ({"statement_type": "guess"}, "statement_type must be one of fact, plan, prediction (got 'guess')"),
        ({"temporal_type": "recurring"}, "temporal_type must be one of undated, point, interval, open_ended (got 'recurring')"),
        ({"scope_type": "team"}, "scope_type must be one of global, workspace (got 'team')"),
        ({"origin": "imported"}, "origin must be one of agent_extracted, user_requested (got 'imported')"),
        ({"item_id": ""}, "item_id must hold 1..512 code points (got 0)"),
        ({"keys": "indent"}, "keys must be a list of keys (got str)"),
        ({"keys": {KeyInput("indent")}}, "keys must be a list of keys (got set)"),
        ({"keys": ("indent",)}, "keys[0] must be a KeyInput (got str)"),
        ({"keys": (KeyInput("ok"), KeyInput("  "))}, "keys[1].key must not be empty or only whitespace"),
        ({"keys": (KeyInput("ok", "bogus"),)}, "keys[0].key_type must be one of exact, entity, concept, alias, code (got 'bogus')"),
        ({"keys": (KeyInput("ok", KeyType.EXACT, "human"),)}, "keys[0].key_origin must be one of deterministic, llm, user (got 'human')"),
        ({"sources": {SOURCE}}, "sources must be a list of sources (got set)"),
        ({"sources": ("e1",)}, "sources[0] must be a MemoryItemSource (got str)"),
        ({"sources": (SOURCE, MemoryItemSource("s1", "r1", "t1", ""))}, "sources[1].event_id must hold 1..512 code points (got 0)"),
        (
            {"sources": (SOURCE, MemoryItemSource("s9", "r1", "t1", "e1"))},
            "sources[1]: event_id 'e1' already appears in sources[0] with a different session_id, run_id or turn_id",
        ),
    ],
)
@pytest.mark.parametrize("rules", [validate_item_input, check_item_input])
def test_item_rules_name_the_field(changes: dict[str, object], message: str, rules: object):
    """The whole message a writer sees: the field, the rule, and the value at fault (a closed set lists its values);
    ``check_item_input`` (scenario validation: nothing built) refuses with the same message."""
    with pytest.raises(MemoryValidationError) as refused:
        rules(_item(**changes))  # type: ignore[operator]
    assert str(refused.value) == message


@given(st.fixed_dictionaries({}, optional={
    "item_id": st.sampled_from(["", " x", "ok"]), "now": st.sampled_from([-1, None, 3]),
    "content": st.sampled_from(["", "  ", "ok", "\ud800"]), "kind": st.sampled_from(["mood", Kind.NOTE]),
    "temporal_type": st.sampled_from([TemporalType.POINT, TemporalType.UNDATED, "recurring"]),
    "event_started_at": st.sampled_from([None, 5, -5]), "observed_at": st.sampled_from([True, 7]),
    "scope_type": st.sampled_from([ScopeType.WORKSPACE, ScopeType.GLOBAL]), "scope_key": st.sampled_from([None, "w1"]),
    "keys": st.sampled_from([(), ("indent",), (KeyInput(" "),), (KeyInput("a"), KeyInput("A"))]),
    "sources": st.sampled_from([(), (SOURCE, MemoryItemSource("s9", "r1", "t1", "e1"))]),
}))
@settings(max_examples=300, deadline=None)
def test_checking_an_item_refuses_exactly_what_validating_it_refuses_with_the_first_message(changes: dict[str, object]):
    """Several broken fields at once: ``check_item_input`` and ``validate_item_input`` stop at the same rule."""
    item = _item(**changes)
    try:
        validate_item_input(item)
    except MemoryValidationError as refused:
        with pytest.raises(MemoryValidationError) as checked:
            check_item_input(item)
        assert str(checked.value) == str(refused)
    else:
        assert check_item_input(item) is None


def test_something_that_is_not_an_item_input_is_refused_with_its_type():
    with pytest.raises(MemoryValidationError) as refused:
        validate_item_input({"content": "Prefers tabs", "kind": "preference"})  # type: ignore[arg-type]
    assert str(refused.value) == "item must be an ItemInput (got dict)"


@pytest.mark.parametrize(
    ("temporal_type", "start", "end"),
    [
        (TemporalType.UNDATED, None, None),
        (TemporalType.POINT, 5, None),
        (TemporalType.POINT, 5, 6),
        (TemporalType.INTERVAL, 5, 6),
        (TemporalType.OPEN_ENDED, 0, None),
    ],
)
def test_valid_temporal_shapes_accepted_with_their_times(temporal_type: TemporalType, start: int | None, end: int | None):
    n = validate_item_input(_item(temporal_type=temporal_type, event_started_at=start, event_ended_at=end))
    assert (n.temporal_type, n.event_started_at, n.event_ended_at) == (temporal_type, start, end)


def test_an_item_without_a_time_takes_the_callers_default_then_the_wall_clock(monkeypatch: pytest.MonkeyPatch):
    """``now`` unknown: the caller's ``default_now`` (one clock reading for a whole batch), else the wall clock;
    ``observed_at`` unknown: that ``now``."""
    monkeypatch.setattr(normalize.time, "time_ns", lambda: 1_700_000_000_123_456_789)
    n = validate_item_input(_item(now=None), default_now=1_234)
    assert (n.now, n.observed_at) == (1_234, 1_234)
    n = validate_item_input(_item(now=None))
    assert (n.now, n.observed_at) == (1_700_000_000_123, 1_700_000_000_123)
    n = validate_item_input(_item(now=50, observed_at=20), default_now=1_234)
    assert (n.now, n.observed_at) == (50, 20)


def test_the_wall_clock_is_utc_milliseconds(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(normalize.time, "time_ns", lambda: 1_700_000_000_123_999_999)
    assert normalize.wall_clock_ms() == 1_700_000_000_123


@pytest.mark.parametrize("value", [None, -1, True, 1.5])
def test_a_required_time_that_is_unknown_or_not_a_count_of_milliseconds_is_refused(value: object):
    with pytest.raises(MemoryValidationError) as refused:
        normalize.check_time(value, "updated_at", optional=False)
    assert str(refused.value) == f"updated_at must be a non-negative integer (UTC milliseconds) (got {value!r})"


def test_a_time_of_zero_is_a_time():
    assert normalize.check_time(0, "updated_at", optional=False) == 0
    assert normalize.check_time(None, "observed_at", optional=True) is None


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
    remembering = item_validation._cached_term_parts, item_validation._stored_key
    item_validation._cached_term_parts, item_validation._stored_key = normalize._term_parts, MemoryItemKey  # the reference: all anew
    try:
        fresh = _key_outcome(keys)
    finally:
        item_validation._cached_term_parts, item_validation._stored_key = remembering
    item_validation._TERM_CACHE.clear()
    assert _key_outcome(keys) == fresh
    assert _key_outcome(keys) == fresh


def test_a_str_subclass_key_is_not_remembered_and_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    item_validation._TERM_CACHE.clear()
    item_validation._STORED_KEYS.clear()  # what other files stored (126 keys after test_store.py) is not this test's to bound
    assert _key_outcome((KeyInput(_Key("Oslo")),)) == _key_outcome((KeyInput("Oslo"),))
    assert all(type(text) is str for text in item_validation._TERM_CACHE)
    monkeypatch.setattr(item_validation, "_TERM_CACHE_SIZE", 3)
    for n in range(10):
        validate_item_input(_item(keys=(KeyInput(f"k{n}"),)))
        assert f"k{n}" in item_validation._TERM_CACHE and len(item_validation._TERM_CACHE) <= 3
        assert f"k{n}" in item_validation._STORED_KEYS and len(item_validation._STORED_KEYS) <= 3


def test_a_key_seen_before_is_not_normalized_again_but_a_refused_one_is_checked_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of remembering (issue 22): a suite writes the same few thousand keys hundreds of thousands of times."""
    seen: list[object] = []
    fresh = normalize._term_parts

    def counting(text: object) -> tuple[str, str]:
        seen.append(text)
        return fresh(text)

    monkeypatch.setattr(item_validation, "_term_parts", counting)
    item_validation._TERM_CACHE.clear()
    for _ in range(3):
        validate_item_input(_item(keys=(KeyInput("Oslo"), KeyInput(" Indent "))))
    assert sorted(seen) == [" Indent ", "Oslo"]
    seen.clear()
    for _ in range(2):
        with pytest.raises(MemoryValidationError, match=r"keys\[0\]\.key must not be empty"):
            validate_item_input(_item(keys=(KeyInput("  "),)))
    assert seen == ["  ", "  "]


def test_a_key_written_again_is_the_same_stored_key() -> None:
    """One frozen ``MemoryItemKey`` per key text, type and origin, shared by every item that holds it."""
    item_validation._STORED_KEYS.clear()
    (first,) = validate_item_input(_item(keys=(KeyInput("Oslo"),))).keys
    (again,) = validate_item_input(_item(keys=(KeyInput("Oslo"),))).keys
    assert again is first


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


@given(
    st.text(
        alphabet=st.characters(codec="utf-8")
        | st.sampled_from(["\x00", "\x1f", "\x7f", "\x85", "\x9f", "\u200b", "\ufeff", "\u2028", "\t"]),
        max_size=30,
    )
)
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
