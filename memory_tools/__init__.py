"""memory_tools: a SQLite memory item store and Host-owned model tools over it.

This package knows nothing of the harness. Public surface:

- :class:`MemoryItemStore` and its records (``MemoryItem``, ``MemoryItemRecord``, ...);
- :func:`normalize_search_term`, the one normalization of keys and query terms;
- the Host read path (``MemoryPolicy``, ``RunContext``, ``admission``, ``Host``);
- named memories (seed 004): ``NamedMemoryStore`` and its ``remember``/``recall``/``forget``
  tools (``open_named_run``);
- full-text search over the same store (``FullTextHost``, SQLite FTS5);
- vector search over the same store (``VectorHost``; numpy, :mod:`memory_tools.vectors`) and its
  fusion with full text (``HybridHost``, reciprocal-rank fusion), with the ``Embedder`` protocol and
  the deterministic offline ``LexicalEmbedder``;
- the argument checks every tool shares (``decode_arguments``, ``unknown_properties``,
  ``json_type``, ``show_value``, ``join_errors``), so a tool of another memory system
  reports a bad call in the same words.
"""

from memory_tools.disclosure import fit_disclosure, iso_utc
from memory_tools.fulltext import FullTextHost, FullTextRun
from memory_tools.host import Host, HostConfigurationError, MemoryRun, ToolCallRecord, record_arguments
from memory_tools.item_validation import NormalizedItem, check_item_input, validate_item_input
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
from memory_tools.named import NamedMemoryStore
from memory_tools.named_model import MAX_RECALL_LIMIT, NamedIdentity, NamedMemory, WriteEvent
from memory_tools.named_tools import NAMED_TOOL_NAMES, READ_TOOLS, WRITE_TOOLS, NamedMemoryRun, open_named_run
from memory_tools.normalize import (
    normalize_content,
    normalize_identifier,
    normalize_search_term,
    strip_format_characters,
)
from memory_tools.policy import (
    TOOL_NAMES,
    DenialReason,
    MemoryPolicy,
    RunContext,
    ToolArgumentError,
    admission,
    decode_arguments,
    item_in_scope,
    item_visible,
    join_errors,
    json_type,
    show_value,
    unknown_properties,
)
from memory_tools.store import SCHEMA_VERSION, MemoryItemStore
from memory_tools.vector_host import RRF_K, HybridHost, HybridRun, VectorHost, VectorRun, rrf_fuse
from memory_tools.vectors import (
    LEXICAL_DIM,
    LEXICAL_MODEL,
    Embedder,
    EmbeddingError,
    Embeddings,
    EmbeddingUsage,
    EmbedKind,
    LexicalEmbedder,
    VectorIndex,
    lexical_embedding,
)

__all__ = [
    "fit_disclosure",
    "iso_utc",
    "MAX_RECALL_LIMIT",
    "READ_TOOLS",
    "WRITE_TOOLS",
    "FullTextHost",
    "FullTextRun",
    "HybridHost",
    "HybridRun",
    "VectorHost",
    "VectorRun",
    "VectorIndex",
    "RRF_K",
    "rrf_fuse",
    "LEXICAL_DIM",
    "LEXICAL_MODEL",
    "EmbedKind",
    "Embedder",
    "EmbeddingError",
    "Embeddings",
    "EmbeddingUsage",
    "LexicalEmbedder",
    "lexical_embedding",
    "ToolArgumentError",
    "decode_arguments",
    "item_visible",
    "join_errors",
    "json_type",
    "record_arguments",
    "show_value",
    "unknown_properties",
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
    "strip_format_characters",
    "normalize_identifier",
    "normalize_search_term",
    "check_item_input",
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
