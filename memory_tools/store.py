"""The SQLite memory item store: create, update, archive/restore, read and key search.

Behaviour follows ``../shared/design/memory-semantics.md``; the value rules live
in :mod:`memory_tools.normalize`, the schema in :mod:`memory_tools._schema`, the
search plans in :mod:`memory_tools._search`, the connection, lock and transactions in
:mod:`memory_tools.store_database`.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, cast

from memory_tools import _schema
from memory_tools._schema import SCHEMA_VERSION, item_row, key_rows, placeholders, source_rows
from memory_tools._search import (
    DEFAULT_SEARCH_LIMIT,
    MAX_SEARCH_RESULTS,
    MAX_SEARCH_TERMS,
    check_key_search,
    prefix_upper_bound,
    ranked_item_ids,
)
from memory_tools.item_validation import NormalizedItem, validate_item_input
from memory_tools.model import (
    ItemInput,
    KeyInput,
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
    StatementType,
    TemporalType,
)
from memory_tools.normalize import check_time, normalize_identifier, wall_clock_ms
from memory_tools.store_database import StoreDatabase

__all__ = [
    "DEFAULT_SEARCH_LIMIT",
    "MAX_SEARCH_RESULTS",
    "MAX_SEARCH_TERMS",
    "SCHEMA_VERSION",
    "MemoryItemStore",
    "prefix_upper_bound",
]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()


def _as_sequence(value: object) -> object:
    """Materialize a generic iterable of keys/sources; leave anything else for validation to reject."""
    if isinstance(value, (list, tuple, str, bytes)):
        return value
    try:
        return tuple(cast("Iterable[object]", value))  # anything tuple() refuses is left for validation
    except TypeError:
        return value


class MemoryItemStore(StoreDatabase):
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
                db.executemany(_schema.INSERT_ITEM, [item_row(r.item) for r in records])
                _schema.insert_key_rows(db, [row for r in records for row in key_rows(r.item, r.keys)])
                db.executemany(
                    _schema.INSERT_SOURCE, [row for r in records for row in source_rows(r.item.item_id, r.sources)]
                )
        except sqlite3.IntegrityError as error:
            raise self._duplicate_error(sorted(seen)) from error
        return records

    def _duplicate_error(self, item_ids: list[str]) -> MemoryStoreError:
        with self._read() as db:
            for start in range(0, len(item_ids), 500):
                chunk = item_ids[start : start + 500]
                row = db.execute(
                    f"SELECT item_id FROM memory_item WHERE item_id IN ({placeholders(len(chunk))}) LIMIT 1", chunk
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
        with self._change(item_id, now) as (db, current, now):
            old = current.item
            item_id = old.item_id

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
            db.execute(_schema.UPDATE_ITEM, (*item_row(new), item_id))
            if n.keys != current.keys:
                db.execute("DELETE FROM memory_item_key WHERE item_id = ?", (item_id,))
                db.executemany(_schema.INSERT_KEY, key_rows(new, n.keys))
            else:
                db.execute("UPDATE memory_item_key SET updated_at = ? WHERE item_id = ?", (new.updated_at, item_id))
            if n.sources != current.sources:
                db.execute("DELETE FROM memory_item_source WHERE item_id = ?", (item_id,))
                db.executemany(_schema.INSERT_SOURCE, source_rows(item_id, n.sources))
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
        with self._change(item_id, now) as (db, current, now):
            old = current.item
            item_id = old.item_id
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

    @contextmanager
    def _change(self, item_id: str, now: int | None) -> Iterator[tuple[sqlite3.Connection, MemoryItemRecord, int]]:
        """A write transaction on one stored item: yields the connection, its current record and ``now``.

        Raises:
            MemoryValidationError: ``item_id`` or ``now`` breaks a rule.
            MemoryNotFoundError: No item has this id.
        """
        item_id = normalize_identifier(item_id, "item_id")
        checked = check_time(now, "now", optional=True)
        at = wall_clock_ms() if checked is None else checked
        with self._write() as db:
            current = self._records(db, [item_id]).get(item_id)
            if current is None:
                raise MemoryNotFoundError(f"memory item {item_id!r} not found")
            yield db, current, at

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
        search = check_key_search(terms, match, workspace_key, include_archived, limit)
        with self._read() as db:
            ids = ranked_item_ids(db, search, self._key_index)
            records = self._records(db, ids)
        return [(records[i], search.matched_keys(records[i])) for i in ids]

    def _records(self, db: sqlite3.Connection, item_ids: list[str]) -> dict[str, MemoryItemRecord]:
        """Full records of ``item_ids`` (at most a few hundred) that exist."""
        if not item_ids:
            return {}
        marks = placeholders(len(item_ids))
        items = [_schema.row_to_item(row) for row in db.execute(
            f"SELECT {_schema.ITEM_COLUMNS} FROM memory_item WHERE item_id IN ({marks})", item_ids
        )]  # fmt: skip
        keys: dict[str, list[MemoryItemKey]] = {}
        for item_id, key, key_type, key_origin, normalized in db.execute(
            "SELECT item_id, key, key_type, key_origin, normalized_key FROM memory_item_key "
            f"WHERE item_id IN ({marks}) ORDER BY item_id, normalized_key",
            item_ids,
        ):
            keys.setdefault(item_id, []).append(
                _schema.row_to_key(key, key_type, key_origin, normalized)
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
