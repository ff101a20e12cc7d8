"""JSON text of a provider's text, lone surrogates included: written as escapes, read back whole, sent as U+FFFD.

The fault tests (``tests/fault/test_unencodable_text.py``, ``test_export_surrogates.py``) carry lone surrogates
through real runs; these hold :mod:`harness.records.jsontext` itself, at its own layer.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ValidationError

from harness.records.jsontext import escape_surrogates, has_surrogates, json_text, load_model, model_json, sendable

LONE = chr(0xD800)
LOW = chr(0xDC9F)


class _Reply(BaseModel):
    text: str
    parts: list[str] = []
    n: int = 0


@pytest.mark.parametrize("text, holds", [("plain ascii", False), ("café 端口", False), ("a" + LONE, True),
                                         (LOW + "é", True), ("", False)])
def test_a_lone_surrogate_is_found_and_only_one(text: str, holds: bool) -> None:
    assert has_surrogates(text) is holds


def test_each_lone_surrogate_is_written_as_its_own_lowercase_json_escape() -> None:
    text = '"a' + LONE + "b" + LOW + '"'
    assert escape_surrogates(text) == '"a\\ud800b\\udc9f"'
    assert json.loads(escape_surrogates(text)) == "a" + LONE + "b" + LOW
    same = '"café"'
    assert escape_surrogates(same) is same


def test_json_text_keeps_other_characters_as_they_are_and_takes_dumps_options() -> None:
    value = {"b": "café " + LONE, "a": [1, 2]}
    text = json_text(value, sort_keys=True, separators=(",", ":"))
    assert text == '{"a":[1,2],"b":"café \\ud800"}'
    assert text.encode("utf-8") and json.loads(text) == value


def test_a_model_without_lone_surrogates_is_pydantics_own_json_byte_for_byte() -> None:
    reply = _Reply(text="café", parts=["x"], n=2)
    assert model_json(reply) == reply.model_dump_json()
    assert model_json(reply, indent=2) == reply.model_dump_json(indent=2)


@pytest.mark.parametrize("indent", [None, 2])
def test_a_model_with_a_lone_surrogate_is_written_in_the_same_layout_and_read_back_whole(indent: int | None) -> None:
    reply = _Reply(text="a" + LONE, parts=["é", LOW], n=3)
    plain = _Reply(text="ab", parts=["é", "c"], n=3)
    text = model_json(reply, indent=indent)
    text.encode("utf-8")  # valid UTF-8
    expected = plain.model_dump_json(indent=indent).replace('"ab"', '"a\\ud800"').replace('"c"', '"\\udc9f"')
    assert text == expected
    assert load_model(_Reply, text) == reply


def test_a_value_json_has_no_type_for_is_written_as_the_fast_path_writes_it() -> None:
    """A datetime (or any value pydantic writes as a JSON string) reads the same whether or not the model holds a
    lone surrogate: ISO 8601, never ``str()``'s form, so the record validates back to the same value."""
    import datetime

    class _Stamped(BaseModel):
        text: str
        at: datetime.datetime

    at = datetime.datetime(2026, 1, 5, 9, 30, tzinfo=datetime.UTC)
    odd, plain = _Stamped(text="a" + LONE, at=at), _Stamped(text="ab", at=at)
    assert model_json(odd) == plain.model_dump_json().replace('"ab"', '"a\\ud800"')
    assert load_model(_Stamped, model_json(odd)) == odd


def test_load_model_reads_uppercase_escapes_and_refuses_what_is_not_the_model() -> None:
    assert load_model(_Reply, '{"text": "plain", "n": 2}') == _Reply(text="plain", n=2)
    assert load_model(_Reply, '{"text": "a\\uD800"}').text == "a" + LONE
    with pytest.raises(ValidationError):
        load_model(_Reply, '{"n": "many"}')
    with pytest.raises(ValidationError):
        load_model(_Reply, '{"n": "\\ud800"}')
    with pytest.raises(ValueError):
        load_model(_Reply, "not json \\ud800")


def test_a_request_body_carries_each_lone_surrogate_as_a_replacement_character() -> None:
    body = [{"role": "user", "content": "a" + LONE + "b" + LOW}, {"name" + LONE: ["x", LONE], "n": 1}]
    assert sendable(body) == [{"role": "user", "content": "a\ufffdb\ufffd"}, {"name\ufffd": ["x", "\ufffd"], "n": 1}]
    assert json.dumps(sendable(body), ensure_ascii=False).encode("utf-8")


def test_a_request_body_without_lone_surrogates_is_passed_on_as_the_same_object() -> None:
    body = [{"role": "user", "content": "café"}, ["x", 1, None], {"k": {"v": "w"}}]
    assert sendable(body) is body
    mixed = [{"content": "ok"}, {"content": LONE}]
    out = sendable(mixed)
    assert out is not mixed and out[0] is mixed[0] and out[1] == {"content": "\ufffd"}
    keyed = {"a" + LONE: 1, "b": 2}
    assert sendable(keyed) == {"a\ufffd": 1, "b": 2}
    merged = {LONE: 1, "\ufffd": 2}  # two keys that become one: not the same dict
    assert sendable(merged) == {"\ufffd": 2} and sendable(merged) is not merged
