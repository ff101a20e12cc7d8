"""The SQLite memory item store: create, update, archive/restore, read and key search.

Behaviour follows ``../shared/design/memory-semantics.md``; the value rules live
in :mod:`memory_tools.normalize`.

Storage choices (measured with ``benchmarks/store_bench.py``):

- ``memory_item_key`` carries copies of its item's ``scope_key``, archived flag
  and ``updated_at``, and one covering index
  ``(normalized_key, archived, scope_key, updated_at, item_id)``; a key search
  is therefore answered from that index alone, then the few ranked records
  are read with three ``IN (...)`` queries. Every write that changes those
  item fields rewrites the copies in the same transaction.
- Prefix search is the range ``term <= key < successor(term)``; SQLite compares
  TEXT with ``memcmp`` on UTF-8, which is code-point order. The successor skips
  the surrogate gap (U+D7FF -> U+E000) and drops trailing U+10FFFF, which has no
  successor; a term made only of U+10FFFF has no upper bound.
- File databases use WAL with ``synchronous=NORMAL`` (durable across
  application crashes, may lose the last commits on power loss: acceptable
  for an evaluation store that is re-seeded per sample). ``:memory:`` keeps
  SQLite's in-memory journal so rollbacks still work.
- One connection per store, guarded by a lock, so a store can be shared by threads.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Final

from memory_tools.model import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    LifecycleState,
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
    MAX_KEYS_PER_ITEM,
    NormalizedItem,
    check_time,
    normalize_identifier,
    normalize_search_term,
    validate_item_input,
    wall_clock_ms,
)

SCHEMA_VERSION: Final = 1
MAX_SEARCH_TERMS: Final = 32
MAX_SEARCH_RESULTS: Final = 100
DEFAULT_SEARCH_LIMIT: Final = 20


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()

_SCHEMA = """
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
CREATE INDEX memory_item_key_search
    ON memory_item_key (normalized_key, archived, scope_key, updated_at DESC, item_id);
