"""The fast paths of ``validate`` (issue 22: a LongMemEval S suite in under 20 s) find exactly what the slow paths find.

Each test holds a fast path against the definition it replaces: the
character scan against the regex :data:`json_fast_path._NOT_AS_JSON`, the
remembered :class:`KeySpec` against a fresh validation (values and errors with
their places), and ``validate``'s unasked id lines against a kept load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BeforeValidator, Field, ValidationError

from harness.scenarios import json_fast_path, load_suite, models
from harness.scenarios.limits import MAX_DEPTH
from harness.scenarios.models import ItemSpec, KeySpec
from tests.scenarios.test_json_fast_path import _conversation, _write


def _is_surrogate(code: int) -> bool:
    return 0xD800 <= code <= 0xDFFF


def test_the_refused_characters_are_exactly_those_the_not_as_json_regex_matches() -> None:
    """Every code point outside the surrogate block: in the fast scan's list exactly when the regex refuses it."""
    regex = {chr(code) for code in range(0x110000) if not _is_surrogate(code) and json_fast_path._NOT_AS_JSON.match(chr(code))}
    assert set(json_fast_path._REFUSED_CHARS) == regex


@pytest.mark.parametrize(
    "text",
    ['{"a": "\\ud800"}', '{"a": "\\uDBFF x"}', '{"a": "\\udc00"}', '{"a": "\\\\ud800"}', '{"a": "\\ud7ff"}', '{"a": "\\ue000"}',
     '{"a": "\ud800"}', '{"a": "x\udfff"}', '{"a": "é\x85"}', '{"a": "\u2028"}', '{"a": "\ufffe"}', '{"a": "\t\r\n ok"}',
     '{"a": "\x7f"}', '{"a": "😀\x00"}', '{"a": "plain"}'],
)
def test_surrogates_escapes_and_line_breaks_are_judged_as_the_regex_judges_them(text: str) -> None:
    assert json_fast_path._reads_differently(text) == (json_fast_path._NOT_AS_JSON.search(text) is not None)


_EDGES = st.sampled_from(["\\ud800", "\\uDC12", "\\u0041", "\\\\", "\\u", "\ud800", "\udfff", "\x00", "\x08", "\x0b", "\x1f", "\x7f",
                          "\x9f", "\xa0", "\u2027", "\u2028", "\u2029", "\u202a", "\ufffd", "\ufffe", "\uffff", "😀", "é", "\t", "\r\n"])


@given(st.lists(st.one_of(st.text(max_size=8), _EDGES), max_size=12).map("".join))
@settings(max_examples=500, deadline=None)
def test_generated_texts_are_judged_as_the_regex_judges_them(text: str) -> None:
    """Random text salted with every edge of the regex (surrogates raw and escaped, controls, YAML line breaks)."""
    assert json_fast_path._reads_differently(text) == (json_fast_path._NOT_AS_JSON.search(text) is not None)


class _PlainItem(ItemSpec):
    """ItemSpec as it was before keys were remembered: the shorthand alone, every key validated anew."""

    keys: list[Annotated[KeySpec, BeforeValidator(models._key_shorthand)]] = Field(min_length=1, max_length=32)


def _fresh(payload: dict[str, Any]) -> Any:
    """ItemSpec validation with nothing remembered: the value, or the errors (type, place, message)."""
    return _outcome(payload, _PlainItem)


def _outcome(payload: dict[str, Any], model: type[ItemSpec] = ItemSpec) -> Any:
    try:
        return model.model_validate(payload).model_dump()
    except ValidationError as exc:
        return [(e["type"], e["loc"], e["msg"]) for e in exc.errors(include_url=False)]


class _Text(str):
    """A str subclass: equal to its text, never remembered in its place."""


_ITEM = {"id": "i1", "content": "Alice moved to Oslo", "kind": "knowledge", "sources": [{"session": "s1", "turn": "t1"}]}
_KEYS = [
    "Oslo", {"key": "Oslo"}, {"key": "Oslo", "type": "entity"}, {"key": "Oslo", "type": "entity", "origin": "deterministic"},
    {"type": "entity", "key": "Oslo"}, {"key": "Oslo", "type": "bogus"}, {"key": "Oslo", "colour": "red"}, {"key": 5},
    {"key": ""}, {"key": "Oslo", "type": "entity", "origin": "llm", "extra": "x"}, {"key": ["Oslo"]}, {"key": None}, 7,
    {"key": _Text("Oslo")}, {"key": "x" * 300},
]


@pytest.mark.parametrize("key", range(len(_KEYS)))
def test_a_remembered_key_validates_to_what_a_fresh_validation_gives_values_and_errors(key: int) -> None:
    """Each key, after every other key was remembered, twice: the same value or the same errors at the same places."""
    payload = {**_ITEM, "keys": ["Oslo", _KEYS[key], {"key": "Bergen", "type": "alias"}, _KEYS[key]]}
    expected = _fresh(payload)
    models._KEY_SPECS.clear()
    assert _outcome(payload) == expected
    for other in _KEYS:
        _outcome({**_ITEM, "keys": [other]})
    assert _outcome(payload) == expected
    assert _outcome(payload) == expected


