"""What a write of the memory store keeps: every field an update or a lifecycle change leaves or sets, read back.

The store's semantics (``/work/shared/design/memory-semantics.md``): an update changes only what it names and keeps
the rest (scope, classification, times, keys with their type and origin); a write's record is what a later read
returns; items written together without ``now`` share one reading; a duplicate id is named whichever of a large
batch it is. Each test here is the user-facing bug a mutant of ``memory_tools/store.py`` or ``store_database.py``
would cause (docs/mutation-testing.md, "Issue 50, part 6").
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterator

import pytest

from memory_tools import (
    ItemInput,
    KeyInput,
    Kind,
    LifecycleState,
    MemoryConflictError,
    MemoryItemSource,
    MemoryItemStore,
    MemoryStoreError,
    MemoryValidationError,
)
from memory_tools.model import KeyOrigin, KeyType, Origin, ScopeType, StatementType, TemporalType
from tests.memory_tools.conftest import item, source

SOURCE = source(1)


@pytest.fixture
def store() -> Iterator[MemoryItemStore]:
    """An empty in-memory store, closed after the test."""
    with MemoryItemStore(":memory:") as empty:
        yield empty


def _item(item_id: str, *keys: str, now: int | None = 100) -> ItemInput:
    """An item with these keys at ``now`` (None: the store reads the clock)."""
    return item(item_id, f"content of {item_id}", keys, now=now)  # type: ignore[arg-type]


def _planned_item(item_id: str = "a", workspace: str | None = "ws-a") -> ItemInput:
    """An item whose every field differs from ItemInput's defaults: a dropped field would show."""
    return ItemInput(
        content="Dentist appointment", kind=Kind.CONTEXT, keys=(KeyInput("Dentist", KeyType.CODE, KeyOrigin.USER),),
        sources=(SOURCE,), statement_type=StatementType.PLAN, temporal_type=TemporalType.POINT,
        scope_type=ScopeType.WORKSPACE if workspace else ScopeType.GLOBAL, scope_key=workspace,
        event_started_at=1_000, event_ended_at=2_000, observed_at=50, origin=Origin.USER_REQUESTED,
        item_id=item_id, now=100,
    )


def test_create_stores_the_event_times_it_was_given(store: MemoryItemStore) -> None:
    created = store.create(_planned_item())
    assert (created.item.event_started_at, created.item.event_ended_at) == (1_000, 2_000)
    assert store.read_item("a") == created


def test_an_update_of_the_content_keeps_every_other_field_and_the_workspace(store: MemoryItemStore) -> None:
    """Changing one field must not reset the others to defaults, nor move a workspace item out of its workspace."""
    created = store.create(_planned_item())
    updated = store.update("a", content="Dentist moved to Friday", now=300)
    item = updated.item
    assert item.content == "Dentist moved to Friday"
    assert item.content_hash == hashlib.sha256(b"Dentist moved to Friday").hexdigest()
    assert (item.kind, item.statement_type, item.temporal_type, item.origin) == (
        Kind.CONTEXT, StatementType.PLAN, TemporalType.POINT, Origin.USER_REQUESTED)
    assert (item.event_started_at, item.event_ended_at, item.observed_at) == (1_000, 2_000, 50)
    assert (item.scope_type, item.scope_key) == (ScopeType.WORKSPACE, "ws-a")
    assert updated.keys == created.keys and updated.keys[0].key_origin is KeyOrigin.USER
    assert updated.sources == created.sources
    assert store.read_item("a") == updated
    assert [r.item.item_id for r in store.search_by_keys(["dentist"], workspace_key="ws-a")] == ["a"]
    assert store.search_by_keys(["dentist"], workspace_key="ws-b") == []


def test_an_update_sets_every_field_it_names(store: MemoryItemStore) -> None:
    store.create(_planned_item(workspace=None))
    updated = store.update(
        "a", content="Likes green tea", kind=Kind.PREFERENCE, statement_type=StatementType.FACT,
        temporal_type=TemporalType.INTERVAL, event_started_at=10, event_ended_at=20, observed_at=30,
        origin=Origin.AGENT_EXTRACTED, now=300,
    )
    item = updated.item
    assert (item.content, item.kind, item.statement_type, item.temporal_type, item.origin) == (
        "Likes green tea", Kind.PREFERENCE, StatementType.FACT, TemporalType.INTERVAL, Origin.AGENT_EXTRACTED)
    assert (item.event_started_at, item.event_ended_at, item.observed_at) == (10, 20, 30)
    assert item.content_hash == hashlib.sha256(b"Likes green tea").hexdigest()
    assert store.read_item("a") == updated


