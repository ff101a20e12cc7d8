"""The scenario hash: SHA-256 of a scenario's canonical JSON, recorded with every sample to spot edited fixtures.

A conversation's probes share their sessions and items, so those parts are
serialized once per list object, not once per probe. Each session and item is
serialized by orjson (sorted keys, compact, UTF-8), which writes the same bytes
as ``json.dumps`` for what these models hold (no floats: the one value the two
spell differently, ``1e-07`` against ``1e-7``): two thirds less CPU on a
LongMemEval S file, and the same digests (tests hold the two byte for byte).
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections import OrderedDict
from functools import partial
from typing import Any

import orjson

from harness.scenarios.models import ItemSpec, Scenario, Session

_SHARED_PARTS = ("sessions", "items")
_part_cache: OrderedDict[int, tuple[list[Any], bytes]] = OrderedDict()
#: Lists kept: a conversation's probes come one after another (ids sorted), so a few serve them all; each entry
#: holds its list alive, and 64 held 32 LongMemEval haystacks (~200 MB) after a run's suite was shelved.
_PART_CACHE_SIZE = 8


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _part_json(part: list[Any]) -> bytes:
    """Canonical JSON of a ``sessions`` or ``items`` list, computed once per list object.

    A conversation's probes share these lists, so 200 probes serialize them
    once. The cache holds the list itself, so its ``id`` cannot be reused while
    cached; scenarios are frozen and these lists are never changed in place.
    """
    known = _part_cache.get(id(part))
    if known is not None and known[0] is part:
        _part_cache.move_to_end(id(part))
        return known[1]
    text = b"[" + b",".join(map(_entry_json, part)) + b"]"  # the bytes of _canonical(list): one entry at a time
    _part_cache[id(part)] = (part, text)
    while len(_part_cache) > _PART_CACHE_SIZE:
        _part_cache.popitem(last=False)
    return text


_entry_cache: OrderedDict[int, tuple[weakref.ref[Any], bytes]] = OrderedDict()
_ENTRY_CACHE_SIZE = 65_536
_dead_entries: list[int] = []  # ids whose entry died (weak-reference callbacks), dropped at the next call


def _note_dead(key: int, _ref: object) -> None:
    """Weak-reference callback: ``key``'s entry died; its cache line goes at the next call."""
    _dead_entries.append(key)


def _entry_json(entry: Any) -> bytes:
    """Canonical JSON of one session or item, computed once per object (bounded, least recently used out).

    ``--store`` gives every probe its own list (the items created before it), of the same item objects: the
    lists differ, their entries do not. The entry is held weakly (its JSON goes when it does: a shelved
    suite's items are let go once packed, :mod:`harness.scenarios.shelf`); a dead entry's id is never matched.
    """
    while _dead_entries:
        key = _dead_entries.pop()
        held = _entry_cache.get(key)
        if held is not None and held[0]() is None:
            del _entry_cache[key]
    known = _entry_cache.get(id(entry))
    if known is not None and known[0]() is entry:
        return known[1]
    text = _entry_canonical(entry)
    _entry_cache[id(entry)] = (weakref.ref(entry, partial(_note_dead, id(entry))), text)
    if len(_entry_cache) > _ENTRY_CACHE_SIZE:
        _entry_cache.popitem(last=False)
    return text


#: Models whose JSON dump holds only strings, ints, booleans, nulls, lists and str-keyed mappings (no float field at
#: any depth: a test walks their schemas), so orjson writes exactly what :func:`_canonical` writes.
FLOATLESS: tuple[type, ...] = (Session, ItemSpec)
_SORTED = orjson.OPT_SORT_KEYS


def _entry_canonical(entry: Any) -> bytes:
    """:func:`_canonical` of a session's or item's JSON dump, by orjson where it writes the same bytes.

    Anything else, and a value orjson refuses (an int past 64 bits, a lone surrogate), goes through
    ``json.dumps``, as always.
    """
    data = entry.model_dump(mode="json", by_alias=True)
    if entry.__class__ in FLOATLESS:
        try:
            return orjson.dumps(data, option=_SORTED)
        except orjson.JSONEncodeError:
            pass
    return _canonical(data)


#: Stand-ins for the shared parts in the per-probe JSON (a NUL cannot occur unescaped in JSON text).
_MARKS = {name: f"\x00recall-eval:{name}\x00" for name in _SHARED_PARTS}
_MARK_JSON = {name: _canonical(mark) for name, mark in _MARKS.items()}


def scenario_hash(scenario: Scenario) -> str:
    """SHA-256 of the scenario's canonical JSON, to spot edited fixtures.

    The canonical JSON is ``json.dumps`` of the whole scenario with sorted
    keys and no spaces. It is fed to the hash in pieces so that the sessions
    and items a conversation's probes share are serialized once: the rest of
    the scenario is serialized in one call with a stand-in string for each
    shared part, and the hash reads the text around each stand-in and the
    part's cached JSON in its place. Should a scenario's own text hold a
    stand-in, the keys are serialized one by one instead (same hash).
    The ``$schema`` editor hint is left out, so moving a file does not change its hash,
    and so are a ``protocol`` and a ``retrieval_budget`` that are not set, so suites without them hash as they did before;
    likewise ``expect.unlabelled`` when false and ``expect.logged_reply`` when unset. A schema 2
    scenario hashes as its schema 1 form: version 2 changes only how a file may write an item's content
    (:mod:`harness.scenarios.quotes`), and the loaded scenario holds the content either way.
    """
    data = scenario.model_dump(mode="json", by_alias=True, exclude={"schema_", *_SHARED_PARTS})
    if data.get("schema_version") == 2:  # 2 only lets a file quote a turn, resolved on loading: it hashes as its 1 form
        data["schema_version"] = 1
    for optional in ("protocol", "retrieval_budget"):  # unset: the scenario hashes as it did before the field existed
        if data.get(optional) is None:
            data.pop(optional, None)
    expect = data.get("expect") or {}
    for name, unset in (("unlabelled", False), ("logged_reply", None)):  # labelled scenarios hash as they did before
        if expect.get(name, unset) == unset:
            expect.pop(name, None)
    text = _canonical({**data, **_MARKS})
    found = sorted((text.find(mark), name) for name, mark in _MARK_JSON.items() if text.count(mark) == 1)
    if len(found) != len(_MARKS):
        return _hash_key_by_key(scenario, data)
    digest = hashlib.sha256()
    start = 0
    for at, name in found:
        digest.update(text[start:at])
        digest.update(_part_json(getattr(scenario, name)))
        start = at + len(_MARK_JSON[name])
    digest.update(text[start:])
    return digest.hexdigest()


def _hash_key_by_key(scenario: Scenario, data: dict[str, Any]) -> str:
    """:func:`scenario_hash` serializing each top-level key on its own (for a scenario whose text holds a stand-in)."""
    parts = {name: getattr(scenario, name) for name in _SHARED_PARTS}
    digest = hashlib.sha256(b"{")
    for index, key in enumerate(sorted([*data, *parts])):
        digest.update((b"," if index else b"") + _canonical(key) + b":")
        digest.update(_part_json(parts[key]) if key in parts else _canonical(data[key]))
    digest.update(b"}")
    return digest.hexdigest()
