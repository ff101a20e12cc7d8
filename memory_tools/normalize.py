"""The rules of every value the memory store accepts.

One module holds them so the store, the Host and the scenario validator apply
the same rules with the same messages (``../shared/design/memory-semantics.md``):

- :func:`normalize_search_term`: the one normalization of stored keys and query terms;
- :func:`normalize_identifier`: item ids, workspace keys and source ids;
- :func:`normalize_content`: item content;
- :func:`validate_item_input`: every create-time rule of an item, pure (no database).

Every failure is a :class:`MemoryValidationError` whose message names the field,
the value or limit at fault.

Example:
    >>> normalize_search_term("  Straße\\u3000\\u3000Ａ ")
    'straße ａ'
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from memory_tools.model import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    MemoryItemKey,
    MemoryItemSource,
    MemoryValidationError,
    Origin,
    ScopeType,
    StatementType,
    TemporalType,
)

MAX_TERM_CODE_POINTS = 256
MAX_IDENTIFIER_CODE_POINTS = 512
MAX_CONTENT_CODE_POINTS = 2000
MAX_KEYS_PER_ITEM = 32
MAX_SOURCES_PER_ITEM = 256

# JavaScript's String.prototype.trim set (WhiteSpace + LineTerminator).
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
# Inside a term: Cc controls, zero-width characters, BOM and lone surrogates are errors.
_TERM_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200d\ufeff\ud800-\udfff]")
# What is left of the whitespace set once the forbidden characters are gone.
_WHITESPACE_RUN = re.compile("[ \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Every Unicode format character (category Cf) of Python 3.11's Unicode 14: soft hyphen, zero-width space and
#: joiners, bidi marks and isolates, word joiner, BOM, tags ... (tests/memory_tools check it against unicodedata).
FORMAT_CHARACTERS = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)

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


def _fail(message: str) -> MemoryValidationError:
    return MemoryValidationError(message)


class _Invalid(Exception):
    """A rule broken by a value; the caller prefixes the field name (built only on failure)."""


def _term_parts(text: object) -> tuple[str, str]:
    """Return ``(nfc_trimmed_original, normalized)`` for a key or term (design steps 1-5)."""
    if type(text) is not str:
        if not isinstance(text, str):
            raise _Invalid(f"must be a string (got {type(text).__name__})")
        text = str(text)
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    trimmed = text.strip(_JS_WHITESPACE)
    if not trimmed:
        raise _Invalid("must not be empty or only whitespace")
    bad = _TERM_FORBIDDEN.search(trimmed)
    if bad is not None:
        raise _Invalid(
            "must not contain control, zero-width or lone surrogate characters "
            f"(found U+{ord(bad.group()):04X} at position {bad.start()} of {trimmed!r})"
        )
    if len(trimmed) > MAX_TERM_CODE_POINTS:
        raise _Invalid(f"must be at most {MAX_TERM_CODE_POINTS} code points after NFC and trimming (got {len(trimmed)})")
    return trimmed, _WHITESPACE_RUN.sub(" ", trimmed).lower()


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


def normalize_search_term(text: object, field: str = "term") -> str:
    """Normalize a stored key or a query term; both go through this one function.

    NFC, trim JavaScript whitespace, reject empty text, inner control/zero-width
    characters and lone surrogates, reject more than 256 code points (counted
    before collapsing and lowercasing), collapse whitespace runs to one space,
    then ``str.lower`` (no NFKC, no casefold).

    Args:
        text: The raw key or term.
        field: Name used in error messages, e.g. ``"keys[3].key"``.

    Raises:
        MemoryValidationError: The text breaks a rule; the message names ``field``.

    Example:
        >>> normalize_search_term(" 偏好 ") == normalize_search_term("偏好")
        True
    """
    try:
        return _term_parts(text)[1]
    except _Invalid as problem:
        raise _fail(f"{field} {problem}") from None


def _check_identifier(value: object) -> str:
    if type(value) is str and 0 < len(value) <= MAX_IDENTIFIER_CODE_POINTS and value.isascii():
        if value.strip(_JS_WHITESPACE) == value:  # ASCII: already NFC, no surrogates
            return value
    if not isinstance(value, str):
        raise _Invalid(f"must be a string (got {type(value).__name__})")
    if not 1 <= len(value) <= MAX_IDENTIFIER_CODE_POINTS:
        raise _Invalid(f"must hold 1..{MAX_IDENTIFIER_CODE_POINTS} code points (got {len(value)})")
    if value.strip(_JS_WHITESPACE) != value:
        raise _Invalid(f"must not start or end with whitespace (got {value!r})")
    if _SURROGATE.search(value) is not None:
        raise _Invalid(f"must not contain lone surrogates (got {value!r})")
    if not unicodedata.is_normalized("NFC", value):
        raise _Invalid(f"must already be NFC-normalized (got {value!r})")
    return str(value)


def normalize_identifier(value: object, field: str) -> str:
    """Check an identifier (item id, workspace key, source id) and return it unchanged.

    Identifiers are compared case-sensitively, so they are never rewritten:
    they must already be NFC, have no surrounding whitespace and hold 1..512 code points.

    Raises:
        MemoryValidationError: Naming ``field`` and the rule broken.
    """
    try:
        return _check_identifier(value)
    except _Invalid as problem:
        raise _fail(f"{field} {problem}") from None


def normalize_content(text: object, field: str = "content") -> str:
    """Normalize item content: NFC, controls to spaces, zero-width removed, trimmed.

    The result must be non-empty and at most 2,000 code points, measured after
    normalization.

    Raises:
        MemoryValidationError: Naming ``field`` and the rule broken.
    """
    if not isinstance(text, str):
        raise _fail(f"{field} must be a string (got {type(text).__name__})")
    if not text.isascii():
        if _SURROGATE.search(text) is not None:
            raise _fail(f"{field} must not contain lone surrogates")
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        text = _ZERO_WIDTH.sub("", text)
    if not text.isprintable():  # every _CONTROL character is unprintable: printable text has none to replace
        text = _CONTROL.sub(" ", text)
    text = text.strip(_JS_WHITESPACE)
    if not text:
        raise _fail(f"{field} must not be empty after normalization")
    if len(text) > MAX_CONTENT_CODE_POINTS:
        raise _fail(f"{field} must be at most {MAX_CONTENT_CODE_POINTS} code points after normalization (got {len(text)})")
    return text


def strip_format_characters(text: str) -> str:
    """``text`` without Unicode format characters (category Cf), which change no visible letter.

    What text matching uses on both sides (answers, canaries, expectations,
    forbidden patterns: ``harness.score.matching``), so ``North\u200bwind`` or
    ``North\u00adwind`` is ``Northwind``. Item content keeps its own, narrower
    rule (:func:`normalize_content` removes the four zero-width characters).

    Example:
        >>> strip_format_characters("North" + chr(0x200B) + "wind, sh" + chr(0xAD) + "ip")
        'Northwind, ship'
    """
    return text if text.isascii() else FORMAT_CHARACTERS.sub("", text)


def content_hash(content: str) -> str:
    """SHA-256 hex digest of the UTF-8 content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


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


def check_time(value: object, field: str, *, optional: bool) -> int | None:
    """Check a UTC-millisecond time: a non-negative int (None allowed when ``optional``)."""
    if value is None and optional:
        return None
    if type(value) is not int or value < 0:  # bool is not a time
        expected = "a non-negative integer (UTC milliseconds)" + (" or null" if optional else "")
        raise _fail(f"{field} must be {expected} (got {value!r})")
    return value


def wall_clock_ms() -> int:
    """The current UTC time in milliseconds."""
    return time.time_ns() // 1_000_000


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


def _normalize_keys(keys: object, field: str = "keys") -> tuple[MemoryItemKey, ...]:
    """Normalize and de-duplicate an item's keys; return the winners sorted by normalized key.

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
    return NormalizedItem(
        item_id=item_id,
        content=content,
        content_hash=content_hash(content),
        kind=kind,
        statement_type=statement_type,
        temporal_type=temporal_type,
        scope_type=scope_type,
        scope_key=_check_scope(scope_type, item.scope_key),
        event_started_at=start,
        event_ended_at=end,
        observed_at=now if observed_at is None else observed_at,
        origin=origin,
        keys=_normalize_keys(item.keys),
        sources=_normalize_sources(item.sources),
        now=now,
    )