def test_an_update_without_observed_at_time_is_observed_at_its_now(store: MemoryItemStore) -> None:
    store.create(_item("a", "k"))
    assert store.update("a", content="new", observed_at=None, now=300).item.observed_at == 300


def test_an_update_moves_updated_at_forward_and_the_item_ranks_as_the_newest(store: MemoryItemStore) -> None:
    store.create(_item("a", "k", now=100))
    store.create(_item("b", "k", now=500))
    assert store.update("a", content="newer", now=900).item.updated_at == 900
    assert store.read_item("a").item.updated_at == 900  # type: ignore[union-attr]
    assert [r.item.item_id for r in store.search_by_keys(["k"])] == ["a", "b"]


def test_an_update_accepts_keys_and_sources_from_any_iterable(store: MemoryItemStore) -> None:
    store.create(_item("a", "old"))
    source = MemoryItemSource("s2", "r2", "t2", "e2")
    updated = store.update("a", keys=(KeyInput(k) for k in ["new"]), sources=iter([source]), now=200)
    assert [k.normalized_key for k in updated.keys] == ["new"] and updated.sources == (source,)
    assert store.read_item("a") == updated


def test_a_re_keyed_item_keeps_its_workspace_and_an_archived_one_stays_out_of_search(store: MemoryItemStore) -> None:
    """New key rows carry the item's scope and state: a new key must not open it to another workspace or bring a
    forgotten (archived) item back into search."""
    store.create(_planned_item("mine", workspace="ws-a"))
    store.create(_planned_item("gone", workspace=None))
    store.archive("gone", now=200)
    store.update("mine", keys=[KeyInput("orthodontist")], now=300)
    store.update("gone", keys=[KeyInput("orthodontist")], now=300)
    assert [r.item.item_id for r in store.search_by_keys(["orthodontist"], workspace_key="ws-a")] == ["mine"]
    assert store.search_by_keys(["orthodontist"], workspace_key="ws-b") == []
    assert [r.item.item_id for r in store.search_by_keys(["orthodontist"], include_archived=True)] == ["gone"]


@pytest.mark.parametrize("change", ["archive", "restore"])
def test_a_lifecycle_change_returns_what_a_read_returns(store: MemoryItemStore, change: str) -> None:
    """The returned record carries the new state with the item's keys and sources, as stored."""
    store.create(_planned_item(workspace=None))
    record = store.archive("a", now=200)
    if change == "restore":
        record = store.restore("a", now=300)
    expected = LifecycleState.ARCHIVED if change == "archive" else LifecycleState.ACTIVE
    assert record.item.lifecycle_state is expected
    assert record.keys and record.sources
    assert store.read_item("a") == record


