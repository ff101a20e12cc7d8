"""Every create-time rule of a memory item, pure (no database): :func:`validate_item_input`.

The store and the scenario validator both call it, so a scenario file is refused
with the store's own message. It applies the single-value rules of
:mod:`memory_tools.normalize` to each field and adds what only a whole item has:
its closed sets (kind, statement, temporal and scope types, origin), its times
taken together, its keys de-duplicated by priority, its sources by event id.

Every failure is a :class:`MemoryValidationError` whose message names the field,
the value or limit at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from memory_tools.model import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    MemoryItemKey,
    MemoryItemSource,
    Origin,
    ScopeType,
    StatementType,
    TemporalType,
)
from memory_tools.normalize import (
    _check_identifier,
    _fail,
    _Invalid,
    _term_parts,
    check_time,
    content_hash,
    normalize_content,
    normalize_identifier,
    wall_clock_ms,
)

MAX_KEYS_PER_ITEM = 32
MAX_SOURCES_PER_ITEM = 256

_KEY_ORIGIN_WEIGHT = {KeyOrigin.USER: 3, KeyOrigin.DETERMINISTIC: 2, KeyOrigin.LLM: 1}
_KEY_TYPE_WEIGHT = {KeyType.CODE: 5, KeyType.EXACT: 4, KeyType.ENTITY: 3, KeyType.CONCEPT: 2, KeyType.ALIAS: 1}

_E = TypeVar("_E", bound=StrEnum)


@dataclass(frozen=True, slots=True)
class NormalizedItem:
    """The normalized pieces of a valid :class:`ItemInput`, ready to store.

    Attributes:
        item_id: The checked id, or None when the store should mint one.
        keys: De-duplicated winners, sorted by normalized key; ``key`` holds the
            NFC, trimmed original text of the winner.
        sources: De-duplicated by event id, in first-seen order.
        observed_at: ``ItemInput.observed_at``, or ``now`` when it was None.
        now: ``ItemInput.now``, or the wall clock (or the caller's default) when None.
    """

    item_id: str | None
    content: str
    content_hash: str
    kind: Kind
    statement_type: StatementType
    temporal_type: TemporalType
    scope_type: ScopeType
    scope_key: str | None
    event_started_at: int | None
    event_ended_at: int | None
    observed_at: int
    origin: Origin
    keys: tuple[MemoryItemKey, ...]
    sources: tuple[MemoryItemSource, ...]
    now: int


_TERM_CACHE: dict[str, tuple[str, str]] = {}
_TERM_CACHE_SIZE = 65_536


def _cached_term_parts(text: object) -> tuple[str, str]:
    """:func:`_term_parts` of a key, remembered for the keys that pass (a suite repeats a few thousand keys
    hundreds of thousands of times: a LongMemEval S suite has ~12 keys per item, ~4,000 distinct per 50 files).

    Only exact ``str`` values are remembered (a subclass may compare equal yet differ), and only results:
    a key that breaks a rule is checked again each time, so its message is built as before.
    """
    if type(text) is str:
        held = _TERM_CACHE.get(text)
        if held is not None:
            return held
        parts = _term_parts(text)
        if len(_TERM_CACHE) >= _TERM_CACHE_SIZE:
            _TERM_CACHE.clear()  # bounded: a hostile suite of distinct keys never grows it past the size
        _TERM_CACHE[text] = parts
        return parts
    return _term_parts(text)


def _enum_lookup(enum: type[_E]) -> Mapping[object, _E]:
    return {member.value: member for member in enum}


_LOOKUPS: dict[type, Mapping[object, StrEnum]] = {
    e: _enum_lookup(e) for e in (Kind, StatementType, TemporalType, ScopeType, Origin, KeyType, KeyOrigin)
}


def _parse_enum(enum: type[_E], value: object, field: str) -> _E:
    """Return the ``enum`` member for a member or its string value.

    Raises:
        MemoryValidationError: Listing the allowed values.
    """
    try:
        member = _LOOKUPS[enum].get(value)
    except TypeError:  # unhashable value
        member = None
    if member is None:
        allowed = ", ".join(m.value for m in enum)
        raise _fail(f"{field} must be one of {allowed} (got {value!r})")
    return member  # type: ignore[return-value]


def _check_temporal(temporal: TemporalType, start: int | None, end: int | None) -> None:
    label = temporal.value.replace("_", "-")
    article = "an" if label[0] in "aeiou" else "a"
    if temporal is TemporalType.UNDATED:
        if start is not None or end is not None:
            raise _fail("event_started_at and event_ended_at must be null for an undated item")
        return
    if start is None:
        raise _fail(f"event_started_at is required for {article} {label} item")
    if temporal is TemporalType.OPEN_ENDED:
        if end is not None:
            raise _fail("event_ended_at must be null for an open-ended item")
    elif temporal is TemporalType.INTERVAL and end is None:
        raise _fail("event_ended_at is required for an interval item")
    if end is not None and end <= start:
        raise _fail(f"event_ended_at must be later than event_started_at for {article} {label} item")


def _check_scope(scope_type: ScopeType, scope_key: object) -> str | None:
    if scope_type is ScopeType.GLOBAL:
        if scope_key is not None:
            raise _fail(f"scope_key must be null for a global item (got {scope_key!r})")
        return None
    if scope_key is None:
        raise _fail("scope_key is required for a workspace item")
    return normalize_identifier(scope_key, "scope_key")


_KEY_TYPES = {m.value: m for m in KeyType}  # StrEnum members hash like their values
_KEY_ORIGINS = {m.value: m for m in KeyOrigin}
_PRIORITY = {
    (key_type, key_origin): _KEY_ORIGIN_WEIGHT[key_origin] * 10 + _KEY_TYPE_WEIGHT[key_type]
    for key_type in KeyType
    for key_origin in KeyOrigin
}


#: The winner of each normalized key: (priority, original text, type, origin).
_Winners = dict[str, tuple[int, str, KeyType, KeyOrigin]]


def _key_winners(keys: object, field: str = "keys") -> _Winners:
    """Check and de-duplicate an item's keys: the winner of each normalized key, as (priority, original, type, origin).

    The winner among keys with the same normalized text has the highest
    ``origin weight x 10 + type weight``; ties go to the smaller NFC, trimmed
    original text. 1..32 keys must remain.
    """
    if isinstance(keys, (str, bytes)) or not isinstance(keys, (tuple, list)):
        raise _fail(f"{field} must be a list of keys (got {type(keys).__name__})")
    best: dict[str, tuple[int, str, KeyType, KeyOrigin]] = {}
    for index, raw in enumerate(keys):
        if not isinstance(raw, (KeyInput, MemoryItemKey)):
            raise _fail(f"{field}[{index}] must be a KeyInput (got {type(raw).__name__})")
        try:
            key_type, key_origin = _KEY_TYPES[raw.key_type], _KEY_ORIGINS[raw.key_origin]
        except (KeyError, TypeError):  # name the field only on failure
            key_type = _parse_enum(KeyType, raw.key_type, f"{field}[{index}].key_type")
            key_origin = _parse_enum(KeyOrigin, raw.key_origin, f"{field}[{index}].key_origin")
        try:
            original, normalized = _cached_term_parts(raw.key)
        except _Invalid as problem:
            raise _fail(f"{field}[{index}].key {problem}") from None
        priority = _PRIORITY[key_type, key_origin]
        held = best.get(normalized)
        if held is None or priority > held[0] or (priority == held[0] and original < held[1]):
            best[normalized] = (priority, original, key_type, key_origin)
    if not 1 <= len(best) <= MAX_KEYS_PER_ITEM:
        raise _fail(f"{field} must hold 1..{MAX_KEYS_PER_ITEM} distinct keys after normalization (got {len(best)})")
    return best


def _stored_keys(best: _Winners) -> tuple[MemoryItemKey, ...]:
    """The winners of :func:`_key_winners` as stored keys, sorted by normalized key."""
    return tuple(
        _stored_key(original, key_type, key_origin, normalized)
        for normalized, (_, original, key_type, key_origin) in sorted(best.items())
    )


_STORED_KEYS: dict[str, MemoryItemKey] = {}


def _stored_key(original: str, key_type: KeyType, key_origin: KeyOrigin, normalized: str) -> MemoryItemKey:
    """``MemoryItemKey(original, key_type, key_origin, normalized)``, the same frozen instance for a key seen before
    (``original`` and ``normalized`` are exact ``str``, as :func:`_term_parts` returns them)."""
    held = _STORED_KEYS.get(original)
    if held is not None and held.key_type is key_type and held.key_origin is key_origin:  # normalized follows original
        return held
    made = MemoryItemKey(original, key_type, key_origin, normalized)
    if len(_STORED_KEYS) >= _TERM_CACHE_SIZE:
        _STORED_KEYS.clear()  # bounded, as the term cache
    _STORED_KEYS[original] = made
    return made


def _normalize_sources(sources: object, field: str = "sources") -> tuple[MemoryItemSource, ...]:
    """Check sources and de-duplicate them by event id (first occurrence kept).

    The same event id with different session/run/turn ids is an error; 1..256 must remain.
    """
    if isinstance(sources, (str, bytes)) or not isinstance(sources, (tuple, list)):
        raise _fail(f"{field} must be a list of sources (got {type(sources).__name__})")
    seen: dict[str, tuple[int, MemoryItemSource]] = {}
    for index, source in enumerate(sources):
        if not isinstance(source, MemoryItemSource):
            raise _fail(f"{field}[{index}] must be a MemoryItemSource (got {type(source).__name__})")
        for name in ("event_id", "session_id", "run_id", "turn_id"):
            try:
                _check_identifier(getattr(source, name))
            except _Invalid as problem:
                raise _fail(f"{field}[{index}].{name} {problem}") from None
        held = seen.get(source.event_id)
        if held is not None:
            if held[1] != source:
                raise _fail(
                    f"{field}[{index}]: event_id {source.event_id!r} already appears in {field}[{held[0]}] "
                    "with a different session_id, run_id or turn_id"
                )
            continue
        seen[source.event_id] = (index, source)
    if not 1 <= len(seen) <= MAX_SOURCES_PER_ITEM:
        raise _fail(f"{field} must hold 1..{MAX_SOURCES_PER_ITEM} distinct sources (got {len(seen)})")
    return tuple(entry[1] for entry in seen.values())


def validate_item_input(item: ItemInput, *, default_now: int | None = None) -> NormalizedItem:
    """Apply every create-time rule to ``item`` and return its normalized pieces.

    Pure: it touches no database, so the scenario validator can reuse the
    store's rules and messages. ``item.now`` None falls back to ``default_now``,
    then to the wall clock; ``item.observed_at`` None falls back to that ``now``.

    Raises:
        MemoryValidationError: At the first rule broken, naming the field,
            e.g. ``"keys[3].key must not be empty or only whitespace"``.
    """
    fields, keys = _checked(item, default_now)
    return NormalizedItem(**fields, content_hash=content_hash(fields["content"]), keys=_stored_keys(keys))


def check_item_input(item: ItemInput) -> None:
    """Apply every rule of :func:`validate_item_input` to ``item`` and build nothing (no hash, no stored keys).

    The scenario validator asks only whether the store accepts an item (a LongMemEval S suite: ~300,000 of them);
    the rules are the same code, in the same order, so the first broken rule raises the same message.

    Raises:
        MemoryValidationError: As :func:`validate_item_input`.
    """
    _checked(item, None)


def _checked(item: ItemInput, default_now: int | None) -> tuple[dict[str, Any], _Winners]:
    """Every create-time rule of ``item``, in the order its fields are checked (the first broken one raises).

    Returns the :class:`NormalizedItem` fields the rules produce (all but ``content_hash`` and ``keys``) and the
    winning keys (:func:`_key_winners`), from which :func:`validate_item_input` builds the stored ones.
    """
    if not isinstance(item, ItemInput):
        raise _fail(f"item must be an ItemInput (got {type(item).__name__})")
    item_id = None if item.item_id is None else normalize_identifier(item.item_id, "item_id")
    now = check_time(item.now, "now", optional=True)
    if now is None:
        now = wall_clock_ms() if default_now is None else default_now
    content = normalize_content(item.content)
    kind = _parse_enum(Kind, item.kind, "kind")
    statement_type = _parse_enum(StatementType, item.statement_type, "statement_type")
    temporal_type = _parse_enum(TemporalType, item.temporal_type, "temporal_type")
    scope_type = _parse_enum(ScopeType, item.scope_type, "scope_type")
    origin = _parse_enum(Origin, item.origin, "origin")
    start = check_time(item.event_started_at, "event_started_at", optional=True)
    end = check_time(item.event_ended_at, "event_ended_at", optional=True)
    _check_temporal(temporal_type, start, end)
    observed_at = check_time(item.observed_at, "observed_at", optional=True)
    scope_key = _check_scope(scope_type, item.scope_key)
    keys = _key_winners(item.keys)
    fields = {"item_id": item_id, "content": content, "kind": kind, "statement_type": statement_type,
              "temporal_type": temporal_type, "scope_type": scope_type, "scope_key": scope_key, "event_started_at": start,
              "event_ended_at": end, "observed_at": now if observed_at is None else observed_at, "origin": origin,
              "sources": _normalize_sources(item.sources), "now": now}
    return fields, keys
