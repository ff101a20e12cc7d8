"""memory_tools: a SQLite memory item store and Host-owned model tools over it.

This package knows nothing of the harness. Public surface:

- :class:`MemoryItemStore` and its records (``MemoryItem``, ``MemoryItemRecord``, ...);
- :func:`normalize_search_term`, the one normalization of keys and query terms;
- the Host read path (``MemoryPolicy``, ``RunContext``, ``admission``, ``Host``);
- named memories (seed 004): ``NamedMemoryStore`` and its ``remember``/``recall``/``forget``
  tools (``open_named_run``).
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
from memory_tools.normalize import (
    NormalizedItem,
    normalize_content,
    normalize_identifier,
    normalize_search_term,
    validate_item_input,
)
from memory_tools.store import SCHEMA_VERSION, MemoryItemStore
from memory_tools.policy import TOOL_NAMES, DenialReason, MemoryPolicy, RunContext, admission, item_in_scope
from memory_tools.host import Host, HostConfigurationError, MemoryRun, ToolCallRecord
from memory_tools.named import NamedIdentity, NamedMemory, NamedMemoryStore, WriteEvent
from memory_tools.named_tools import NAMED_TOOL_NAMES, NamedMemoryRun, open_named_run

__all__ = [
    "NAMED_TOOL_NAMES",
    "NamedIdentity",
    "NamedMemory",
    "NamedMemoryRun",
    "NamedMemoryStore",
    "WriteEvent",
    "open_named_run",
    "TOOL_NAMES",
    "DenialReason",
    "admission",
    "item_in_scope",
    "Host",
    "HostConfigurationError",
    "MemoryPolicy",
    "MemoryRun",
    "RunContext",
    "ToolCallRecord",
    "SCHEMA_VERSION",
    "MemoryItemStore",
    "NormalizedItem",
    "normalize_content",
    "normalize_identifier",
    "normalize_search_term",
    "validate_item_input",
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