def test_remembered_keys_are_the_frozen_instances_and_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    models._KEY_SPECS.clear()
    first = ItemSpec.model_validate({**_ITEM, "keys": ["Oslo"]})
    second = ItemSpec.model_validate({**_ITEM, "keys": [{"key": "Oslo"}]})
    assert second.keys[0] is first.keys[0] and isinstance(first.keys[0], KeySpec)
    with pytest.raises(ValidationError):
        first.keys[0].key = "Bergen"  # type: ignore[misc]  # frozen: sharing is safe
    monkeypatch.setattr(models, "_KEY_SPECS_SIZE", 3)
    for n in range(10):
        ItemSpec.model_validate({**_ITEM, "keys": [f"k{n}"]})
        assert len(models._KEY_SPECS) <= 3


def test_validate_still_names_the_first_files_line_of_a_duplicate_scenario_id_in_json_syntax(tmp_path: Path) -> None:
    """``validate`` (keep=False) no longer asks every file for its id line, yet a duplicate names it as a kept load does."""
    out, data = _conversation(tmp_path, probes=2)
    _write(out / "0a995998.yaml", data)
    _write(out / "copy.yaml", {**data, "probes": data["probes"][:1]})
    kept, streamed = load_suite([out]), load_suite([out], keep=False)
    duplicates = [str(p) for p in streamed.problems if "duplicate scenario id" in p.message]
    assert duplicates and duplicates == [str(p) for p in kept.problems if "duplicate scenario id" in p.message]
    first_line = next(n for n, line in enumerate((out / "0a995998.yaml").read_text().splitlines(), 1) if '"id": "q1"' in line)
    assert any(f"0a995998.yaml:{first_line} uses it too" in p for p in duplicates), duplicates


def test_a_duplicate_key_or_deep_nesting_in_a_json_syntax_file_still_goes_to_the_yaml_path() -> None:
    """The fast character scan changes nothing of what the JSON path refuses."""
    with pytest.raises(json_fast_path.NotPlainJson):
        json_fast_path.parse_json('{"id": "a", "id": "b"}')
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    with pytest.raises(json_fast_path.NotPlainJson):
        json_fast_path.parse_json(json.dumps({"id": deep}))
    with pytest.raises(json_fast_path.NotPlainJson):
        json_fast_path.parse_json('{"id": "a\x01b"}')
    assert json_fast_path.parse_json('{"id": "é😀"}') == {"id": "é😀"}


def test_remembered_key_inputs_are_what_the_keys_build_afresh_in_every_type_and_origin() -> None:
    """The store input of an item's keys: the same KeyInput values as built one by one, whatever was seen before."""
    from harness.scenarios import seeding
    from memory_tools import KeyInput, KeyOrigin, KeyType

    specs = [KeySpec(key="Oslo", type=t, origin=o) for t in KeyType for o in KeyOrigin]
    specs += [KeySpec.model_construct(key="Oslo", type="entity", origin="llm"), KeySpec.model_construct(key=_Text("Oslo"))]
    for first in specs:
        for spec in specs:
            seeding._KEY_INPUTS.clear()
            seeding._key_input(first)
            made = seeding._key_input(spec)
            expected = KeyInput(spec.key, spec.type, spec.origin)
            assert made == expected and made.key_type is expected.key_type and made.key_origin is expected.key_origin
            assert type(made.key) is type(spec.key)


def _too_deep_recursive(value: Any, depth: int = 1) -> bool:
    """The depth walk the level-by-level one replaced (a call per container)."""
    if value.__class__ is not dict and value.__class__ is not list:
        return False
    if depth > MAX_DEPTH:
        return True
    return any(_too_deep_recursive(child, depth + 1) for child in (value.values() if isinstance(value, dict) else value))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3),
    max_leaves=60,
)


def _nest(value: Any, levels: int, as_dict: bool) -> Any:
    for level in range(levels):
        value = {"k": value, "s": "x"} if as_dict and level % 2 else [1, value]
    return value


@given(_JSON, st.integers(min_value=0, max_value=MAX_DEPTH + 2), st.booleans())
@settings(max_examples=300, deadline=None)
def test_the_level_by_level_depth_check_agrees_with_the_recursive_walk_at_and_around_the_limit(data: Any, levels: int, as_dict: bool) -> None:
    nested = _nest(data, levels, as_dict)
    assert json_fast_path._too_deep_data(nested) == _too_deep_recursive(nested)
    assert json_fast_path._too_deep_data({"a": [1, "x"], "b": nested}) == _too_deep_recursive({"a": [1, "x"], "b": nested})


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_nesting_exactly_at_the_limit_is_plain_json_and_one_past_it_is_not(depth: int) -> None:
    value: Any = []
    for _ in range(depth - 1):
        value = [value] if depth % 2 else {"k": value}
    assert json_fast_path._too_deep_data(value) is (depth > MAX_DEPTH)