def test_items_written_together_without_now_share_one_reading_of_the_clock(
    store: MemoryItemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = itertools.count(1_000)
    monkeypatch.setattr("memory_tools.store.wall_clock_ms", lambda: next(ticks))
    monkeypatch.setattr("memory_tools.item_validation.wall_clock_ms", lambda: next(ticks))
    records = store.bulk_create([_item(f"i{n}", "k", now=None) for n in range(3)])
    assert {(r.item.created_at, r.item.updated_at) for r in records} == {(1_000, 1_000)}


@pytest.mark.parametrize("stored", ["i0500", "i1199"])
def test_a_large_batch_names_the_id_already_stored_wherever_it_sorts(store: MemoryItemStore, stored: str) -> None:
    """The duplicate is looked up in chunks of 500 ids: one at a chunk's start or in the last chunk is still named."""
    store.create(_item(stored, "k"))
    with pytest.raises(MemoryConflictError, match=f"^item_id '{stored}' already exists in the memory store$"):
        store.bulk_create([_item(f"i{n:04}", "k") for n in range(1_200)])
    assert store.read_item("i0000") is None


def test_a_write_the_database_refuses_for_another_reason_says_so_and_stores_nothing(store: MemoryItemStore) -> None:
    """A constraint that is not a duplicate id (here a trigger, as a foreign database might have) is not called one."""
    store._conn().execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON memory_item BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(MemoryStoreError, match=r"^memory store rejected the write \(integrity error\)$"):
        store.create(_item("a", "k"))
    assert store.read_item("a") is None


def test_a_bad_item_id_to_read_is_refused_naming_the_field(store: MemoryItemStore) -> None:
    with pytest.raises(MemoryValidationError, match="^item_id "):
        store.read_item(" a")


def test_a_search_with_matches_leaves_archived_items_out_unless_asked(store: MemoryItemStore) -> None:
    store.create(_item("a", "k"))
    store.archive("a", now=200)
    assert store.search_by_keys_with_matches(["k"]) == []
    assert [r.item.item_id for r, _ in store.search_by_keys_with_matches(["k"], include_archived=True)] == ["a"]


def test_a_copy_from_a_snapshot_lives_in_memory_and_writes_no_file(
    store: MemoryItemStore, tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create(_item("a", "k"))
    image = store.snapshot()
    monkeypatch.chdir(tmp_path)
    with MemoryItemStore.from_snapshot(image) as copy:
        assert copy.path == ":memory:" and copy.read_item("a") == store.read_item("a")
    assert os.listdir(tmp_path) == []


def test_the_update_signature_a_reader_sees_names_the_unset_default() -> None:
    """``help(store.update)`` shows which arguments are left as stored: the sentinel reads ``UNSET``."""
    import inspect

    assert "content: 'str' = UNSET" in str(inspect.signature(MemoryItemStore.update))


# -- the database file and its key rows (memory_tools/_schema.py) -----------------------------------------------------
def test_a_schema_version_1_file_gets_the_recency_index_and_keeps_its_items(tmp_path) -> None:  # noqa: ANN001
    """A store written before the recency index opens as version 2 with every item, not refused as foreign."""
    import sqlite3

    path = tmp_path / "v1.db"
    with MemoryItemStore(path) as old:
        old.create(item("a", "Postgres 15", ["database"], sources=[SOURCE]))
    with sqlite3.connect(path) as raw:
        raw.execute("DROP INDEX memory_item_key_recent")
        raw.execute("PRAGMA user_version = 1")
    with MemoryItemStore(path) as upgraded:
        assert upgraded.schema_version() == 2 and upgraded.read_item("a").item.content == "Postgres 15"
        with upgraded._read() as db:
            assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_item_key_recent'").fetchone()


def test_a_foreign_database_is_refused_naming_its_file(tmp_path) -> None:  # noqa: ANN001
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE t (x)")
    with pytest.raises(MemoryStoreError, match="other.db' is not a memory store"):
        MemoryItemStore(path)


def test_a_store_opened_in_one_thread_answers_in_another() -> None:
    """A host serves tool calls from worker threads: the store's connection must not be tied to its opener."""
    from concurrent.futures import ThreadPoolExecutor

    with MemoryItemStore() as opened, ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(opened.create, item("a", "Postgres 15", ["database"], sources=[SOURCE])).result()
        assert pool.submit(opened.read_item, "a").result().item.content == "Postgres 15"


def test_the_key_indexes_are_rebuilt_only_for_a_large_batch_into_an_empty_store(store: MemoryItemStore) -> None:
    """Dropping the indexes of a store that has rows would rebuild all of them for each batch (a seeding stall)."""
    from memory_tools._schema import DEFERRED_INDEX_ROWS

    def drops(into: MemoryItemStore, batch: list[ItemInput]) -> int:
        seen: list[str] = []
        into._conn().set_trace_callback(seen.append)
        into.bulk_create(batch)
        into._conn().set_trace_callback(None)
        return sum(statement.startswith("DROP INDEX") for statement in seen)

    def batch(prefix: str, count: int) -> list[ItemInput]:
        return [item(f"{prefix}{n}", "x", ["a", "b", "c", "d"], sources=[SOURCE]) for n in range(count)]

    assert drops(store, batch("i", DEFERRED_INDEX_ROWS // 4)) == 2  # exactly DEFERRED_INDEX_ROWS key rows: deferred
    assert drops(store, batch("j", DEFERRED_INDEX_ROWS // 4)) == 0  # as many into a store that has rows: row by row
    with MemoryItemStore() as empty:
        assert drops(empty, batch("small", 1)) == 0  # into an empty store, too few rows to defer
