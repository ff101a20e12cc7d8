"""memory_tools: a SQLite memory item store and Host-owned model tools over it.

This package knows nothing of the harness. Public surface:

- :class:`MemoryItemStore` and its records (``MemoryItem``, ``MemoryItemRecord``, ...);
- :func:`normalize_search_term`, the one normalization of keys and query terms;
- the Host read path (``MemoryPolicy``, ``RunContext``, ``Host``), added by the host module.
"""

from memory_tools.model import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    LifecycleState,
    MatchMode,
    MemoryConflictError,
    MemoryItem,
    MemoryItemKey,
    MemoryItemRecord,
    MemoryItemSource,
    MemoryNotFoundError,
    MemoryStoreError,
    MemoryValidationError,
    Origin,
    ScopeType,
    StatementType,
    TemporalType,
)

__all__ = [
    "ItemInput",
    "KeyInput",
    "KeyOrigin",
    "KeyType",
    "Kind",
    "LifecycleState",
    "MatchMode",
    "MemoryConflictError",
    "MemoryItem",
    "MemoryItemKey",
    "MemoryItemRecord",
    "MemoryItemSource",
    "MemoryNotFoundError",
    "MemoryStoreError",
    "MemoryValidationError",
    "Origin",
    "ScopeType",
    "StatementType",
    "TemporalType",
]
