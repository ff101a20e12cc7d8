"""The SQLite schema of the memory item store: DDL, pragmas, row layouts.

Layout (measured with ``benchmarks/store_bench.py``):

- ``memory_item_key`` carries copies of its item's ``scope_key``, archived
  flag and ``updated_at``, so a key search never touches ``memory_item``
  until the few ranked records are read. Every write that changes those item
  fields rewrites the copies in the same transaction.
- Two covering indexes over the key rows: ``memory_item_key_search``
  (key first: a selective term is a short range) and ``memory_item_key_recent``
  (scope and recency first: a term that matches thousands of keys is answered
  by walking the newest rows until ``limit`` items matched, see
  :mod:`memory_tools._search`).
- File databases use WAL with ``synchronous=NORMAL`` (durable across
  application crashes, may lose the last commits on power loss: acceptable
  for an evaluation store that is re-seeded per sample). ``:memory:`` keeps
  SQLite's in-memory journal so rollbacks still work.
- A fresh ``:memory:`` store is a copy of a serialized empty database built
  once per process: ~25 µs instead of ~200 µs of DDL per sample.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Any, Final

from memory_tools.model import (
    KeyOrigin,
    KeyType,
    Kind,
    LifecycleState,
    MemoryItem,
    MemoryItemKey,
    MemoryItemSource,
    MemoryStoreError,
    Origin,
    ScopeType,
    StatementType,
    TemporalType,
)

SCHEMA_VERSION: Final = 2
"""2 added ``memory_item_key_recent``; a version-1 file gets it when opened."""

_RECENT_INDEX = (
    "CREATE INDEX memory_item_key_recent "
    "ON memory_item_key (archived, scope_key, updated_at DESC, item_id, normalized_key)"
)
_SEARCH_INDEX = (
    "CREATE INDEX memory_item_key_search\n"
    "    ON memory_item_key (normalized_key, archived, scope_key, updated_at DESC, item_id)"
)
#: The key rows' secondary indexes, by name, as the schema creates them.
_KEY_INDEXES = (("memory_item_key_search", _SEARCH_INDEX), ("memory_item_key_recent", _RECENT_INDEX))
DEFERRED_INDEX_ROWS: Final = 4_096
"""From this many key rows into an empty store, the key indexes are built after the rows, not row by row."""
_DDL = f"""
CREATE TABLE memory_item (
    item_id TEXT NOT NULL PRIMARY KEY,
    version INTEGER NOT NULL CHECK (version >= 1),
    content TEXT NOT NULL,
    kind TEXT NOT NULL,
    statement_type TEXT NOT NULL,
    temporal_type TEXT NOT NULL,
    scope_type TEXT NOT NULL,
    scope_key TEXT,
    event_started_at INTEGER,
    event_ended_at INTEGER,
    observed_at INTEGER NOT NULL,
    lifecycle_state TEXT NOT NULL,
    origin TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    CHECK ((scope_type = 'global') = (scope_key IS NULL))
);
CREATE TABLE memory_item_key (
    item_id TEXT NOT NULL REFERENCES memory_item (item_id),
    normalized_key TEXT NOT NULL,
    key TEXT NOT NULL,
    key_type TEXT NOT NULL,
    key_origin TEXT NOT NULL,
    scope_key TEXT,              -- copy of memory_item.scope_key (search filter)
    archived INTEGER NOT NULL,   -- copy of memory_item.lifecycle_state = 'archived'
    updated_at INTEGER NOT NULL, -- copy of memory_item.updated_at (ranking)
    PRIMARY KEY (item_id, normalized_key)
) WITHOUT ROWID;
{_SEARCH_INDEX};
{_RECENT_INDEX};
CREATE TABLE memory_item_source (
    item_id TEXT NOT NULL REFERENCES memory_item (item_id),
    position INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
PRAGMA user_version = {SCHEMA_VERSION};
"""

ITEM_COLUMNS: Final = (
    "item_id, version, content, kind, statement_type, temporal_type, scope_type, scope_key, event_started_at, "
    "event_ended_at, observed_at, lifecycle_state, origin, content_hash, created_at, updated_at"
)
INSERT_ITEM: Final = f"INSERT INTO memory_item ({ITEM_COLUMNS}) VALUES ({', '.join('?' * 16)})"
UPDATE_ITEM: Final = f"UPDATE memory_item SET ({ITEM_COLUMNS}) = ({', '.join('?' * 16)}) WHERE item_id = ?"
INSERT_KEY: Final = (
    "INSERT INTO memory_item_key (item_id, normalized_key, key, key_type, key_origin, scope_key, archived, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_SOURCE: Final = (
    "INSERT INTO memory_item_source (item_id, position, session_id, run_id, turn_id, event_id) VALUES (?, ?, ?, ?, ?, ?)"
)

# Page cache of a file store: the key indexes of 100,000 items are ~80 MB; SQLite's
# default 2 MB cache makes seeding thrash once the B-trees outgrow it.
_FILE_CACHE_KIB = 65536

_KINDS = {m.value: m for m in Kind}
_STATEMENTS = {m.value: m for m in StatementType}
_TEMPORALS = {m.value: m for m in TemporalType}
_SCOPES = {m.value: m for m in ScopeType}
_STATES = {m.value: m for m in LifecycleState}
_ORIGINS = {m.value: m for m in Origin}
_KEY_TYPES = {m.value: m for m in KeyType}
_KEY_ORIGINS = {m.value: m for m in KeyOrigin}


def connect(path: str) -> sqlite3.Connection:
    """Open ``path`` (``":memory:"``, ``""`` or a file) as a memory store with the current schema.

    Raises:
        MemoryStoreError: The file holds another database or an unknown schema version.
        sqlite3.Error: SQLite could not open or read the file.
    """
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        if path == ":memory:" and hasattr(db, "deserialize"):
            db.deserialize(_empty_image())
        else:
            _prepare_file(db, path)
        db.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        db.close()
        raise
    return db


@cache
def _empty_image() -> bytes:
    """A serialized empty database with the schema, built once per process."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        db.executescript(f"BEGIN;{_DDL}COMMIT;")
        return db.serialize()
    finally:
        db.close()


def _prepare_file(db: sqlite3.Connection, path: str) -> None:
    if path != "":
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(f"PRAGMA cache_size = -{_FILE_CACHE_KIB}")
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if version == 1:  # the same tables without the recency index
        db.executescript(f"BEGIN IMMEDIATE;{_RECENT_INDEX};PRAGMA user_version = {SCHEMA_VERSION};COMMIT;")
        return
    has_tables = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
    if version != 0 or has_tables:
        raise MemoryStoreError(
            f"{path!r} is not a memory store of schema version {SCHEMA_VERSION} "
            f"(user_version {version}, {has_tables} tables); use a new file"
        )
    db.executescript(f"BEGIN IMMEDIATE;{_DDL}COMMIT;")


def placeholders(count: int) -> str:
    """``"?, ?, ..."`` with ``count`` marks."""
    return ", ".join("?" * count)


def row_to_item(row: Sequence[Any]) -> MemoryItem:
    """A ``memory_item`` row in :data:`ITEM_COLUMNS` order as a record."""
    return MemoryItem(
        row[0], row[1], row[2], _KINDS[row[3]], _STATEMENTS[row[4]], _TEMPORALS[row[5]], _SCOPES[row[6]],
        row[7], row[8], row[9], row[10], _STATES[row[11]], _ORIGINS[row[12]], row[13], row[14], row[15],
    )  # fmt: skip


def row_to_key(key: str, key_type: str, key_origin: str, normalized_key: str) -> MemoryItemKey:
    return MemoryItemKey(key, _KEY_TYPES[key_type], _KEY_ORIGINS[key_origin], normalized_key)


def item_row(item: MemoryItem) -> tuple[Any, ...]:
    """Parameters of :data:`INSERT_ITEM` (StrEnum members bind as TEXT: no ``.value`` lookups)."""
    return (
        item.item_id, item.version, item.content, item.kind, item.statement_type,
        item.temporal_type, item.scope_type, item.scope_key, item.event_started_at,
        item.event_ended_at, item.observed_at, item.lifecycle_state, item.origin,
        item.content_hash, item.created_at, item.updated_at,
    )  # fmt: skip


def key_rows(item: MemoryItem, keys: Iterable[MemoryItemKey]) -> Iterator[tuple[Any, ...]]:
    """Parameters of :data:`INSERT_KEY`, with the item's search copies."""
    archived = int(item.lifecycle_state is LifecycleState.ARCHIVED)
    for k in keys:
        yield (item.item_id, k.normalized_key, k.key, k.key_type, k.key_origin,
               item.scope_key, archived, item.updated_at)  # fmt: skip


def insert_key_rows(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """:data:`INSERT_KEY` for ``rows``, inside the caller's transaction.

    Seeding a fresh store writes ~12 key rows per item (a LongMemEval S
    question: ~8,000): updating two secondary indexes row by row was most of
    the insert. Into an empty key table, from :data:`DEFERRED_INDEX_ROWS`
    rows, the indexes are dropped and built again after the rows (one sort
    each), with the same SQL, so the store is the same; a failed insert rolls
    the drop back with the rest.
    """
    if len(rows) >= DEFERRED_INDEX_ROWS and db.execute("SELECT 1 FROM memory_item_key LIMIT 1").fetchone() is None:
        for name, _ in _KEY_INDEXES:
            db.execute(f"DROP INDEX {name}")
        db.executemany(INSERT_KEY, rows)
        for _, create in _KEY_INDEXES:
            db.execute(create)
        return
    db.executemany(INSERT_KEY, rows)


def source_rows(item_id: str, sources: Iterable[MemoryItemSource]) -> Iterator[tuple[Any, ...]]:
    """Parameters of :data:`INSERT_SOURCE`, numbered in order."""
    for position, s in enumerate(sources):
        yield item_id, position, s.session_id, s.run_id, s.turn_id, s.event_id
