"""Records and enumerations of the memory item store.

These mirror the product's ``MemoryItem``/``MemoryItemRecord`` contracts
(``../shared/design/memory-semantics.md``) in snake_case. Records are frozen
dataclasses: cheap to build on the seeding hot path, immutable once returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """What sort of durable statement an item holds."""

    PREFERENCE = "preference"
    IDENTITY = "identity"
    CONTEXT = "context"
    KNOWLEDGE = "knowledge"
    FAILURE = "failure"
    NOTE = "note"


class StatementType(StrEnum):
    FACT = "fact"
    PLAN = "plan"
    PREDICTION = "prediction"


class TemporalType(StrEnum):
    """undated: no bounds; point: start, optional later end; interval: start
    and later end; open_ended: start and no end."""

    UNDATED = "undated"
    POINT = "point"
    INTERVAL = "interval"
    OPEN_ENDED = "open_ended"


class ScopeType(StrEnum):
    GLOBAL = "global"
    WORKSPACE = "workspace"


class LifecycleState(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"


class Origin(StrEnum):
    """How the current content was produced."""

    AGENT_EXTRACTED = "agent_extracted"
    USER_REQUESTED = "user_requested"


class KeyType(StrEnum):
    EXACT = "exact"
    ENTITY = "entity"
    CONCEPT = "concept"
    ALIAS = "alias"
    CODE = "code"


class KeyOrigin(StrEnum):
    DETERMINISTIC = "deterministic"
    LLM = "llm"
    USER = "user"


class MatchMode(StrEnum):
    EXACT = "exact"
    PREFIX = "prefix"


@dataclass(frozen=True, slots=True)
class KeyInput:
    """A key as a writer supplies it, before normalization."""

    key: str
    key_type: KeyType = KeyType.CONCEPT
    key_origin: KeyOrigin = KeyOrigin.LLM


@dataclass(frozen=True, slots=True)
class MemoryItemKey:
    """A stored key: the winning original text plus its normalized form."""

    key: str
    key_type: KeyType
    key_origin: KeyOrigin
    normalized_key: str


@dataclass(frozen=True, slots=True)
class MemoryItemSource:
    """Durable provenance of the current content: one runtime event."""

    session_id: str
    run_id: str
    turn_id: str
    event_id: str


@dataclass(frozen=True, slots=True)
class MemoryItem:
    item_id: str
    version: int
    content: str
    kind: Kind
    statement_type: StatementType
    temporal_type: TemporalType
    scope_type: ScopeType
    scope_key: str | None
    event_started_at: int | None
    event_ended_at: int | None
    observed_at: int
    lifecycle_state: LifecycleState
    origin: Origin
    content_hash: str
    created_at: int
    updated_at: int


@dataclass(frozen=True, slots=True)
class MemoryItemRecord:
    """An item with its keys (sorted by normalized key) and its sources."""

    item: MemoryItem
    keys: tuple[MemoryItemKey, ...]
    sources: tuple[MemoryItemSource, ...]


@dataclass(frozen=True, slots=True)
class ItemInput:
    """Everything needed to create one item (``MemoryItemStore.create``/``bulk_create``).

    ``item_id`` None lets the store mint one. ``now`` None uses the wall clock;
    seeding passes fixed times so runs are reproducible.
    """

    content: str
    kind: Kind
    keys: tuple[KeyInput, ...]
    sources: tuple[MemoryItemSource, ...]
    statement_type: StatementType = StatementType.FACT
    temporal_type: TemporalType = TemporalType.UNDATED
    scope_type: ScopeType = ScopeType.GLOBAL
    scope_key: str | None = None
    event_started_at: int | None = None
    event_ended_at: int | None = None
    observed_at: int | None = None
    origin: Origin = Origin.AGENT_EXTRACTED
    item_id: str | None = None
    now: int | None = None


class MemoryStoreError(Exception):
    """Base of every error the store raises for bad input or state."""


class MemoryValidationError(MemoryStoreError, ValueError):
    """Input breaks a rule; the message names the field and the limit."""


class MemoryConflictError(MemoryStoreError):
    """The request conflicts with stored state (duplicate id, bad transition)."""


class MemoryNotFoundError(MemoryStoreError, LookupError):
    """The item id names no stored item."""
