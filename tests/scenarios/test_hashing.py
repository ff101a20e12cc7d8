"""The scenario hash's fast serialization (orjson for sessions and items) writes the bytes ``json.dumps`` writes.

Issue 42: serializing a LongMemEval S suite's sessions and items for the hash
was a third of loading it for a run. Each test holds the fast path against the
definition (``json.dumps`` with sorted keys, no spaces, UTF-8) on the
published-shape fixtures and on the characters the two could spell apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.scenarios import hashing, load_scenarios, scenario_hash
from harness.scenarios.models import ItemSpec, Session
from tests.importers.importer_fixtures import imported


def _definition(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _plain_hash(scenario: Any) -> str:
    """The scenario hash with every part serialized by ``json.dumps`` (the fast path switched off)."""
    saved = hashing.FLOATLESS
    hashing.FLOATLESS = ()
    hashing._entry_cache.clear()
    hashing._part_cache.clear()
    try:
        return scenario_hash(scenario)
    finally:
        hashing.FLOATLESS = saved
        hashing._entry_cache.clear()
        hashing._part_cache.clear()


@pytest.mark.parametrize("kind", ["longmemeval", "locomo"])
def test_published_shape_suites_hash_alike_with_and_without_the_fast_serialization(tmp_path: Path, kind: str) -> None:
    """Every session and item of the imported fixtures: the same bytes, and every scenario the same digest."""
    suite, _ = imported(kind, tmp_path)
    scenarios = load_scenarios([suite])
    assert scenarios
    entries = 0
    for scenario in scenarios:
        for entry in (*scenario.sessions, *scenario.items):
            entries += 1
            assert hashing._entry_canonical(entry) == _definition(entry.model_dump(mode="json", by_alias=True))
        hashing._entry_cache.clear()
        hashing._part_cache.clear()
        fast = scenario_hash(scenario)
        assert fast == _plain_hash(scenario)
    assert entries > 20


_TRICKY = "".join(chr(code) for code in range(0x20)) + '"\\/\x7f\x85\xa0\u2028\u2029\ufeff\ufffd\uffff😀é</script>\t'


def test_control_characters_escapes_and_astral_text_serialize_as_json_dumps_writes_them() -> None:
    """Every control character, quotes, backslashes, line separators, a BOM, non-BMP text, in keys and contents."""
    session = Session.model_validate({"id": "s1", "started_at": 1, "turns": [
        {"role": "user", "content": _TRICKY, "speaker": _TRICKY[:200]}, {"role": "assistant", "content": "ok"}]})
    item = ItemSpec.model_validate({"id": "i1", "content": _TRICKY, "kind": "knowledge", "keys": [_TRICKY, "plain"],
                                    "sources": [{"session": "s1", "turn": "t1"}], "revisions": [{"content": _TRICKY, "at": 0}]})
    for entry in (session, item):
        assert hashing._entry_canonical(entry) == _definition(entry.model_dump(mode="json", by_alias=True))


def test_what_orjson_refuses_goes_through_json_dumps() -> None:
    """An int past 64 bits (only a constructed model can hold one) is written by ``json.dumps``, not refused."""
    item = ItemSpec.model_validate({"id": "i1", "content": "x", "kind": "knowledge", "keys": ["k"],
                                    "sources": [{"session": "s1", "turn": "t1"}]})
    huge = item.model_copy(update={"observed_at": 2**70})
    assert hashing._entry_canonical(huge) == _definition(huge.model_dump(mode="json", by_alias=True))


def _has_number(schema: Any) -> bool:
    if isinstance(schema, dict):
        return schema.get("type") == "number" or any(_has_number(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_has_number(value) for value in schema)
    return False


@pytest.mark.parametrize("model", hashing.FLOATLESS)
def test_the_fast_serialized_models_hold_no_float_at_any_depth(model: type) -> None:
    """orjson and ``json.dumps`` spell some floats apart (1e-7, 1e-07): a float field must leave the fast path."""
    schema = model.model_json_schema(mode="serialization")  # type: ignore[attr-defined]
    assert not _has_number(schema)