CREATE TABLE memory_item_source (
    item_id TEXT NOT NULL REFERENCES memory_item (item_id),
    position INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
"""

_ITEM_COLUMNS = (
    "item_id, version, content, kind, statement_type, temporal_type, scope_type, scope_key, event_started_at, "
    "event_ended_at, observed_at, lifecycle_state, origin, content_hash, created_at, updated_at"
)
_INSERT_ITEM = f"INSERT INTO memory_item ({_ITEM_COLUMNS}) VALUES ({', '.join('?' * 16)})"
_INSERT_KEY = (
    "INSERT INTO memory_item_key (item_id, normalized_key, key, key_type, key_origin, scope_key, archived, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_SOURCE = (
    "INSERT INTO memory_item_source (item_id, position, session_id, run_id, turn_id, event_id) VALUES (?, ?, ?, ?, ?, ?)"
)

_KINDS = {m.value: m for m in Kind}
_STATEMENTS = {m.value: m for m in StatementType}
_TEMPORALS = {m.value: m for m in TemporalType}
_SCOPES = {m.value: m for m in ScopeType}
_STATES = {m.value: m for m in LifecycleState}
_ORIGINS = {m.value: m for m in Origin}
_KEY_TYPES = {m.value: m for m in KeyType}
_KEY_ORIGINS = {m.value: m for m in KeyOrigin}

# Page cache of a file store: the key index of 100,000 items is ~60 MB; SQLite's
# default 2 MB cache makes seeding thrash once the B-trees outgrow it.
_FILE_CACHE_KIB = 65536

_SURROGATE_GAP_START = 0xD800
_SURROGATE_GAP_END = 0xE000
_MAX_CODE_POINT = 0x10FFFF


def prefix_upper_bound(term: str) -> str | None:
    """The smallest string greater than every string that starts with ``term``.

    Returns None when no such string exists (``term`` is only U+10FFFF).

    Example:
        >>> prefix_upper_bound("ab"), prefix_upper_bound("a\\ud7ff") == "a\\ue000"
        ('ac', True)
    """
    stem = term.rstrip(chr(_MAX_CODE_POINT))
    if not stem:
        return None
    last = ord(stem[-1]) + 1
    if last == _SURROGATE_GAP_START:
        last = _SURROGATE_GAP_END
    return stem[:-1] + chr(last)


def _row_to_item(row: Sequence[Any]) -> MemoryItem:
    return MemoryItem(
        row[0], row[1], row[2], _KINDS[row[3]], _STATEMENTS[row[4]], _TEMPORALS[row[5]], _SCOPES[row[6]],
        row[7], row[8], row[9], row[10], _STATES[row[11]], _ORIGINS[row[12]], row[13], row[14], row[15],
    )  # fmt: skip


def _item_row(item: MemoryItem) -> tuple[Any, ...]:
    # StrEnum members bind as TEXT: no ``.value`` lookups on the seeding hot path.
    return (
        item.item_id, item.version, item.content, item.kind, item.statement_type,
        item.temporal_type, item.scope_type, item.scope_key, item.event_started_at,
        item.event_ended_at, item.observed_at, item.lifecycle_state, item.origin,
        item.content_hash, item.created_at, item.updated_at,
    )  # fmt: skip


def _key_rows(item: MemoryItem, keys: Iterable[MemoryItemKey]) -> Iterator[tuple[Any, ...]]:
    archived = int(item.lifecycle_state is LifecycleState.ARCHIVED)
    for k in keys:
        yield (item.item_id, k.normalized_key, k.key, k.key_type, k.key_origin,
               item.scope_key, archived, item.updated_at)  # fmt: skip


def _source_rows(item_id: str, sources: Iterable[MemoryItemSource]) -> Iterator[tuple[Any, ...]]:
    for position, s in enumerate(sources):
        yield item_id, position, s.session_id, s.run_id, s.turn_id, s.event_id


def _as_sequence(value: object) -> object:
    """Materialize a generic iterable of keys/sources; leave anything else for validation to reject."""
    if isinstance(value, (list, tuple, str, bytes)):
        return value
    try:
        return tuple(value)  # type: ignore[call-overload]
    except TypeError:
        return value


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


class MemoryItemStore:
    """A Host-owned store of atomic memory items in one SQLite database.

    Args:
        path: A database file (created with the schema when new) or ``":memory:"``.

    Raises:
        MemoryStoreError: The file is not a memory store, or its schema version is unknown.

    Example:
        >>> with MemoryItemStore() as store:
        ...     record = store.create(ItemInput(
        ...         content="Prefers tabs", kind=Kind.PREFERENCE, keys=(KeyInput("indentation"),),
        ...         sources=(MemoryItemSource("s1", "r1", "t1", "e1"),), now=1))
        ...     [r.item.content for r in store.search_by_keys(["indent"], "prefix")]
        ['Prefers tabs']
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self._path = os.fspath(path)
        self._lock = threading.RLock()
        self._in_memory = self._path in ("", ":memory:")
        try:
            self._db: sqlite3.Connection | None = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False
            )
            self._prepare_schema()
        except sqlite3.Error as error:
            raise MemoryStoreError(f"cannot open memory store {self._path!r}: {error}") from error

    # -- lifecycle of the store --------------------------------------------------------------------
    def _prepare_schema(self) -> None:
        db = self._conn()
        db.execute("PRAGMA foreign_keys = ON")
        if not self._in_memory:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(f"PRAGMA cache_size = -{_FILE_CACHE_KIB}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        has_tables = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        if version != 0 or has_tables:
            raise MemoryStoreError(
                f"{self._path!r} is not a memory store of schema version {SCHEMA_VERSION} "
                f"(user_version {version}, {has_tables} tables); use a new file"
            )
        with self._write():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    def path(self) -> str:
        return self._path

    @property
    def closed(self) -> bool:
        return self._db is None

    def schema_version(self) -> int:
        """The schema version recorded in the database (``PRAGMA user_version``)."""
        with self._lock:
            return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def journal_mode(self) -> str:
        """SQLite's journal mode: ``wal`` for file databases, ``memory`` for ``:memory:``."""
        with self._lock:
            return str(self._conn().execute("PRAGMA journal_mode").fetchone()[0])

    def close(self) -> None:
        """Close the database; closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> MemoryItemStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise MemoryStoreError(f"memory store {self._path!r} is closed")
        return self._db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock; rolled back on any error."""
        with self._lock:
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read snapshot under the lock."""
        with self._lock:
            db = self._conn()
            db.execute("BEGIN")
            try:
                yield db
            finally:
                if db.in_transaction:
                    db.execute("COMMIT")

    # -- writes ------------------------------------------------------------------------------------
    def create(self, item: ItemInput) -> MemoryItemRecord:
        """Create one item at version 1, state active.

        Raises:
            MemoryValidationError: ``item`` breaks a rule (see :func:`validate_item_input`).
            MemoryConflictError: Its ``item_id`` is already stored.
        """
        return self._insert([validate_item_input(item)])[0]

    def bulk_create(self, items: Iterable[ItemInput]) -> list[MemoryItemRecord]:
        """Create many items in one transaction: all are stored or none.

        Items without ``now`` share one wall-clock reading.

        Raises:
            MemoryValidationError: Naming the item, e.g. ``"items[4]: kind must be one of ..."``.
            MemoryConflictError: An id repeats in ``items`` or is already stored.
        """
        default_now = wall_clock_ms()
        normalized = []
        for index, item in enumerate(items):
            try:
                normalized.append(validate_item_input(item, default_now=default_now))
            except MemoryValidationError as error:
                raise MemoryValidationError(f"items[{index}]: {error}") from None
        return self._insert(normalized)

    def _insert(self, normalized: list[NormalizedItem]) -> list[MemoryItemRecord]:
        records: list[MemoryItemRecord] = []
        seen: set[str] = set()
        for n in normalized:
            item_id = n.item_id if n.item_id is not None else uuid.uuid4().hex
            if item_id in seen:
                raise MemoryConflictError(f"item_id {item_id!r} appears more than once in the batch")
            seen.add(item_id)
            item = MemoryItem(
                item_id, 1, n.content, n.kind, n.statement_type, n.temporal_type, n.scope_type, n.scope_key,
                n.event_started_at, n.event_ended_at, n.observed_at, LifecycleState.ACTIVE, n.origin,
                n.content_hash, n.now, n.now,
            )  # fmt: skip
            records.append(MemoryItemRecord(item, n.keys, n.sources))
        try:
            with self._write() as db:
                db.executemany(_INSERT_ITEM, [_item_row(r.item) for r in records])
                db.executemany(_INSERT_KEY, [row for r in records for row in _key_rows(r.item, r.keys)])
                db.executemany(_INSERT_SOURCE, [row for r in records for row in _source_rows(r.item.item_id, r.sources)])
        except sqlite3.IntegrityError as error:
            raise self._duplicate_error(sorted(seen)) from error
        return records

    def _duplicate_error(self, item_ids: list[str]) -> MemoryStoreError:
        with self._read() as db:
            for start in range(0, len(item_ids), 500):
                chunk = item_ids[start : start + 500]
                row = db.execute(
                    f"SELECT item_id FROM memory_item WHERE item_id IN ({_placeholders(len(chunk))}) LIMIT 1", chunk
                ).fetchone()
                if row is not None:
                    return MemoryConflictError(f"item_id {row[0]!r} already exists in the memory store")
        return MemoryStoreError("memory store rejected the write (integrity error)")

    def update(
        self,
        item_id: str,
        *,
        content: str = _UNSET,
        kind: Kind = _UNSET,
        statement_type: StatementType = _UNSET,
        temporal_type: TemporalType = _UNSET,
        event_started_at: int | None = _UNSET,
        event_ended_at: int | None = _UNSET,
        observed_at: int | None = _UNSET,
        origin: Origin = _UNSET,
        keys: Iterable[KeyInput] = _UNSET,
        sources: Iterable[MemoryItemSource] = _UNSET,
        now: int | None = None,
    ) -> MemoryItemRecord:
        """Change an item's content, classification, times, keys or sources (never its scope).

        The result is checked against every create-time rule. An update equal to
        the stored state returns the stored record unchanged; otherwise the
        version grows by 1 and ``updated_at`` becomes ``max(updated_at, now)``.
        An archived item may be updated and stays archived. ``observed_at=None``
        means ``now``.

        Raises:
            MemoryValidationError: A value breaks a rule.
            MemoryNotFoundError: No item has this id.
        """
        item_id = normalize_identifier(item_id, "item_id")
        now = check_time(now, "now", optional=True)
        now = wall_clock_ms() if now is None else now
        with self._write() as db:
            current = self._records(db, [item_id]).get(item_id)
            if current is None:
                raise MemoryNotFoundError(f"memory item {item_id!r} not found")
            old = current.item

            def pick(value: Any, stored: Any) -> Any:
                return stored if value is _UNSET else value

            n = validate_item_input(
                ItemInput(
                    content=pick(content, old.content),
                    kind=pick(kind, old.kind),
                    keys=pick(_as_sequence(keys), tuple(KeyInput(k.key, k.key_type, k.key_origin) for k in current.keys)),
                    sources=pick(_as_sequence(sources), current.sources),
                    statement_type=pick(statement_type, old.statement_type),
                    temporal_type=pick(temporal_type, old.temporal_type),
                    scope_type=old.scope_type,
                    scope_key=old.scope_key,
                    event_started_at=pick(event_started_at, old.event_started_at),
                    event_ended_at=pick(event_ended_at, old.event_ended_at),
                    observed_at=pick(observed_at, old.observed_at),
                    origin=pick(origin, old.origin),
                    item_id=item_id,
                    now=now,
                )
            )
            new = replace(
                old, content=n.content, content_hash=n.content_hash, kind=n.kind, statement_type=n.statement_type,
                temporal_type=n.temporal_type, event_started_at=n.event_started_at, event_ended_at=n.event_ended_at,
                observed_at=n.observed_at, origin=n.origin,
            )  # fmt: skip
            if new == old and n.keys == current.keys and n.sources == current.sources:
                return current
            new = replace(new, version=old.version + 1, updated_at=max(old.updated_at, now))
            db.execute(
                f"UPDATE memory_item SET ({_ITEM_COLUMNS}) = ({_placeholders(16)}) WHERE item_id = ?",
                (*_item_row(new), item_id),
            )
            if n.keys != current.keys:
                db.execute("DELETE FROM memory_item_key WHERE item_id = ?", (item_id,))
                db.executemany(_INSERT_KEY, _key_rows(new, n.keys))
            else:
                db.execute("UPDATE memory_item_key SET updated_at = ? WHERE item_id = ?", (new.updated_at, item_id))
            if n.sources != current.sources:
                db.execute("DELETE FROM memory_item_source WHERE item_id = ?", (item_id,))
                db.executemany(_INSERT_SOURCE, _source_rows(item_id, n.sources))
            return MemoryItemRecord(new, n.keys, n.sources)

    def archive(self, item_id: str, *, now: int | None = None) -> MemoryItemRecord:
        """Archive an active item (version + 1).

        Raises:
            MemoryConflictError: The item is already archived.
            MemoryNotFoundError: No item has this id.
        """
        return self._transition(item_id, LifecycleState.ARCHIVED, now)

    def restore(self, item_id: str, *, now: int | None = None) -> MemoryItemRecord:
        """Restore an archived item to active (version + 1).

        Raises:
            MemoryConflictError: The item is already active.
            MemoryNotFoundError: No item has this id.
        """
        return self._transition(item_id, LifecycleState.ACTIVE, now)

    def _transition(self, item_id: str, target: LifecycleState, now: int | None) -> MemoryItemRecord:
        item_id = normalize_identifier(item_id, "item_id")
        now = check_time(now, "now", optional=True)
        now = wall_clock_ms() if now is None else now
        with self._write() as db:
            current = self._records(db, [item_id]).get(item_id)
            if current is None:
                raise MemoryNotFoundError(f"memory item {item_id!r} not found")
            old = current.item
            if old.lifecycle_state is target:
                verb = "archive" if target is LifecycleState.ARCHIVED else "restore"
                raise MemoryConflictError(
                    f"invalid lifecycle transition for memory item {item_id!r}: cannot {verb} an item that is "
                    f"already {old.lifecycle_state.value}"
                )
            new = replace(old, lifecycle_state=target, version=old.version + 1, updated_at=max(old.updated_at, now))
            db.execute(
                "UPDATE memory_item SET lifecycle_state = ?, version = ?, updated_at = ? WHERE item_id = ?",
                (target.value, new.version, new.updated_at, item_id),
            )
            db.execute(
                "UPDATE memory_item_key SET archived = ?, updated_at = ? WHERE item_id = ?",
                (int(target is LifecycleState.ARCHIVED), new.updated_at, item_id),
            )
            return MemoryItemRecord(new, current.keys, current.sources)

    # -- reads -------------------------------------------------------------------------------------
    def read_item(self, item_id: str) -> MemoryItemRecord | None:
        """The item with its keys and sources, or None. No scope or lifecycle filter: the Host applies those.

        Raises:
            MemoryValidationError: ``item_id`` breaks the identifier rules.
        """
        item_id = normalize_identifier(item_id, "item_id")
        with self._read() as db:
            return self._records(db, [item_id]).get(item_id)

    def search_by_keys(
        self,
        terms: Sequence[str],
        match: str = "exact",
        *,
        workspace_key: str | None = None,
        include_archived: bool = False,
        limit: int | None = None,
    ) -> list[MemoryItemRecord]:
        """Items whose keys match any of ``terms``, best first.

        See :meth:`search_by_keys_with_matches` for the rules.
        """
        return [record for record, _ in self.search_by_keys_with_matches(
            terms, match, workspace_key=workspace_key, include_archived=include_archived, limit=limit
        )]  # fmt: skip

    def search_by_keys_with_matches(
        self,
        terms: Sequence[str],
        match: str = "exact",
        *,
        workspace_key: str | None = None,
        include_archived: bool = False,
        limit: int | None = None,
    ) -> list[tuple[MemoryItemRecord, tuple[str, ...]]]:
        """Items whose keys match any of ``terms``, each with its matching normalized keys.

        Terms (1..32, counted before de-duplication) are normalized like keys,
        de-duplicated and sorted. ``exact``: key equals a term; ``prefix``: key
        starts with a term. Without ``workspace_key`` only global items are
        searched; with one, global items plus that workspace's (case-sensitive).
        Archived items are left out unless ``include_archived``. Ranked by the
        number of distinct terms matched (desc), ``updated_at`` (desc), item id.

        Args:
            limit: 1..100, default 20.

        Raises:
            MemoryValidationError: With the product's messages, e.g.
                ``"Memory key search accepts at most 32 terms"``.
        """
        if match not in ("exact", "prefix"):
            raise MemoryValidationError("Memory key match must be exact or prefix")
        if isinstance(terms, (str, bytes)) or not isinstance(terms, Sequence) or len(terms) == 0:
            raise MemoryValidationError("Memory key search requires at least one term")
        if len(terms) > MAX_SEARCH_TERMS:
            raise MemoryValidationError(f"Memory key search accepts at most {MAX_SEARCH_TERMS} terms")
        if type(include_archived) is not bool:
            raise MemoryValidationError("Memory key include_archived must be a boolean")
        unique = sorted({normalize_search_term(t, f"terms[{i}]") for i, t in enumerate(terms)})
        if workspace_key is not None:
            workspace_key = normalize_identifier(workspace_key, "workspace_key")
        limit = DEFAULT_SEARCH_LIMIT if limit is None else limit
        if type(limit) is not int or not 1 <= limit <= MAX_SEARCH_RESULTS:
            raise MemoryValidationError(f"Memory key search limit must be between 1 and {MAX_SEARCH_RESULTS}")
        sql, params = _search_query(unique, match == "prefix", workspace_key, include_archived, limit)
        with self._read() as db:
            ids = list(dict.fromkeys(row[0] for row in db.execute(sql, params)))[:limit]
            records = self._records(db, ids)
        if match == "prefix":
            prefixes = tuple(unique)
            matches = lambda key: key.startswith(prefixes)  # noqa: E731
        else:
            wanted = frozenset(unique)
            matches = wanted.__contains__
        return [
            (record, tuple(k.normalized_key for k in record.keys if matches(k.normalized_key)))
            for record in (records[i] for i in ids)
        ]

    def _records(self, db: sqlite3.Connection, item_ids: list[str]) -> dict[str, MemoryItemRecord]:
        """Full records of ``item_ids`` (at most a few hundred) that exist."""
        if not item_ids:
            return {}
        marks = _placeholders(len(item_ids))
        items = [_row_to_item(row) for row in db.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memory_item WHERE item_id IN ({marks})", item_ids
        )]  # fmt: skip
        keys: dict[str, list[MemoryItemKey]] = {}
        for item_id, key, key_type, key_origin, normalized in db.execute(
            "SELECT item_id, key, key_type, key_origin, normalized_key FROM memory_item_key "
            f"WHERE item_id IN ({marks}) ORDER BY item_id, normalized_key",
            item_ids,
        ):
            keys.setdefault(item_id, []).append(
                MemoryItemKey(key, _KEY_TYPES[key_type], _KEY_ORIGINS[key_origin], normalized)
            )
        sources: dict[str, list[MemoryItemSource]] = {}
        for item_id, session_id, run_id, turn_id, event_id in db.execute(
            "SELECT item_id, session_id, run_id, turn_id, event_id FROM memory_item_source "
            f"WHERE item_id IN ({marks}) ORDER BY item_id, position",
            item_ids,
        ):
            sources.setdefault(item_id, []).append(MemoryItemSource(session_id, run_id, turn_id, event_id))
        return {
            item.item_id: MemoryItemRecord(item, tuple(keys.get(item.item_id, ())), tuple(sources.get(item.item_id, ())))
            for item in items
        }


def _term_condition(term: str, prefix: bool) -> tuple[str, list[str]]:
    if not prefix:
        return "normalized_key = ?", [term]
    upper = prefix_upper_bound(term)
    if upper is None:
        return "normalized_key >= ?", [term]
    return "normalized_key >= ? AND normalized_key < ?", [term, upper]


def _search_query(
    terms: list[str], prefix: bool, workspace_key: str | None, include_archived: bool, limit: int
) -> tuple[str, list[Any]]:
    """SQL returning the ranked item ids; every term is one range of the covering key index."""
    filters = "" if include_archived else " AND archived = 0"
    filters += " AND scope_key IS NULL" if workspace_key is None else " AND (scope_key IS NULL OR scope_key = ?)"
    scope_params: list[Any] = [] if workspace_key is None else [workspace_key]
    if len(terms) == 1:
        # One term: every matching item matched it once, so rank by recency straight
        # from the index range. A prefix may match several keys of one item; instead
        # of a DISTINCT pass (a temporary B-tree over every match) take enough rows
        # for ``limit`` distinct items (an item has at most 32 keys, and its rows are
        # adjacent in this order) and let the caller drop repeats.
        condition, bounds = _term_condition(terms[0], prefix)
        sql = (
            f"SELECT item_id, updated_at FROM memory_item_key WHERE {condition}{filters} "
            "ORDER BY updated_at DESC, item_id LIMIT ?"
        )
        return sql, [*bounds, *scope_params, limit * MAX_KEYS_PER_ITEM if prefix else limit]
    selects: list[str] = []
    params: list[Any] = []
    for index, term in enumerate(terms):
        condition, bounds = _term_condition(term, prefix)
        selects.append(f"SELECT item_id, {index} AS term, updated_at FROM memory_item_key WHERE {condition}{filters}")
        params += bounds + scope_params
    sql = (
        f"SELECT item_id, COUNT(DISTINCT term) AS matched, MAX(updated_at) AS updated "
        f"FROM ({' UNION ALL '.join(selects)}) "
        "GROUP BY item_id ORDER BY matched DESC, updated DESC, item_id LIMIT ?"
    )
    return sql, [*params, limit]
